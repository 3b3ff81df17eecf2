use gonk_tools::prelude::*;

/// Search notes.
#[tool(mcp(readonly, idempotent))]
async fn notes_search() {}

fn main() {}
