use gonk_tools::prelude::*;

/// Search notes.
#[tool(name = "notes.search")]
pub async fn search() {}

toolset! {
    pub struct Notes { Search }
}

fn main() {}
