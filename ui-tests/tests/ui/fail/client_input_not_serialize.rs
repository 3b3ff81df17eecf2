use gonk_tools::client::InProcess;
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

async fn search(client: NotesClient<InProcess>) {
    let _ = client.notes_search(Query { text: "a".into() }).await;
}

fn main() {
    let _ = search;
}
