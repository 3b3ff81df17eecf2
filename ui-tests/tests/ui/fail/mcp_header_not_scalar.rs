use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    pub tags: Vec<String>,
    pub score: f64,
    pub filter: Option<Vec<u8>>,
    pub region: String,
}

/// Search notes.
#[tool(mcp(header(tags = "Tags", score = "Score", filter = "Filter", region = "Region")))]
async fn notes_search(input: Query) -> String {
    input.region
}

fn main() {}
