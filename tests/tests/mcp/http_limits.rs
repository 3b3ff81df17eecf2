//! Server-side bounds: a server-wide cap on running calls answered with a
//! clear "busy" error (over HTTP across sessions, and to the typed client
//! over stdio), a cap on open sessions (`503` when every session is busy;
//! making room otherwise is `pressure`'s), and a session idle timeout.
//! After each refusal a fresh call succeeds.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::raw_http::{post, Session};
use gonk_tools::adapters::mcp::{
    serve_http, serve_io, McpClient, McpHttpOptions, McpServerOptions,
};
use gonk_tools::prelude::*;
use serde_json::Value;
use tokio::sync::Notify;

/// `hold` runs until released; `quick` answers at once.
fn registry(started: Arc<Notify>, release: Arc<Notify>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("hold")
                .description("Runs until the test releases it.")
                .approval(ApprovalTier::Read)
                .handler(move |_: NoInput, _ctx: ToolContext| {
                    let (started, release) = (Arc::clone(&started), Arc::clone(&release));
                    async move {
                        started.notify_one();
                        release.notified().await;
                        Ok::<_, ToolError>("released")
                    }
                })
                .build(),
        )
        .unwrap();
    registry.register(crate::support::tools::quick()).unwrap();
    registry
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_call_cap_a_call_is_refused_as_busy_across_sessions() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry(Arc::clone(&started), Arc::clone(&release)),
        McpHttpOptions::new(McpServerOptions::new("limits", "1.0.0").max_in_flight_calls(1)),
    )
    .await
    .unwrap();
    let url = server.url();
    let holding = {
        let url = url.clone();
        tokio::task::spawn_blocking(move || Session::open(&url, &[]).call("hold", json!({})))
    };
    started.notified().await;

    let url2 = url.clone();
    let mut other = blocking(move || Session::open(&url2, &[])).await;
    let (answer, mut other) = blocking(move || (other.call("quick", json!({})), other)).await;
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    assert_eq!(answer["error"]["data"]["code"], "BUSY", "{answer}");
    assert_eq!(answer["error"]["data"]["limit"], 1, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Server busy"), "{message}");

    release.notify_one();
    let held = holding.await.unwrap();
    assert_eq!(held["result"]["isError"], false, "{held}");
    blocking(move || other.call_succeeds("quick", json!({}), "the busy refusal")).await;
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typed_client_sees_busy_as_a_busy_error() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    tokio::spawn(serve_io(
        registry(Arc::clone(&started), Arc::clone(&release)),
        McpServerOptions::new("limits", "1.0.0").max_in_flight_calls(1),
        server_read,
        server_write,
    ));
    let (client_read, client_write) = tokio::io::split(client);
    let client = Arc::new(
        McpClient::connect_io(client_read, client_write)
            .await
            .unwrap(),
    );
    let holder = Arc::clone(&client);
    let holding = tokio::spawn(async move {
        collect_tool_outcome(holder.invoke("hold", json!({})), |_| {}).await
    });
    started.notified().await;
    let error = collect_tool_outcome(client.invoke("quick", json!({})), |_| {})
        .await
        .expect_err("the second call is over the cap");
    assert_eq!(error.code, ErrorCode::custom("BUSY"), "{error:?}");
    assert!(error.message.contains("Server busy"), "{}", error.message);
    release.notify_one();
    holding.await.unwrap().expect("the held call finishes");
    let output = collect_tool_outcome(client.invoke("quick", json!({})), |_| {})
        .await
        .expect("a fresh call after the refusal");
    assert_eq!(output.data, "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_session_cap_with_every_session_busy_initialize_gets_503_until_one_closes() {
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry(Arc::new(Notify::new()), Arc::new(Notify::new())),
        McpHttpOptions::new(McpServerOptions::new("limits", "1.0.0")).max_sessions(2),
    )
    .await
    .unwrap();
    let url = server.url();
    blocking(move || {
        let first = Session::open(&url, &[]);
        let mut second = Session::open(&url, &[]);
        // Both busy (each has its GET stream open): none can make room.
        let first_stream = crate::support::raw_http::open_get_stream(&first);
        let second_stream = crate::support::raw_http::open_get_stream(&second);
        let refused = post(
            first.addr,
            &first.path,
            &first.host,
            &[],
            r#"{"jsonrpc":"2.0","id":"third","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        );
        assert_eq!(refused.status, 503, "{}", refused.text());
        assert_eq!(refused.header("retry-after"), Some("1"));
        assert!(refused.header("mcp-session-id").is_none());
        let error = refused.message();
        assert_eq!(error["id"], "third", "{error}");
        assert_eq!(error["error"]["code"], -32000, "{error}");
        assert!(
            error["error"]["message"].as_str().unwrap().contains("2 sessions are open"),
            "{error}"
        );
        second.call_succeeds("quick", json!({}), "a refused initialize");

        // Closing a session makes room.
        let lines = first.lines().join("\r\n");
        let closed = crate::support::raw_http::exchange(
            first.addr,
            &format!(
                "DELETE {} HTTP/1.1\r\nHost: {}\r\nMCP-Protocol-Version: 2025-06-18\r\n{lines}",
                first.path, first.host
            ),
            b"",
        );
        // 200 or 204, what clients expect (rmcp itself answers 202).
        assert!(matches!(closed.status, 200 | 204), "{} {}", closed.status, closed.text());
        let mut third = Session::open(&url, &[]);
        third.call_succeeds("quick", json!({}), "a session closed");
        drop((first_stream, second_stream));
    })
    .await;
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_closed_after_the_idle_timeout() {
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry(Arc::new(Notify::new()), Arc::new(Notify::new())),
        McpHttpOptions::new(McpServerOptions::new("limits", "1.0.0"))
            .session_idle_timeout(Some(Duration::from_millis(200))),
    )
    .await
    .unwrap();
    let url = server.url();
    blocking(move || {
        let mut session = Session::open(&url, &[]);
        session.call_succeeds("quick", json!({}), "opening");
        // Left alone, the session goes away (its id then gets 404); the
        // bound only guards against a hang.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let answer = session.post(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
            if answer.status == 404 {
                break;
            }
            assert_eq!(answer.status, 200, "{}", answer.text());
            let pong: Value = answer.message();
            assert_eq!(pong["id"], 9);
            assert!(Instant::now() < deadline, "the idle session never closed");
        }
        let mut fresh = Session::open(&url, &[]);
        fresh.call_succeeds("quick", json!({}), "an idle session closed");
    })
    .await;
    server.shutdown().await.unwrap();
}
