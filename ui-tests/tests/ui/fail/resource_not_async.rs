use gonk_tools::prelude::*;

/// A note.
#[resource("notes://{id}")]
fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
