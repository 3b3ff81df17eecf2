//! A tool set that is only served: its inputs derive `Deserialize` and
//! `JsonSchema`, not `Serialize`, and nothing calls its client.
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    pub text: String,
}

/// Search.
#[tool]
pub async fn search(input: Query) -> Vec<String> { vec![input.text] }

/// Count.
#[tool]
pub async fn count(input: Query) -> usize { input.text.len() }

toolset! {
    /// Served, never called by type.
    pub struct Served { Search, Count }
}

/// A receiver whose methods are tools, equally server-only.
pub struct Index;

#[tools]
impl Index {
    /// Look up.
    #[tool(name = "index.lookup")]
    pub async fn lookup(&self, input: Query) -> bool { !input.text.is_empty() }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    Served::register_tools(&registry).unwrap();
    std::sync::Arc::new(Index).register_tools(&registry).unwrap();
    assert_eq!(Index::TOOL_NAMES, ["index.lookup"]);
    assert_eq!(Served::TOOL_NAMES, ["search", "count"]);
    let events = registry.invoke("count", json!({"text": "abc"}), ToolContext::new());
    assert_eq!(collect_tool_outcome(events, |_| {}).await.unwrap().data, 3);
}
