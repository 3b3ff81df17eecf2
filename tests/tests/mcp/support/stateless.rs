//! Requests of the stateless era (`2026-07-28`) by `reqwest`, and the
//! messages of an SSE answer.

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{json, Value};

/// Posts a stateless (`2026-07-28`) request: the era's `_meta` joined to
/// `params`' own, its headers. A client of its own per request, so that
/// dropping the request closes its connection.
pub fn post_stateless(
    url: &str,
    id: u64,
    method: &str,
    mut params: Value,
) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> {
    let meta = params["_meta"].as_object().cloned().unwrap_or_default();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    params["_meta"].as_object_mut().unwrap().extend(meta);
    let mut request = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .post(url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    // `Mcp-Name`: the tool or prompt's name, or the resource's URI.
    if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
        request = request.header("mcp-name", name);
    }
    request
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
        .send()
}

/// The JSON-RPC messages of an SSE answer, in order.
pub fn sse_messages(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}")))
        .collect()
}
