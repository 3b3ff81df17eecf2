//! `McpHttpOptions::sessions(false)`: 2025-era clients are served without a
//! session (initialize answered without `Mcp-Session-Id`, every request on
//! its own), and what needs a session is refused plainly.

use std::net::SocketAddr;

use gonk_tools::adapters::http::HttpServer;
use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::prelude::*;
use serde_json::{json, Value};

use crate::support::stateless::{post_stateless, sse_messages};

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(crate::support::tools::quick()).unwrap();
    registry
}

/// `registry` served over HTTP with `sessions(false)`.
async fn serve_sessionless(registry: ToolRegistry) -> HttpServer {
    serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry,
        McpHttpOptions::new(McpServerOptions::new("sessionless", "1.0.0")).sessions(false),
    )
    .await
    .unwrap()
}

async fn post(url: &str, body: Value) -> reqwest::Response {
    gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
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
    let server = serve_sessionless(registry()).await;
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
    let client = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client");
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
    let server = serve_sessionless(registry()).await;
    let url = server.url();
    let output = tokio::task::spawn_blocking(move || {
        gonk_tools_tests::mcp_clients::run_node("ts_sessionless.mjs", &[&url, "quick"])
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

/// A tool that reports, logs, then tries its peer directly: a notification
/// and a request to the client.
#[allow(deprecated)] // 2025-era logging and roots, which the tool tries
fn chatty() -> ToolRegistry {
    use gonk_tools::adapters::mcp::rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
    use gonk_tools::adapters::mcp::McpRequestContext;

    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("chatty")
                .description("Reports, logs, and tries its peer.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    ctx.progress(50.0, Some("half".to_owned()));
                    ctx.log().info("step one");
                    let mcp = ctx
                        .host::<McpRequestContext>()
                        .ok_or_else(|| ToolError::internal("not called over MCP"))?;
                    let notified = mcp
                        .peer()
                        .notify_logging_message(LoggingMessageNotificationParam::new(
                            LoggingLevel::Info,
                            json!("sent on the peer"),
                        ))
                        .await;
                    // Bounded, so a peer that waits fails the test, not hangs it.
                    let asked = tokio::time::timeout(
                        std::time::Duration::from_secs(10),
                        mcp.peer().list_roots(),
                    )
                    .await;
                    Ok::<_, ToolError>(json!({
                        "version": mcp.protocol_version().map(|v| v.to_string()),
                        "notify_failed": notified.is_err(),
                        "request_failed_at_once": matches!(asked, Ok(Err(_))),
                    }))
                })
                .build(),
        )
        .unwrap();
    registry
        .register(
            ToolDefinition::builder("steady")
                .description("Reports progress 150 times.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    for step in 1..=STEPS {
                        ctx.progress(step as f64 * 100.0 / STEPS as f64, None);
                        tokio::task::yield_now().await;
                    }
                    Ok::<_, ToolError>("done")
                })
                .build(),
        )
        .unwrap();
    registry
}

/// More progress reports than an answer holds before its call waits.
const STEPS: usize = 150;

/// The JSON-RPC messages of an SSE answer, in order.
async fn events(response: reqwest::Response) -> Vec<Value> {
    assert_eq!(response.status(), 200);
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    sse_messages(&response.text().await.unwrap())
}

/// A request without a session (2025 with `sessions(false)`, and 2026) is
/// served in its own task: what its tool reports and logs is in its answer,
/// in the order sent, before the result; the tool's peer, which has no way
/// back to the client, says so at once — a notification on it is refused,
/// a request fails instead of waiting — and carries the request's version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_without_a_session_answers_with_its_reports_and_its_peer_refuses_at_once() {
    let server = serve_sessionless(chatty()).await;
    let url = server.url();
    let sessionless = post(
        &url,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
            "name":"chatty","arguments":{},"_meta":{"progressToken":"p-1"}}}),
    )
    .await;
    let stateless = post_stateless(
        &url,
        2,
        "tools/call",
        json!({"name":"chatty","arguments":{},"_meta":{
            "progressToken":"p-2","io.modelcontextprotocol/logLevel":"info"}}),
    )
    .await
    .unwrap();
    for (response, id, token, version) in [
        (sessionless, 1, "p-1", "2025-06-18"),
        (stateless, 2, "p-2", "2026-07-28"),
    ] {
        let events = events(response).await;
        let methods: Vec<_> = events.iter().map(|event| &event["method"]).collect();
        assert_eq!(
            methods,
            [
                &json!("notifications/progress"),
                &json!("notifications/message"),
                &Value::Null
            ],
            "{events:?}"
        );
        assert_eq!(events[0]["params"]["progressToken"], token);
        assert_eq!(events[0]["params"]["progress"], 50.0);
        assert_eq!(events[1]["params"]["data"]["message"], "step one");
        assert_eq!(events[2]["id"], id);
        let result = &events[2]["result"];
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(
            result["structuredContent"],
            json!({"version": version, "notify_failed": true, "request_failed_at_once": true}),
            "{result}"
        );
    }
    server.shutdown().await.unwrap();
}

/// A call that reports more than its answer holds waits for its client to
/// read, and loses nothing: every report arrives, in order, then the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_without_a_session_that_reports_more_than_its_answer_holds_loses_nothing() {
    let server = serve_sessionless(chatty()).await;
    let url = server.url();
    let call = post(
        &url,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
            "name":"steady","arguments":{},"_meta":{"progressToken":"p"}}}),
    );
    // Bounded: a call stuck on its full answer fails here, not by hanging.
    let events = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        events(call.await).await
    })
    .await
    .expect("the answer ends");
    assert_eq!(events.len(), STEPS + 1, "{events:?}");
    let progress: Vec<f64> = events[..STEPS]
        .iter()
        .map(|event| event["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(
        progress.windows(2).all(|pair| pair[0] < pair[1]),
        "{progress:?}"
    );
    assert_eq!(progress[STEPS - 1], 100.0);
    assert_eq!(events[STEPS]["result"]["isError"], false, "{events:?}");
    server.shutdown().await.unwrap();
}
