use gonk_tools::prelude::*;

#[derive(Serialize)]
pub struct Hits {
    pub titles: Vec<String>,
}

/// Search notes.
#[tool]
async fn notes_search() -> Hits {
    Hits { titles: Vec::new() }
}

fn main() {}
