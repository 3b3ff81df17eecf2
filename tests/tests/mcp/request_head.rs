//! A tool reads the request that called it through `McpRequestContext`:
//! the HTTP head (`http_request`), each call its own headers, over a
//! session and without one, and none over stdio; and the request's id,
//! progress token, protocol version and era, each call its own, in both
//! eras.

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
        .register(
            ToolDefinition::builder("request")
                .description("Says what it sees of the MCP request that called it.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    let mcp = ctx
                        .host::<McpRequestContext>()
                        .ok_or_else(|| ToolError::internal("not called over MCP"))?;
                    Ok::<_, ToolError>(json!({
                        "id": mcp.request_id(),
                        "progressToken": mcp.progress_token(),
                        "version": mcp.protocol_version().map(|v| v.to_string()),
                        "stateless": mcp.is_stateless(),
                        "client": mcp.peer().peer_info().map(|info| info.client_info.name.clone()),
                        "elicitation": mcp
                            .client_capabilities()
                            .is_some_and(|caps| caps.elicitation.is_some()),
                    }))
                })
                .build(),
        )
        .unwrap();
    registry
}

async fn post(url: &str, session: Option<&str>, caller: &str, body: Value) -> reqwest::Response {
    let mut request = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
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

/// The registry served by `serve_io` over an in-memory pipe: a client's
/// end that writes lines and reads the answers.
struct Stdio {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    serving: tokio::task::JoinHandle<Result<(), gonk_tools::adapters::mcp::McpServeError>>,
}

impl Stdio {
    fn start() -> Self {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = tokio::spawn(gonk_tools::adapters::mcp::serve_io(
            registry(),
            McpServerOptions::new("head", "1.0.0"),
            server_read,
            server_write,
        ));
        let (read, write) = tokio::io::split(client);
        let lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(read));
        Stdio {
            write,
            lines,
            serving,
        }
    }

    async fn send(&mut self, message: Value) {
        tokio::io::AsyncWriteExt::write_all(&mut self.write, format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    /// The next message from the server.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("the server answers")
            .unwrap()
            .expect("the server answers");
        serde_json::from_str(&line).unwrap()
    }

    /// Ends the input and waits for the server to stop.
    async fn close(self) {
        drop(self.write);
        drop(self.lines);
        let _ = self.serving.await;
    }
}

#[tokio::test]
async fn over_stdio_there_is_no_request_head() {
    let mut stdio = Stdio::start();
    for message in [
        initialize(),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        call(1),
    ] {
        stdio.send(message).await;
    }
    let answer = loop {
        let message = stdio.next().await;
        if message["id"] == 1 {
            break message;
        }
    };
    assert_eq!(text_of(&answer), "none", "{answer}");
    stdio.close().await;
}

/// Each call sees its own request id and progress token; a 2025 session's
/// calls see the session's version, client and capabilities, a stateless
/// call those of its own `_meta`. The same session then keeps answering:
/// what the call borrowed of rmcp's request context is handed back.
#[tokio::test]
async fn a_tool_sees_its_own_request_in_both_eras() {
    let mut stdio = Stdio::start();
    stdio
        .send(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},
            "clientInfo":{"name":"session-client","version":"1"}}}),
        )
        .await;
    stdio
        .send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;
    let meta_2026 = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-client", "version": "1"},
    });
    let calls = [
        (json!(1), json!({"progressToken": "p-1"}), false),
        (json!("two"), json!({}), false),
        (json!(3), meta_2026.clone(), true),
        (json!(4), json!({"progressToken": 7}), false),
    ];
    for (id, meta, _) in &calls {
        stdio
            .send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                "params":{"name":"request","arguments":{},"_meta":meta}}))
            .await;
    }
    let mut answers = std::collections::HashMap::new();
    while answers.len() < calls.len() {
        let message = stdio.next().await;
        if message.get("id").is_some_and(|id| *id != json!(0)) {
            answers.insert(message["id"].to_string(), message);
        }
    }
    for (id, meta, stateless) in &calls {
        let answer = &answers[&id.to_string()];
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        let seen: Value = serde_json::from_str(text).unwrap();
        assert_eq!(seen["id"], *id, "{answer}");
        assert_eq!(seen["stateless"], *stateless, "{answer}");
        if *stateless {
            assert_eq!(seen["version"], "2026-07-28", "{answer}");
            assert_eq!(seen["elicitation"], false, "{answer}");
            assert_eq!(seen["progressToken"], Value::Null, "{answer}");
        } else {
            assert_eq!(seen["version"], "2025-06-18", "{answer}");
            assert_eq!(seen["client"], "session-client", "{answer}");
            assert_eq!(seen["elicitation"], true, "{answer}");
            assert_eq!(
                seen["progressToken"],
                meta.get("progressToken").cloned().unwrap_or(Value::Null),
                "{answer}"
            );
        }
    }
    stdio.close().await;
}
