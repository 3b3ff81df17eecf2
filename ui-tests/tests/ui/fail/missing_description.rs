use gonk_tools::prelude::*;

#[tool(name = "notes.search")]
async fn notes_search() {}

fn main() {}
