use gonk_tools::prelude::*;

/// Create a note.
#[tool(scopes = "notes:write")]
async fn notes_create() {}

fn main() {}
