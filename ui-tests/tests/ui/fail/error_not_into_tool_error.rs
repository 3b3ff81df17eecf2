use gonk_tools::prelude::*;

pub struct NotFound;

/// Find a note.
#[tool]
async fn notes_find() -> Result<String, NotFound> {
    Err(NotFound)
}

fn main() {}
