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

/// Notifies when dropped: the handler future was dropped (or finished).
struct Dropped(Arc<Notify>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_http_response_cancels_the_running_call() {
    let dropped = Arc::new(Notify::new());
    let registry = ToolRegistry::new();
    let signal = Arc::clone(&dropped);
    registry
        .register(
            ToolDefinition::builder("wait")
                .description("Waits until cancelled.")
                .approval(ApprovalTier::Read)
                .handler(move |_: NoInput, ctx: ToolContext| {
                    let guard = Dropped(Arc::clone(&signal));
                    async move {
                        let _guard = guard;
                        // Progress rides the request's own SSE stream (log
                        // notifications go to the session's GET stream).
                        ctx.progress(1.0, Some("waiting".to_owned()));
                        std::future::pending::<()>().await;
                        Ok::<_, ToolError>(())
                    }
                })
                .build(),
        )
        .unwrap();
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry,
        McpHttpOptions::new(McpServerOptions::new("close-test", "1.0.0")),
    )
    .await
    .unwrap();
    let url = server.url();
    let http = reqwest::Client::new();
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
            "name": "wait", "arguments": {}, "_meta": {"progressToken": 7}}}),
        Some(&session),
    )
    .await
    .unwrap();
    assert!(call.status().is_success(), "{}", call.status());
    // Read the SSE stream until the handler's progress arrives, then hang up.
    let mut body = call.bytes_stream();
    let mut seen = String::new();
    while !seen.contains("waiting") {
        let chunk = tokio::time::timeout(Duration::from_secs(30), body.next())
            .await
            .expect("the handler's progress notification did not arrive")
            .expect("the stream stays open")
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let handler_dropped = dropped.notified();
    drop(body);
    tokio::time::timeout(Duration::from_secs(20), handler_dropped)
        .await
        .expect("the handler was not dropped after the client hung up");
    server.shutdown().await.unwrap();
}
