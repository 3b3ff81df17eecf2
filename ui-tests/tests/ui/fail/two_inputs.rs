use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    pub text: String,
}

/// Search notes.
#[tool]
async fn notes_search(query: Query, limit: u32) -> String {
    let _ = limit;
    query.text
}

fn main() {}
