use gonk_tools::prelude::*;

/// Search notes.
#[tool(name = "notes.search")]
pub async fn notes_search() {}

/// Also searches notes.
#[tool(name = "notes.search", type_name = NotesSearchToo)]
pub async fn notes_search_too() {}

toolset! {
    pub struct Notes { NotesSearch, notes_search_too = NotesSearchToo }
}

fn main() {}
