use gonk_tools::prelude::*;

#[tool(descripton = "Search notes.")]
async fn notes_search() {}

fn main() {}
