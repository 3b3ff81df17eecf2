use gonk_tools::prelude::*;

/// A note.
#[resource("notes://{}")]
async fn note() -> String {
    String::new()
}

fn main() {}
