use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    pub region: String,
    pub zone: String,
}

/// Search notes.
#[tool(mcp(header(region = "Region", zone = "REGION")))]
async fn notes_search(input: Query) -> String {
    input.region
}

/// List notes.
#[tool(mcp(header(region = "Region", region = "Zone")))]
async fn notes_list(input: Query) -> String {
    input.zone
}

fn main() {}
