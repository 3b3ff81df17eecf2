use gonk_tools::prelude::*;

/// Create a note.
#[tool(scopes("notes:read", notes_write, 7))]
async fn notes_create() {}

fn main() {}
