use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    pub text: String,
}

/// Search notes.
#[tool]
pub async fn notes_search(input: Query) -> String {
    input.text
}

toolset! {
    pub struct Notes { NotesSearch }
}

fn main() {}
