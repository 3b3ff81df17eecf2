use gonk_tools::prelude::*;

/// Reindex every note (slow).
#[tool(detached = "yes")]
async fn notes_reindex() {}

/// Export every note (slow).
#[tool(detached, detached)]
async fn notes_export() {}

fn main() {}
