use gonk_tools::prelude::*;

/// Search notes.
#[tool(cost = "cheap")]
async fn notes_search() {}

fn main() {}
