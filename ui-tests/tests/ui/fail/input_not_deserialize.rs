use gonk_tools::prelude::*;

#[derive(JsonSchema)]
pub struct Query {
    pub text: String,
}

/// Search notes.
#[tool]
async fn notes_search(input: Query) -> String {
    input.text
}

fn main() {}
