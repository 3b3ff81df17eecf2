use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    pub region: String,
}

/// Search notes.
#[tool(mcp(header(regoin = "Region")))]
async fn notes_search(input: Query) -> String {
    input.region
}

/// List notes.
#[tool(mcp(header(region = "Region")))]
async fn notes_list() {}

fn main() {}
