//! MCP parameter headers and the listing cache lifetime.
use std::time::Duration;

use gonk_tools::definition::McpHeaderValue;
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Zone {
    North,
    South,
}

impl McpHeaderValue for Zone {}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LookupArgs {
    pub region_code: String,
    pub tenant: Option<u64>,
    pub dry_run: bool,
    pub initial: char,
    pub zone: Zone,
    pub r#type: String,
    pub query: Vec<String>,
}

/// Look records up.
#[tool(
    mcp(read_only, header(region_code = "Region", tenant = "Tenant", dry_run = "Dry-Run", initial = "Initial", zone = "Zone", r#type = "Type")),
    cache_ttl = "5m"
)]
async fn lookup(input: LookupArgs) -> Vec<String> {
    input.query
}

/// Never kept.
#[tool(cache_ttl = "0s")]
async fn fresh() {}

pub struct Records;

#[tools]
impl Records {
    /// Look a record up by region.
    #[tool(mcp(header(region_code = "Region")), cache_ttl = "1m")]
    async fn by_region(&self, input: LookupArgs) -> String {
        input.region_code
    }
}

fn main() {
    let def = Lookup::definition();
    let properties = &def.input_schema["properties"];
    assert_eq!(properties["regionCode"]["x-mcp-header"], "Region");
    assert_eq!(properties["tenant"]["x-mcp-header"], "Tenant");
    assert_eq!(properties["dryRun"]["x-mcp-header"], "Dry-Run");
    assert_eq!(properties["zone"]["x-mcp-header"], "Zone");
    assert_eq!(properties["type"]["x-mcp-header"], "Type");
    assert!(properties["query"].get("x-mcp-header").is_none());
    assert_eq!(def.mcp_headers.len(), 6);
    assert_eq!(def.mcp_headers[0].property, "regionCode");
    assert_eq!(def.hints.mcp.annotations.read_only, Some(true));
    assert_eq!(def.cache_ttl, Some(Duration::from_secs(300)));
    assert_eq!(Fresh::definition().cache_ttl, Some(Duration::ZERO));

    let registry = ToolRegistry::new();
    registry.register(def).unwrap();
    registry.register(Fresh::definition()).unwrap();
    std::sync::Arc::new(Records).register_tools(&registry).unwrap();
    let by_region = registry.get("by_region").unwrap();
    assert_eq!(by_region.input_schema["properties"]["regionCode"]["x-mcp-header"], "Region");
    assert_eq!(by_region.cache_ttl, Some(Duration::from_secs(60)));
}
