use gonk_tools::prelude::*;

/// A note.
#[resource("notes://{id")]
async fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
