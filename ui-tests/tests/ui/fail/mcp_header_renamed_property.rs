use gonk_tools::prelude::*;

/// No input, so no property to send.
#[tool(mcp(header("region-code" = "Region")))]
async fn ping() -> String {
    "pong".to_owned()
}

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    #[serde(rename = "region-code")]
    pub region: String,
}

/// The property twice.
#[tool(mcp(header("region-code" = "Region", "region-code" = "Zone")))]
async fn search(input: Query) -> String {
    input.region
}

fn main() {}
