//! A tool reads the HTTP head of the request that called it through
//! `McpRequestContext::http_request`: each call its own headers, over a
//! session and without one, and none over stdio.

use std::net::SocketAddr;

use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpRequestContext, McpServerOptions};
use gonk_tools::prelude::*;
use serde_json::{json, Value};

/// `caller`: the request's `x-caller` header, or `"none"` without an HTTP
/// head. The context is kept a while after the call by a task, as a tool
/// that hands its context on does.
fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("caller")
                .description("Names the caller from the request's x-caller header.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    let caller = ctx
                        .host::<McpRequestContext>()
                        .and_then(McpRequestContext::http_request)
                        .map(|head| {
                            head.headers
                                .get("x-caller")
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or("missing")
                                .to_owned()
                        })
                        .unwrap_or_else(|| "none".to_owned());
                    let kept = ctx.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        drop(kept);
                    });
                    Ok::<_, ToolError>(caller)
                })
                .build(),
        )
        .unwrap();
    registry
}

async fn post(url: &str, session: Option<&str>, caller: &str, body: Value) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("x-caller", caller);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(body.to_string()).send().await.unwrap()
}

/// The text of a `tools/call` answer, plain JSON or one SSE event.
async fn called(response: reqwest::Response) -> String {
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let json = text
        .lines()
        .find_map(|line| line.strip_prefix("data:"))
        .unwrap_or(&text);
    let answer: Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    text_of(&answer)
}

/// The tool's string, from the answer's text content (its JSON).
fn text_of(answer: &Value) -> String {
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

fn call(id: u32) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"caller","arguments":{}}})
}

fn initialize() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},
        "clientInfo":{"name":"t","version":"1"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_call_reads_its_own_request_head() {
    for sessions in [true, false] {
        let server = serve_http(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            registry(),
            McpHttpOptions::new(McpServerOptions::new("head", "1.0.0")).sessions(sessions),
        )
        .await
        .unwrap();
        let url = server.url();
        let init = post(&url, None, "init", initialize()).await;
        assert_eq!(init.status(), 200);
        let session = init
            .headers()
            .get("mcp-session-id")
            .map(|id| id.to_str().unwrap().to_owned());
        assert_eq!(session.is_some(), sessions);
        let session = session.as_deref();
        if sessions {
            let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
            assert_eq!(post(&url, session, "-", initialized).await.status(), 202);
        }
        for (id, caller) in [(1, "alice"), (2, "bob"), (3, "alice")] {
            let answer = called(post(&url, session, caller, call(id)).await).await;
            assert_eq!(answer, caller, "sessions({sessions}), call {id}");
        }
        server.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn over_stdio_there_is_no_request_head() {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(gonk_tools::adapters::mcp::serve_io(
        registry(),
        McpServerOptions::new("head", "1.0.0"),
        server_read,
        server_write,
    ));
    let (read, mut write) = tokio::io::split(client);
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut lines = tokio::io::BufReader::new(read).lines();
    for message in [
        initialize(),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        call(1),
    ] {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut answer = Value::Null;
    while let Some(line) = lines.next_line().await.unwrap() {
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 1 {
            answer = message;
            break;
        }
    }
    assert_eq!(text_of(&answer), "none", "{answer}");
    drop(write);
    drop(lines);
    let _ = serving.await;
}
