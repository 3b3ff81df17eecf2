use gonk_tools::prelude::*;

/// Search notes.
#[tool(name = "notes.search")]
pub async fn notes_search() {}

/// Search notes, the other way.
#[tool(name = "notes-search")]
pub async fn notes_search2() {}

toolset! {
    pub struct Notes { NotesSearch, NotesSearch2 }
}

fn main() {}
