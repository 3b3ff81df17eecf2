use gonk_tools::prelude::*;

/// Search notes.
#[tool(name = "notes search")]
async fn notes_search() {}

fn main() {}
