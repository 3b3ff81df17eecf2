use gonk_tools::prelude::*;

/// A note.
#[resource("notes://{id}", mimetype = "text/markdown")]
async fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
