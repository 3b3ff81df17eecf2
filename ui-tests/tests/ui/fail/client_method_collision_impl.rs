use gonk_tools::prelude::*;

pub struct Notes;

#[tools]
impl Notes {
    /// Search notes.
    #[tool(name = "notes.search")]
    pub async fn search(&self) {}

    /// Search notes, the other way.
    #[tool(name = "notes-search")]
    pub async fn search_other(&self) {}
}

fn main() {}
