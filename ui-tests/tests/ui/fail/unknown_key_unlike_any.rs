use gonk_tools::prelude::*;

/// Search notes.
#[tool(timeout = 30)]
async fn notes_search() {}

fn main() {}
