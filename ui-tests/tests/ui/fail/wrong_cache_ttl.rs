use gonk_tools::prelude::*;

/// Export every note.
#[tool(cache_ttl = "five minutes")]
async fn notes_export() {}

/// Reindex notes.
#[tool(cache_ttl = 300)]
async fn notes_reindex() {}

/// List notes.
#[tool(cache_ttl)]
async fn notes_list() {}

fn main() {}
