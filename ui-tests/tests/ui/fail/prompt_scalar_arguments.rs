use gonk_tools::prelude::*;

/// Summarize a note.
#[prompt]
async fn summarize(id: String) -> String {
    id
}

fn main() {}
