use gonk_tools::prelude::*;

/// Write a note.
#[tool(approval = "writ")]
async fn notes_write() {}

fn main() {}
