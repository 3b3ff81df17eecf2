//! A 2025 session's `tools/call` over HTTP, from a client that declared
//! nothing the server could ask it (no elicitation, sampling or roots),
//! runs in its own HTTP request rather than through rmcp's session worker.
//! The session must not notice: progress arrives in the call's answer,
//! logs on the session's `GET` stream at the session's level, the client's
//! `notifications/cancelled` stops the call, and calls alone keep the
//! session open past its idle timeout. A client that can be asked keeps
//! rmcp's path (`approval_ask`, `rust_client_asks`).

use std::io::BufRead;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::prelude::*;
use serde_json::Value;
use tokio::sync::Notify;

use crate::support::raw_http::{open_get_stream, Session};
use crate::support::tools::{quick, Dropped};

/// `step` reports progress and logs `input.say` at `input.level`; `hold`
/// notifies `started` and waits until it is dropped, which notifies
/// `dropped`; `quick` answers at once.
fn registry(started: &Arc<Notify>, dropped: &Arc<Notify>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("step")
                .description("Reports progress, logs a line, answers.")
                .approval(ApprovalTier::Read)
                .handler(|input: Value, ctx: ToolContext| async move {
                    ctx.progress(50.0, Some("half".to_owned()));
                    let level = match input["level"].as_str() {
                        Some("error") => LogLevel::Error,
                        _ => LogLevel::Info,
                    };
                    ctx.log()
                        .log(level, input["say"].as_str().unwrap_or("step"), None);
                    Ok::<_, ToolError>("stepped")
                })
                .build(),
        )
        .unwrap();
    let (started, dropped) = (Arc::clone(started), Arc::clone(dropped));
    registry
        .register(
            ToolDefinition::builder("hold")
                .description("Waits until cancelled.")
                .approval(ApprovalTier::Read)
                .handler(move |_: NoInput, _ctx: ToolContext| {
                    let guard = Dropped(Arc::clone(&dropped));
                    let started = Arc::clone(&started);
                    async move {
                        let _guard = guard;
                        started.notify_one();
                        std::future::pending::<()>().await;
                        Ok::<_, ToolError>("never")
                    }
                })
                .build(),
        )
        .unwrap();
    registry.register(quick()).unwrap();
    registry
}

async fn serve(options: McpHttpOptions) -> gonk_tools::adapters::http::HttpServer {
    let notify = Arc::new(Notify::new());
    serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry(&notify, &notify),
        options,
    )
    .await
    .unwrap()
}

fn options() -> McpHttpOptions {
    McpHttpOptions::new(McpServerOptions::new("session-calls", "1.0.0"))
}

/// The JSON-RPC messages of an SSE answer's `data:` lines.
fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// The next `notifications/message` on a session's `GET` stream.
fn next_log(stream: &mut std::io::BufReader<std::net::TcpStream>) -> Value {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stream.read_line(&mut line).expect("the GET stream") > 0,
            "the GET stream ended"
        );
        let Some(data) = line.trim().strip_prefix("data:") else {
            continue;
        };
        let Ok(message) = serde_json::from_str::<Value>(data.trim()) else {
            continue;
        };
        if message["method"] == "notifications/message" {
            return message;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_goes_into_the_answer_and_logs_to_the_session_at_its_level() {
    let server = serve(options()).await;
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let session = Session::open(&url, &[]);
        let mut logs = open_get_stream(&session);
        let call = |id: u64, say: &str, level: &str| {
            session.post(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                    "name": "step", "arguments": {"say": say, "level": level},
                    "_meta": {"progressToken": format!("p{id}")}}})
                .to_string(),
            )
        };
        let answer = call(1, "first", "info");
        assert_eq!(answer.status, 200, "{}", answer.text());
        let sent = events(&answer.text());
        let progress: Vec<&Value> = sent
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress.len(), 1, "{sent:?}");
        assert_eq!(progress[0]["params"]["progressToken"], "p1");
        assert_eq!(progress[0]["params"]["message"], "half");
        let last = sent.last().expect("an answer");
        assert_eq!(last["id"], 1, "{sent:?}");
        assert_eq!(last["result"]["isError"], false, "{last}");
        assert!(
            !sent.iter().any(|m| m["method"] == "notifications/message"),
            "a log went into the call's answer: {sent:?}"
        );
        let log = next_log(&mut logs);
        assert_eq!(log["params"]["data"]["message"], "first", "{log}");
        assert_eq!(log["params"]["level"], "info", "{log}");

        // The session's level holds for its calls: info is dropped now.
        let set = session.post(
            r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}"#,
        );
        assert_eq!(set.status, 200, "{}", set.text());
        assert_eq!(call(3, "dropped", "info").status, 200);
        assert_eq!(call(4, "kept", "error").status, 200);
        let log = next_log(&mut logs);
        assert_eq!(log["params"]["data"]["message"], "kept", "{log}");
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_cancellation_stops_the_call() {
    let (started, dropped) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry(&started, &dropped),
        options(),
    )
    .await
    .unwrap();
    let url = server.url();
    let session = tokio::task::spawn_blocking(move || Session::open(&url, &[]))
        .await
        .unwrap();
    let session = Arc::new(session);
    let calling = {
        let session = Arc::clone(&session);
        tokio::task::spawn_blocking(move || {
            session.post(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","arguments":{}}}"#,
            )
        })
    };
    tokio::time::timeout(Duration::from_secs(30), started.notified())
        .await
        .expect("the call started");
    let cancelled = {
        let session = Arc::clone(&session);
        tokio::task::spawn_blocking(move || {
            session.post(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"enough"}}"#,
            )
        })
        .await
        .unwrap()
    };
    assert_eq!(cancelled.status, 202, "{}", cancelled.text());
    tokio::time::timeout(Duration::from_secs(30), dropped.notified())
        .await
        .expect("the cancelled call's handler was dropped");
    // Its request is answered (with the cancellation), not left hanging.
    let answer = tokio::time::timeout(Duration::from_secs(30), calling)
        .await
        .expect("the cancelled call's request ended")
        .unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_alone_keep_a_session_open_past_its_idle_timeout() {
    // Long enough that a loaded machine's stall between two calls does
    // not outlast it by itself.
    let idle = Duration::from_secs(1);
    let server = serve(options().session_idle_timeout(Some(idle))).await;
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let mut session = Session::open(&url, &[]);
        // Four idle timeouts of nothing but calls, a tenth of one apart.
        let until = Instant::now() + idle * 4;
        let mut calls = 0;
        while Instant::now() < until {
            session.call_succeeds("quick", json!({}), &format!("{calls} calls"));
            calls += 1;
            std::thread::sleep(idle / 10);
        }
        assert!(calls >= 10, "{calls}");
    })
    .await
    .unwrap();
    server.shutdown().await.unwrap();
}
