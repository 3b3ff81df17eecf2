use gonk_tools::prelude::*;

/// Search notes.
#[tool(retries = 3)]
async fn notes_search() {}

fn main() {}
