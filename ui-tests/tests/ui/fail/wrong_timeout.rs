use gonk_tools::prelude::*;

/// Export every note.
#[tool(timeout = "30 seconds please")]
async fn notes_export() {}

/// Search notes.
#[tool(timeout = "0s")]
async fn notes_search() {}

/// Reindex notes.
#[tool(timeout = 30)]
async fn notes_reindex() {}

fn main() {}
