//! `McpHttpOptions::sessions(false)`: 2025-era clients are served without a
//! session (initialize answered without `Mcp-Session-Id`, every request on
//! its own), and what needs a session is refused plainly.

use std::net::SocketAddr;

use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::prelude::*;
use serde_json::{json, Value};

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("quick")
                .description("Answers at once.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, _ctx: ToolContext| async move { Ok::<_, ToolError>("ok") })
                .build(),
        )
        .unwrap();
    registry
}

async fn post(url: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_client_is_served_without_a_session() {
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry(),
        McpHttpOptions::new(McpServerOptions::new("sessionless", "1.0.0")).sessions(false),
    )
    .await
    .unwrap();
    let url = server.url();
    let init = post(
        &url,
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"t","version":"1"}}}),
    )
    .await;
    assert_eq!(init.status(), 200);
    assert!(init.headers().get("mcp-session-id").is_none());
    let init: Value = init.json().await.unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "sessionless");

    let accepted = post(
        &url,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    )
    .await;
    assert_eq!(accepted.status(), 202);

    let list = post(&url, json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})).await;
    assert_eq!(list.status(), 200);
    assert!(list.headers().get("mcp-session-id").is_none());
    let list: Value = list.json().await.unwrap();
    assert_eq!(list["result"]["tools"][0]["name"], "quick");

    let call = post(
        &url,
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
               "params":{"name":"quick","arguments":{}}}),
    )
    .await;
    assert_eq!(call.status(), 200);
    let call: Value = call.json().await.unwrap();
    assert_eq!(call["result"]["isError"], false);
    assert_eq!(call["result"]["content"][0]["text"], "\"ok\"");

    // No server→client stream and nothing to delete without sessions.
    let client = reqwest::Client::new();
    let get = client
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
    let delete = client
        .delete(&url)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 405);

    // An answer to a server→client request has nothing to go to.
    let answer = post(&url, json!({"jsonrpc":"2.0","id":7,"result":{}})).await;
    let answer: Value = answer.json().await.unwrap();
    assert_eq!(answer["error"]["code"], -32600);
    server.shutdown().await.unwrap();
}

/// The official TypeScript SDK 1.x (2025 only) connects, lists and calls
/// against a sessionless server, holding no session id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_works_without_a_session() {
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry(),
        McpHttpOptions::new(McpServerOptions::new("sessionless", "1.0.0")).sessions(false),
    )
    .await
    .unwrap();
    let url = server.url();
    let output = tokio::task::spawn_blocking(move || {
        crate::support::run_node("ts_sessionless.mjs", &[&url, "quick"])
    })
    .await
    .unwrap();
    let report = gonk_tools_tests::clients::report(&output);
    assert_eq!(report["session_id"], Value::Null, "{report}");
    assert_eq!(report["session_headers"], json!([]), "{report}");
    assert_eq!(report["tools"], json!(["quick"]), "{report}");
    assert_eq!(report["call"]["isError"], false, "{report}");
    assert_eq!(report["call"]["content"][0]["text"], "\"ok\"", "{report}");
    server.shutdown().await.unwrap();
}
