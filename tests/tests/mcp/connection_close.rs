//! A closed connection cancels the running call, and dispatch drops its
//! handler: over stdio (the client closes the server's stdin) and over
//! HTTP (the client drops the response stream of a `tools/call`).

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::process::wait_with_bound;
use gonk_tools_tests::workspace::notes_command;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use tokio::sync::Notify;

use crate::support::stateless::post_stateless;
use crate::support::tools::Dropped;

#[test]
fn closing_stdin_cancels_the_running_call() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let mut child = notes_command()
        .args(["--db", ":memory:", "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("notes mcp starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "diag.sleep",
        "arguments": {"ms": 60000, "marker": marker.display().to_string()},
        "_meta": {"progressToken": "t"}}}),
    );
    // Wait until the handler runs: its log line arrives as a notification.
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the server closed stdout"
        );
        if line.contains("sleeping for 60000 ms") {
            break;
        }
    }
    drop(stdin);
    // The process exits only after its session ended, which is after every
    // handler returned or was dropped: once it has exited, the marker must
    // say `dropped` (no polling, no race with the exit).
    let status = wait_with_bound(&mut child, Duration::from_secs(60));
    assert!(status.success(), "{status}");
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some("dropped"),
        "the handler was not dropped before notes exited"
    );
}

/// `wait`: sends progress when its input says `"progress": true` (it
/// rides the request's own SSE stream; log notifications would go to a
/// session's GET stream), notifies `started`, then waits until dropped,
/// which notifies `dropped`.
fn wait_tool(dropped: &Arc<Notify>, started: &Arc<Notify>) -> ToolDefinition {
    let (dropped, started) = (Arc::clone(dropped), Arc::clone(started));
    ToolDefinition::builder("wait")
        .description("Waits until cancelled, after progress if asked.")
        .approval(ApprovalTier::Read)
        .handler(move |input: Value, ctx: ToolContext| {
            let guard = Dropped(Arc::clone(&dropped));
            let started = Arc::clone(&started);
            async move {
                let _guard = guard;
                if input["progress"] == true {
                    ctx.progress(1.0, Some("waiting".to_owned()));
                }
                started.notify_one();
                std::future::pending::<()>().await;
                Ok::<_, ToolError>(())
            }
        })
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_http_response_cancels_the_running_call() {
    let dropped = Arc::new(Notify::new());
    let registry = ToolRegistry::new();
    registry
        .register(wait_tool(&dropped, &Arc::new(Notify::new())))
        .unwrap();
    let server = serve(registry).await;
    let url = server.url();
    let http = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client");
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let init = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(init.bytes().await.unwrap());
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    let call = post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "wait", "arguments": {"progress": true}, "_meta": {"progressToken": 7}}}),
        Some(&session),
    )
    .await
    .unwrap();
    assert!(call.status().is_success(), "{}", call.status());
    // Read the SSE stream until the handler's progress arrives, then hang up.
    let mut body = call.bytes_stream();
    read_until(&mut body, "waiting").await;
    let handler_dropped = dropped.notified();
    drop(body);
    tokio::time::timeout(Duration::from_secs(20), handler_dropped)
        .await
        .expect("the handler was not dropped after the client hung up");
    server.shutdown().await.unwrap();
}

/// A stateless (`2026-07-28`) `tools/call` whose client hangs up: before
/// the first message (the answer would have been plain JSON), both as the
/// only answer open on the server and beside an open SSE stream (the
/// server holds a request's serve loop differently in the two cases), and
/// after a progress notification opened an SSE stream. Each time the
/// request's handler is dropped, and the server keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_call_whose_client_hangs_up_drops_its_handler() {
    let dropped = Arc::new(Notify::new());
    let started = Arc::new(Notify::new());
    let registry = ToolRegistry::new();
    registry.register(wait_tool(&dropped, &started)).unwrap();
    let server = serve(registry).await;
    let url = server.url();
    let call = |id: u64, progress: bool| {
        let mut params = json!({"name": "wait", "arguments": {"progress": progress}});
        if progress {
            params["_meta"] = json!({"progressToken": id});
        }
        post_stateless(&url, id, "tools/call", params)
    };
    let bound = Duration::from_secs(20);
    // Starts a call that waits and, once its handler runs, hands back the
    // call's task: the test then awaits its response or aborts it.
    #[allow(clippy::async_yields_async)]
    let begin = |id: u64, progress: bool| {
        let handler_started = started.notified();
        let sent = tokio::spawn(call(id, progress));
        async move {
            tokio::time::timeout(bound, handler_started)
                .await
                .expect("the handler did not start");
            sent
        }
    };
    let hang_up_before_the_answer = |sent: tokio::task::JoinHandle<_>, why: &'static str| {
        let handler_dropped = dropped.notified();
        sent.abort();
        async move {
            tokio::time::timeout(bound, handler_dropped)
                .await
                .expect(why);
        }
    };

    // Before the first message, the only answer open on the server.
    let sent = begin(1, false).await;
    hang_up_before_the_answer(sent, "not dropped: hung up before the answer, alone").await;

    // After a progress notification: the answer is an SSE stream, kept
    // open while another call hangs up before its answer.
    let streaming = begin(2, true).await.await.unwrap().unwrap();
    assert_eq!(
        streaming.headers()[CONTENT_TYPE].to_str().unwrap(),
        "text/event-stream"
    );
    let mut body = streaming.bytes_stream();
    read_until(&mut body, "waiting").await;
    let sent = begin(3, false).await;
    hang_up_before_the_answer(
        sent,
        "not dropped: hung up before the answer, beside another",
    )
    .await;
    let handler_dropped = dropped.notified();
    drop(body);
    tokio::time::timeout(bound, handler_dropped)
        .await
        .expect("the handler was not dropped after the client hung up mid-stream");

    // The server still answers.
    let listed = post_stateless(&url, 4, "tools/list", json!({}))
        .await
        .unwrap();
    let listed: Value = listed.json().await.unwrap();
    assert_eq!(listed["result"]["tools"][0]["name"], "wait", "{listed}");
    server.shutdown().await.unwrap();
}

async fn serve(registry: ToolRegistry) -> gonk_tools::adapters::http::HttpServer {
    serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry,
        McpHttpOptions::new(McpServerOptions::new("close-test", "1.0.0")),
    )
    .await
    .unwrap()
}

/// Reads an SSE body until `text` has arrived.
async fn read_until<B: AsRef<[u8]>>(
    body: &mut (impl futures::Stream<Item = reqwest::Result<B>> + Unpin),
    text: &str,
) {
    let mut seen = String::new();
    while !seen.contains(text) {
        let chunk = tokio::time::timeout(Duration::from_secs(30), body.next())
            .await
            .unwrap_or_else(|_| panic!("{text:?} did not arrive"))
            .expect("the stream stays open")
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(chunk.as_ref()));
    }
}
