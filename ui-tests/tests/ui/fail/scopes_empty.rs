use gonk_tools::prelude::*;

/// Create a note.
#[tool(scopes())]
async fn notes_create() {}

fn main() {}
