use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    pub a: String,
    pub b: String,
    pub c: String,
    pub d: String,
    pub e: u32,
}

/// Search notes.
#[tool(mcp(header(a = "Home Region", b = "", c = "Tenant:Id", d = "Mcp-Param-Region", e = 7)))]
async fn notes_search(input: Query) -> String {
    input.a
}

/// List notes.
#[tool(mcp(header = "Region"))]
async fn notes_list(input: Query) -> String {
    input.a
}

fn main() {}
