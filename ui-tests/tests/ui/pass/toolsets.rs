//! Tool sets, typed clients and typed composition.
use gonk_tools::client::InProcess;
use gonk_tools::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Query {
    pub text: String,
}

/// Search notes.
#[tool(name = "notes.search")]
pub async fn search(input: Query) -> Vec<String> { vec![input.text] }

/// Count notes: calls `notes.search`.
#[tool(name = "notes.countMatches")]
pub async fn notes_count_matches(input: Query, ctx: ToolContext) -> Result<usize, ToolError> {
    Ok(ctx.call::<Search>(input).await?.len())
}

toolset! {
    /// The notes tools.
    #[toolset(client = Notes)]
    pub struct NotesTools { notes_search = Search, NotesCountMatches }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    NotesTools::register_tools(&registry).unwrap();
    let client = Notes::new(InProcess::new(registry));
    assert_eq!(client.notes_search(Query { text: "a".into() }).await.unwrap(), ["a"]);
    assert_eq!(client.notes_count_matches(Query { text: "a".into() }).await.unwrap(), 1);
    let _transport: &InProcess = client.transport();
}
