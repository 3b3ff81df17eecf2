use gonk_tools::prelude::*;

/// Create a note.
#[tool(scopes("notes:read notes:write", "notes\"write"))]
async fn notes_create() {}

fn main() {}
