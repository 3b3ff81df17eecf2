use gonk_tools::prelude::*;

/// Search notes.
#[tool]
fn notes_search() {}

fn main() {}
