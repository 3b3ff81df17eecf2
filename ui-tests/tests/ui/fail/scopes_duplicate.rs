use gonk_tools::prelude::*;

/// Create a note.
#[tool(scopes("notes:write", "notes:read", "notes:write"))]
async fn notes_create() {}

fn main() {}
