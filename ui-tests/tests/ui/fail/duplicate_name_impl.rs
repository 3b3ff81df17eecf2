use gonk_tools::prelude::*;

pub struct Notes;

#[tools]
impl Notes {
    /// Search notes.
    #[tool(name = "notes.search")]
    pub async fn search(&self) {}

    /// Find notes.
    #[tool(name = "notes.search")]
    pub async fn find(&self) {}
}

fn main() {}
