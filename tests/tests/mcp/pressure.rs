//! Sessions under pressure: the session cap cannot be turned into a
//! lockout. At the cap the least recently used idle session is closed to
//! make room (its next request gets `404`), one principal at its share
//! only ever closes its own, `503` comes only when every candidate is
//! busy — and `subscriptions/listen` streams (2026) the same. (WebSocket
//! connections: `ws::pressure`.)

use std::net::SocketAddr;
use std::time::Duration;

use crate::support::raw_http::{open_get_stream, post, Session};
use crate::support::stateless::sse_messages;
use gonk_tools::adapters::http::{
    HttpAuthRejection, HttpRequestParts, HttpServer, HttpServerOptions,
};
use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    AllowAll, AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind,
};
use gonk_tools_tests::mcp_clients::run_node;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Value};

/// How long a stream may take to show what the test waits for; only a
/// guard against a hang.
const PATIENCE: Duration = Duration::from_secs(30);

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(crate::support::tools::quick()).unwrap();
    registry
}

/// `Bearer alice` and `Bearer bob` are two principals; anything else 401.
fn two_principals() -> HttpServerOptions {
    HttpServerOptions::new().authenticate(|request: &HttpRequestParts| {
        let who = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .filter(|who| matches!(*who, "alice" | "bob"))
            .map(str::to_owned);
        async move {
            let who = who.ok_or_else(|| HttpAuthRejection::unauthorized("unknown token"))?;
            let principal = AuthenticatedPrincipal::new(
                &who,
                PrincipalKind::Human,
                PrincipalIdentity::new("https://idp.example", &who, AuthMethod::Oauth),
            );
            Ok(AuthContext::new(principal, AllowAll))
        }
    })
}

async fn start(options: McpHttpOptions) -> HttpServer {
    serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry(), options)
        .await
        .unwrap()
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

/// The status of a `ping` on the session: 200 while it is open, 404 once
/// it was closed.
fn ping(session: &Session) -> u16 {
    session
        .post(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#)
        .status
}

/// An `initialize` without a session, as `Session::open` sends it.
fn initialize(url: &str, extra: &[&str]) -> crate::support::raw_http::Answer {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    post(
        authority.parse().unwrap(),
        path,
        authority,
        extra,
        r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_1100_abandoned_sessions_a_new_client_gets_a_session_at_once() {
    // The default cap (1,024), one principal (no authentication hook).
    let server = start(McpHttpOptions::new(McpServerOptions::new(
        "pressure", "1.0.0",
    )))
    .await;
    let url = server.url();
    let (first, last) = {
        let url = url.clone();
        blocking(move || {
            // Opened and walked away from: none is ever closed.
            let mut sessions: Vec<Session> = (0..1100).map(|_| Session::open(&url, &[])).collect();
            let last = sessions.pop().unwrap();
            (sessions.swap_remove(0), last)
        })
        .await
    };

    // A real client (the TypeScript SDK 1.x, 2025 only) gets a session and
    // a result at once, not 503.
    let output = {
        let url = url.clone();
        blocking(move || run_node("ts_session.mjs", &[&url, "quick"])).await
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(stdout.trim()).expect("one JSON report");
    assert!(report["sessionId"].is_string(), "a session: {report}");
    assert_eq!(report["result"]["isError"], false, "{report}");
    assert_eq!(report["result"]["content"][0]["text"], "\"ok\"", "{report}");

    blocking(move || {
        // The oldest abandoned session made room: its next request gets the
        // spec's 404, so a client would initialize again; the newest is open.
        assert_eq!(
            ping(&first),
            404,
            "the least recently used session was closed"
        );
        assert_eq!(ping(&last), 200, "a recent session stays");
    })
    .await;
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principal_at_its_share_closes_only_its_own_sessions() {
    // A cap of 16: once two principals hold sessions, each may hold 2
    // (an eighth).
    let server = start(
        McpHttpOptions::new(McpServerOptions::new("pressure", "1.0.0"))
            .http(two_principals())
            .max_sessions(16),
    )
    .await;
    let url = server.url();
    blocking(move || {
        let mut bob: Vec<Session> = (0..1)
            .map(|_| Session::open(&url, &["Authorization: Bearer bob"]))
            .collect();
        let alice: Vec<Session> = (0..10)
            .map(|_| Session::open(&url, &["Authorization: Bearer alice"]))
            .collect();
        for session in &bob {
            assert_eq!(ping(session), 200, "alice never closes bob's sessions");
        }
        for session in &alice[..8] {
            assert_eq!(ping(session), 404, "alice's older sessions made room");
        }
        for session in &alice[8..] {
            assert_eq!(ping(session), 200);
        }

        // Both of alice's sessions busy (their GET streams open): her next
        // initialize is refused, and still does not touch bob's.
        let streams: Vec<_> = alice[8..].iter().map(open_get_stream).collect();
        let refused = initialize(&url, &["Authorization: Bearer alice"]);
        assert_eq!(refused.status, 503, "{}", refused.text());
        assert_eq!(refused.header("retry-after"), Some("1"));
        let message = refused.message()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains("share is 2"), "{message}");
        for session in &bob {
            assert_eq!(ping(session), 200);
        }
        // Bob, under his share, opens one more without closing anything.
        let mut second = Session::open(&url, &["Authorization: Bearer bob"]);
        second.call_succeeds("quick", json!({}), "opening under the share");
        bob.push(second);
        for session in bob.iter().chain(&alice[8..]) {
            assert_eq!(ping(session), 200);
        }
        drop(streams);
    })
    .await;
    server.shutdown().await.unwrap();
}

/// Opens a `subscriptions/listen` stream (2026) for tool-list changes as
/// `who`; the answer's headers are in, its body streams.
async fn listen(url: &str, who: Option<&str>) -> reqwest::Response {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                      "params": {"_meta": meta, "notifications": {"toolsListChanged": true}}});
    let mut request = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .post(url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen");
    if let Some(who) = who {
        request = request.header(AUTHORIZATION, format!("Bearer {who}"));
    }
    let response = request.body(body.to_string()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response
}

/// Reads the stream until a message `wanted` accepts, or its end; the
/// messages read, and whether it ended.
async fn read_until(
    response: &mut reqwest::Response,
    wanted: impl Fn(&Value) -> bool,
) -> (Vec<Value>, bool) {
    let mut text = String::new();
    let ended = tokio::time::timeout(PATIENCE, async {
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    text.push_str(&String::from_utf8_lossy(&chunk));
                    if sse_messages(&text).iter().any(&wanted) {
                        return false;
                    }
                }
                Ok(None) | Err(_) => return true,
            }
        }
    })
    .await
    .expect("the stream showed what was awaited, or ended");
    (sse_messages(&text), ended)
}

fn is_list_changed(message: &Value) -> bool {
    message["method"] == "notifications/tools/list_changed"
}

fn is_acknowledged(message: &Value) -> bool {
    message["method"]
        .as_str()
        .is_some_and(|m| m.contains("acknowledged"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_1100_listen_streams_the_longest_silent_one_makes_room() {
    let registry = registry();
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry.clone(),
        McpHttpOptions::new(McpServerOptions::new("pressure", "1.0.0")),
    )
    .await
    .unwrap();
    let url = server.url();
    let mut streams = Vec::new();
    for _ in 0..1100 {
        let mut stream = listen(&url, None).await;
        let (_, ended) = read_until(&mut stream, is_acknowledged).await;
        assert!(!ended, "a listen stream is acknowledged");
        streams.push(stream);
    }
    // The default cap is 1,024: the 76 streams that had gone longest
    // without delivering anything (the first ones) were ended to make room.
    for stream in &mut streams[..76] {
        let (_, ended) = read_until(stream, |_| false).await;
        assert!(ended, "an evicted stream ends, so its client listens again");
    }
    // The others are live: a change reaches each of them.
    registry
        .register(
            ToolDefinition::builder("added")
                .description("A tool added while listening.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, _ctx: ToolContext| async move { Ok::<_, ToolError>("ok") })
                .build(),
        )
        .unwrap();
    for stream in &mut streams[76..] {
        let (messages, _) = read_until(stream, is_list_changed).await;
        assert!(messages.iter().any(is_list_changed), "{messages:?}");
    }
    drop(streams);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principal_at_its_listen_share_ends_only_its_own_streams() {
    let registry = registry();
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry.clone(),
        McpHttpOptions::new(McpServerOptions::new("pressure", "1.0.0"))
            .http(two_principals())
            .max_listen_streams(16, Some(2)),
    )
    .await
    .unwrap();
    let url = server.url();
    let mut bob = Vec::new();
    for _ in 0..2 {
        let mut stream = listen(&url, Some("bob")).await;
        assert!(!read_until(&mut stream, is_acknowledged).await.1);
        bob.push(stream);
    }
    let mut alice = Vec::new();
    for _ in 0..5 {
        let mut stream = listen(&url, Some("alice")).await;
        assert!(!read_until(&mut stream, is_acknowledged).await.1);
        alice.push(stream);
    }
    for stream in &mut alice[..3] {
        assert!(
            read_until(stream, |_| false).await.1,
            "alice's older streams ended"
        );
    }
    registry
        .register(
            ToolDefinition::builder("added")
                .description("A tool added while listening.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, _ctx: ToolContext| async move { Ok::<_, ToolError>("ok") })
                .build(),
        )
        .unwrap();
    for stream in bob.iter_mut().chain(alice[3..].iter_mut()) {
        let (messages, _) = read_until(stream, is_list_changed).await;
        assert!(
            messages.iter().any(is_list_changed),
            "bob's streams and alice's newest are live: {messages:?}"
        );
    }
    server.shutdown().await.unwrap();
}
