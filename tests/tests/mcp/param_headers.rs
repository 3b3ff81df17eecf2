//! MCP parameter headers (`#[tool(mcp(header(..)))]`) on a real HTTP
//! server in the stateless era (`2026-07-28`): `tools/list` advertises
//! `x-mcp-header` on the renamed property; a raw call whose
//! `Mcp-Param-*` header matches its body (plain or base64) runs, one whose
//! header is missing or different is refused with HTTP 400 before the
//! tool runs; and the crate's own MCP client, which learns the headers
//! from the listing, sends them by itself.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use gonk_tools::adapters::http::HttpServer;
use gonk_tools::adapters::mcp::{
    serve_http, McpClient, McpEra, McpHttpClientOptions, McpHttpOptions, McpServerOptions,
};
use gonk_tools::prelude::*;
use gonk_tools::RegistryError;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;

const VERSION: &str = "2026-07-28";

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LookupArgs {
    /// Where the record lives; gateways route on it.
    pub region_code: String,
    /// The tenant, when the caller has one.
    pub tenant: Option<u32>,
    /// What to look up.
    pub query: String,
}

/// Runs of `lookup`, to prove a refused call never reached it.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Looks a record up in one region.
#[tool(
    approval = "read",
    mcp(header(region_code = "Region", tenant = "Tenant")),
    cache_ttl = "5m"
)]
async fn lookup(input: LookupArgs) -> Value {
    RUNS.fetch_add(1, Ordering::SeqCst);
    json!({ "region": input.region_code, "tenant": input.tenant, "query": input.query })
}

async fn server() -> HttpServer {
    let registry = ToolRegistry::new();
    registry.register(Lookup::definition()).unwrap();
    let options = McpHttpOptions::new(McpServerOptions::new("param-headers", "1.0.0"));
    serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry, options)
        .await
        .unwrap()
}

/// One stateless-era request with the standard headers and `extra`
/// headers; the HTTP status and the JSON-RPC response.
async fn request(
    server: &HttpServer,
    method: &str,
    mut params: Value,
    extra: &[(&str, &str)],
) -> (u16, Value) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "1.0.0" },
    });
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let mut request = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .post(server.url())
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    for (header, value) in extra {
        request = request.header(*header, *value);
    }
    let response = request.body(body.to_string()).send().await.unwrap();
    let status = response.status().as_u16();
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    let message = if sse {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id") == Some(&json!(1)))
            .unwrap_or_else(|| panic!("no response to {method} in {text}"))
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    (status, message)
}

async fn call(server: &HttpServer, arguments: Value, headers: &[(&str, &str)]) -> (u16, Value) {
    request(
        server,
        "tools/call",
        json!({ "name": "lookup", "arguments": arguments }),
        headers,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listing_advertises_the_header_on_the_renamed_property() {
    let server = server().await;
    let (status, listed) = request(&server, "tools/list", json!({}), &[]).await;
    assert_eq!(status, 200, "{listed}");
    let tool = &listed["result"]["tools"][0];
    assert_eq!(tool["name"], "lookup");
    let properties = &tool["inputSchema"]["properties"];
    assert_eq!(properties["regionCode"]["x-mcp-header"], "Region");
    assert_eq!(properties["tenant"]["x-mcp-header"], "Tenant");
    assert!(properties["query"].get("x-mcp-header").is_none());
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_runs_only_when_its_headers_match_its_body() {
    let server = server().await;
    let arguments = json!({ "regionCode": "eu-west", "query": "q" });

    let (status, ok) = call(
        &server,
        arguments.clone(),
        &[("mcp-param-region", "eu-west")],
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    assert_eq!(
        ok["result"]["structuredContent"]["region"], "eu-west",
        "{ok}"
    );

    let (status, ok) = call(
        &server,
        json!({ "regionCode": "eu-west", "tenant": 7, "query": "q" }),
        &[("mcp-param-region", "eu-west"), ("mcp-param-tenant", "7")],
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    assert_eq!(ok["result"]["structuredContent"]["tenant"], 7, "{ok}");

    // Not plain ASCII: the value travels base64-encoded.
    let (status, ok) = call(
        &server,
        json!({ "regionCode": "zürich", "query": "q" }),
        &[("mcp-param-region", "=?base64?esO8cmljaA==?=")],
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    assert_eq!(
        ok["result"]["structuredContent"]["region"], "zürich",
        "{ok}"
    );

    let runs = RUNS.load(Ordering::SeqCst);
    let refused = [
        ("missing", vec![]),
        ("different", vec![("mcp-param-region", "us-east")]),
        (
            "for an absent argument",
            vec![("mcp-param-region", "eu-west"), ("mcp-param-tenant", "7")],
        ),
    ];
    for (why, headers) in refused {
        let (status, refused) = call(&server, arguments.clone(), &headers).await;
        assert_eq!(status, 400, "a {why} header: {refused}");
        assert!(refused.get("result").is_none(), "a {why} header: {refused}");
    }
    assert_eq!(RUNS.load(Ordering::SeqCst), runs, "a refused call ran");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crates_client_sends_the_headers_it_learned() {
    let server = server().await;
    let client = McpClient::connect_http(&server.url(), McpHttpClientOptions::new())
        .await
        .unwrap();
    // The stateless era, where the server checks the headers (the raw
    // test above shows a call without them refused).
    assert_eq!(client.era(), McpEra::Stateless);
    // The listing keeps the tool: a client drops one whose annotations
    // break MCP's rules.
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    let input = json!({ "regionCode": "zürich", "tenant": 3, "query": "q" });
    let outcome = collect_tool_outcome(client.invoke("lookup", input), |_| {})
        .await
        .unwrap();
    assert_eq!(
        outcome.data,
        json!({ "region": "zürich", "tenant": 3, "query": "q" })
    );
    client.close().await.unwrap();
    server.shutdown().await.unwrap();
}

#[test]
fn a_builder_header_on_a_missing_or_unfit_property_is_a_registration_error() {
    #[derive(Deserialize, JsonSchema)]
    struct Input {
        scores: Vec<f64>,
    }
    let tool = |header: &str| {
        ToolDefinition::builder("scores.sum")
            .description("Sums scores.")
            .handler(|input: Input, _ctx| async move {
                Ok::<_, ToolError>(input.scores.iter().sum::<f64>())
            })
            .mcp_header(header, "Scores")
            .build()
    };
    let registry = ToolRegistry::new();
    let unfit = registry.register(tool("scores")).unwrap_err();
    assert!(
        matches!(&unfit, RegistryError::InvalidMcpHeader { name, property, .. } if name == "scores.sum" && property == "scores"),
        "{unfit:?}"
    );
    assert!(
        unfit
            .to_string()
            .contains("`string`, `integer` or `boolean`"),
        "{unfit}"
    );
    let missing = registry.register(tool("score")).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("no top-level property `score`"),
        "{missing}"
    );
    assert!(registry.names().is_empty());
}

#[test]
fn a_listing_lasts_as_long_as_its_shortest_lived_tool() {
    use std::time::Duration;
    let registry = ToolRegistry::builder()
        .default_cache_ttl(Duration::from_secs(60))
        .build();
    let plain = ToolDefinition::builder("plain")
        .description("Plain.")
        .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>(()) })
        .build();
    let lookup = Lookup::definition();
    assert_eq!(registry.cache_ttl(&lookup), Duration::from_secs(300));
    assert_eq!(registry.cache_ttl(&plain), Duration::from_secs(60));
    assert_eq!(
        registry.listing_cache_ttl([&lookup]),
        Duration::from_secs(300)
    );
    assert_eq!(
        registry.listing_cache_ttl([&lookup, &plain]),
        Duration::from_secs(60)
    );
    assert_eq!(
        registry.listing_cache_ttl(std::iter::empty()),
        Duration::from_secs(60)
    );
    let derived = registry.filter(|_| true);
    assert_eq!(derived.default_cache_ttl(), Some(Duration::from_secs(60)));
    let bare = ToolRegistry::new();
    assert_eq!(bare.listing_cache_ttl([&plain]), Duration::ZERO);
    assert_eq!(bare.listing_cache_ttl([&plain, &lookup]), Duration::ZERO);
}
