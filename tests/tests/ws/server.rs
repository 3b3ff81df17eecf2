//! The WebSocket server (`adapters::ws`) and `WsClient` over real loopback
//! sockets, against a fixture tool set: the generated typed client over a
//! socket, broadcast to a second connection, the handshake checks (key,
//! Origin, the shared authentication hook), hostile frames, the in-flight cap, cancellation, disconnects,
//! keepalive and shutdown. Raw frames go through tokio-tungstenite
//! directly; the independent clients (Python, Node, a browser) drive the
//! notes server in `notes_*`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, Stream, StreamExt};
use gonk_tools::adapters::http::{
    HttpAuthRejection, HttpRequestParts, HttpServeError, HttpServer, HttpServerOptions,
};
use gonk_tools::adapters::ws::{
    serve_ws, HookError, WsClient, WsClientError, WsClientOptions, WsHandler, WsRejection,
    WsServerOptions,
};
use gonk_tools::client::{call_with_events, ClientError, Transport};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    AllowAll, AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind,
};
use serde_json::Value;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

/// Generous bound for anything the tests wait on (never asserted as a time).
const PATIENCE: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------- tools

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Text {
    #[schemars(length(min = 1))]
    pub text: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NewNote {
    #[schemars(length(min = 1, max = 40))]
    pub title: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    pub id: usize,
    pub title: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Count {
    #[schemars(range(min = 1, max = 10))]
    pub to: u32,
}

/// What the tools report to the tests.
#[derive(Default)]
pub struct Probe {
    notes: std::sync::Mutex<Vec<String>>,
    started: Notify,
    running: AtomicUsize,
    dropped: AtomicUsize,
}

/// Counts a `slow` handler dropped before it finished.
struct Running(Arc<Probe>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// Echo the text.
#[tool(name = "echo", approval = "read", mcp(read_only))]
pub async fn echo(input: Text) -> String {
    input.text
}

/// Add a note.
#[tool(name = "notes.add", approval = "write", mcp(read_only = false))]
pub async fn notes_add(input: NewNote, probe: State<Probe>) -> Note {
    let mut notes = probe.notes.lock().unwrap();
    notes.push(input.title.clone());
    Note {
        id: notes.len(),
        title: input.title,
    }
}

/// Count up to `to`, with progress.
#[tool(name = "count-up", approval = "read")]
pub async fn count_up(input: Count) -> impl Stream<Item = ToolEvent<u32>> {
    gonk_tools::stream! {
        for i in 1..=input.to {
            yield ToolEvent::progress(f64::from(i * 100 / input.to), None);
        }
        yield ToolEvent::result(input.to);
    }
}

/// Wait until cancelled.
#[tool(name = "slow", approval = "read")]
pub async fn slow(probe: State<Probe>) -> Result<(), ToolError> {
    let probe = probe.0.clone();
    probe.running.fetch_add(1, Ordering::SeqCst);
    let _running = Running(probe.clone());
    probe.started.notify_one();
    std::future::pending::<()>().await;
    Ok(())
}

toolset! {
    /// The fixture tools.
    pub struct Fixture { Echo, NotesAdd, CountUp, Slow }
}

// ---------------------------------------------------------------- harness

struct Harness {
    server: HttpServer,
    probe: Arc<Probe>,
}

impl Harness {
    async fn start(options: WsServerOptions) -> Harness {
        let probe = Arc::new(Probe::default());
        let registry = ToolRegistry::builder()
            .state_arc(Arc::clone(&probe))
            .build();
        Fixture::register_tools(&registry).unwrap();
        let server = serve_ws(
            "127.0.0.1:0".parse().unwrap(),
            WsHandler::builder(&registry),
            options,
        )
        .await
        .unwrap();
        Harness { server, probe }
    }

    fn url(&self) -> String {
        self.server.url()
    }

    async fn client(&self) -> WsClient {
        WsClient::connect(&self.url(), WsClientOptions::new())
            .await
            .unwrap()
    }

    /// A raw connection, for frames `WsClient` never sends.
    async fn raw(
        &self,
    ) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>
    {
        tokio_tungstenite::connect_async(self.url().into_client_request().unwrap())
            .await
            .unwrap()
            .0
    }

    /// Waits until `n` `slow` handlers have been dropped.
    async fn dropped(&self, n: usize) {
        tokio::time::timeout(PATIENCE, async {
            while self.probe.dropped.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the handler was dropped");
    }
}

type Raw =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text message on a raw socket, as JSON.
async fn next_json(socket: &mut Raw) -> Value {
    loop {
        let frame = tokio::time::timeout(PATIENCE, socket.next())
            .await
            .expect("a message")
            .expect("the socket is open")
            .expect("a frame");
        if let Message::Text(text) = frame {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

/// Reads until the server's close frame; returns its code and reason.
async fn close_of(socket: &mut Raw) -> (CloseCode, String) {
    loop {
        let frame = tokio::time::timeout(PATIENCE, socket.next())
            .await
            .expect("the server closes");
        match frame {
            Some(Ok(Message::Close(Some(frame)))) => return (frame.code, frame.reason.to_string()),
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

async fn send(socket: &mut Raw, value: Value) {
    socket.send(Message::text(value.to_string())).await.unwrap();
}

// ---------------------------------------------------------------- tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_typed_client_works_over_a_socket() {
    let h = Harness::start(WsServerOptions::new()).await;
    let client = FixtureClient::new(h.client().await);
    assert_eq!(client.echo(Text { text: "hi".into() }).await.unwrap(), "hi");
    let note = client
        .notes_add(NewNote {
            title: "groceries".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        note,
        Note {
            id: 1,
            title: "groceries".into()
        }
    );
    // Errors keep their code and issues across the socket.
    let error = client
        .echo(Text {
            text: String::new(),
        })
        .await
        .unwrap_err();
    let ClientError::Tool(error) = error else {
        panic!("a tool error")
    };
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(error.issues()[0].path, "/text");
    // Progress events arrive before the result.
    let mut progress = Vec::new();
    let counted = call_with_events::<CountUp>(client.transport(), Count { to: 4 }, |event| {
        if let ToolEvent::Progress { percent, .. } = event {
            progress.push(percent.unwrap_or_default());
        }
    })
    .await
    .unwrap();
    assert_eq!(counted, 4);
    assert_eq!(progress, [25.0, 50.0, 75.0, 100.0]);
    // An op the server does not have.
    let raw = client.transport();
    let outcome = collect_tool_outcome(raw.invoke("nope", json!({})), |_| {}).await;
    let error = outcome.unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (ErrorCode::ToolNotFound, "No such op: nope")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_is_broadcast_to_every_connection_a_read_is_not() {
    let h = Harness::start(WsServerOptions::new()).await;
    let writer = FixtureClient::new(h.client().await);
    let watcher = h.client().await;
    let mut watching = watcher.broadcasts();
    let mut own = writer.transport().broadcasts();
    writer
        .echo(Text {
            text: "read".into(),
        })
        .await
        .unwrap();
    writer
        .notes_add(NewNote {
            title: "shared".into(),
        })
        .await
        .unwrap();
    for receiver in [&mut watching, &mut own] {
        let message = tokio::time::timeout(PATIENCE, receiver.recv())
            .await
            .unwrap()
            .unwrap();
        // The first broadcast is the write: the read before it was not sent.
        assert_eq!(message.op, "notes.add");
        assert_eq!(message.payload, json!({"id": 1, "title": "shared"}));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_and_the_origin_are_checked_before_the_socket_opens() {
    let h =
        Harness::start(WsServerOptions::new().http(HttpServerOptions::new().api_key("k3y"))).await;
    let url = h.url();
    let connect = |options: WsClientOptions| WsClient::connect(&url, options);
    let status = |result: Result<WsClient, WsClientError>| match result {
        Ok(_) => 101,
        Err(WsClientError::Rejected { status, .. }) => status,
        Err(other) => panic!("{other}"),
    };
    assert_eq!(status(connect(WsClientOptions::new()).await), 401);
    assert_eq!(
        status(connect(WsClientOptions::new().api_key("nope")).await),
        401
    );
    assert_eq!(
        status(
            connect(
                WsClientOptions::new()
                    .api_key("k3y")
                    .origin("https://evil.example")
            )
            .await
        ),
        403
    );
    let ok = connect(
        WsClientOptions::new()
            .api_key("k3y")
            .origin("http://localhost:3000"),
    )
    .await
    .unwrap();
    let client = FixtureClient::new(ok);
    assert_eq!(client.echo(Text { text: "in".into() }).await.unwrap(), "in");
    // Browsers send the key as a query parameter.
    let by_query = WsClient::connect(
        &format!("{}?access_token=k3y", h.url()),
        WsClientOptions::new(),
    )
    .await
    .unwrap();
    assert!(!by_query.is_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversize_message_closes_with_1009_and_the_server_keeps_serving() {
    let h = Harness::start(WsServerOptions::new().max_message_bytes(1024)).await;
    let mut socket = h.raw().await;
    let big = json!({"op": "echo", "input": {"text": "x".repeat(4096)}});
    let _ = socket.send(Message::text(big.to_string())).await;
    let (code, reason) = close_of(&mut socket).await;
    assert_eq!(code, CloseCode::Size);
    assert_eq!(reason, "message too big");
    let client = FixtureClient::new(h.client().await);
    assert_eq!(client.echo(Text { text: "ok".into() }).await.unwrap(), "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_frames_get_error_replies_and_the_socket_keeps_working() {
    let h = Harness::start(WsServerOptions::new()).await;
    let mut socket = h.raw().await;
    socket
        .send(Message::binary(vec![0u8, 159, 146, 150]))
        .await
        .unwrap();
    let reply = next_json(&mut socket).await;
    assert_eq!(reply["type"], "error");
    assert_eq!(reply["code"], "INVALID_REQUEST");
    assert_eq!(
        reply["message"],
        "Binary frames are not supported; send JSON text frames"
    );
    for (frame, message) in [
        ("{\"op\": \"echo\"", "Invalid JSON"),
        ("42", "A request is a JSON object"),
        ("{\"reqId\": 1, \"op\": 5}", "op must be a string"),
        (
            "{\"reqId\": [1], \"op\": \"echo\"}",
            "reqId must be a string or a number",
        ),
        (
            "{\"reqId\": 2, \"op\": \"echo\", \"stream\": 1}",
            "stream must be true or false",
        ),
    ] {
        socket.send(Message::text(frame)).await.unwrap();
        let reply = next_json(&mut socket).await;
        assert_eq!(reply["code"], "INVALID_REQUEST", "{frame}");
        assert!(
            reply["message"].as_str().unwrap().starts_with(message),
            "{frame}: {reply}"
        );
    }
    // Wrong input types are the tool's INVALID_INPUT.
    send(
        &mut socket,
        json!({"reqId": 3, "op": "echo", "input": {"text": 5}}),
    )
    .await;
    let reply = next_json(&mut socket).await;
    assert_eq!(
        (reply["reqId"].clone(), reply["code"].clone()),
        (json!(3), json!("INVALID_INPUT"))
    );
    send(
        &mut socket,
        json!({"reqId": 4, "op": "echo", "input": {"text": "still here"}}),
    )
    .await;
    assert_eq!(
        next_json(&mut socket).await,
        json!({"type": "result", "reqId": 4, "result": "still here"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_past_the_in_flight_cap_gets_busy_replies_and_a_close_drops_the_calls() {
    let h = Harness::start(WsServerOptions::new().max_in_flight(4)).await;
    let mut socket = h.raw().await;
    for id in 0..10 {
        send(&mut socket, json!({"reqId": id, "op": "slow"})).await;
    }
    let mut busy = Vec::new();
    for _ in 0..6 {
        let reply = next_json(&mut socket).await;
        assert_eq!(reply["code"], "BUSY", "{reply}");
        busy.push(reply["reqId"].as_i64().unwrap());
    }
    assert_eq!(busy, [4, 5, 6, 7, 8, 9]);
    tokio::time::timeout(PATIENCE, async {
        while h.probe.running.load(Ordering::SeqCst) < 4 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    // The client goes away mid-call: all four handlers are dropped.
    drop(socket);
    h.dropped(4).await;
    assert_eq!(h.probe.running.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_drops_the_handler_and_replies_aborted() {
    let h = Harness::start(WsServerOptions::new()).await;
    let mut socket = h.raw().await;
    send(&mut socket, json!({"reqId": "s", "op": "slow"})).await;
    h.probe.started.notified().await;
    send(&mut socket, json!({"type": "cancel", "reqId": "s"})).await;
    let reply = next_json(&mut socket).await;
    assert_eq!(
        (reply["reqId"].clone(), reply["code"].clone()),
        (json!("s"), json!("ABORTED"))
    );
    h.dropped(1).await;

    // WsClient: dropping a call's stream cancels it.
    let client = h.client().await;
    let mut call = client.invoke("slow", json!({}));
    tokio::select! {
        _ = call.next() => panic!("slow never answers"),
        _ = h.probe.started.notified() => {}
    }
    drop(call);
    h.dropped(2).await;
    let client = FixtureClient::new(client);
    assert_eq!(
        client
            .echo(Text {
                text: "after".into()
            })
            .await
            .unwrap(),
        "after"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_peer_is_closed_by_the_keepalive() {
    let h = Harness::start(WsServerOptions::new().ping_interval(Duration::from_millis(50))).await;
    let mut socket = h.raw().await;
    // Read nothing (so no pong goes back) for a while.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (code, reason) = close_of(&mut socket).await;
    assert_eq!(
        (code, reason.as_str()),
        (CloseCode::Away, "keepalive timeout")
    );
    // A peer that reads (and so answers pings) stays connected across many
    // intervals. Intervals long enough that a busy machine still schedules
    // the client's pong within the two intervals the server waits.
    let h = Harness::start(WsServerOptions::new().ping_interval(Duration::from_millis(250))).await;
    let client = FixtureClient::new(h.client().await);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        client
            .echo(Text {
                text: "alive".into()
            })
            .await
            .unwrap(),
        "alive"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_every_socket_with_1001_and_drops_calls_in_flight() {
    let h = Harness::start(WsServerOptions::new()).await;
    let client = h.client().await;
    let call = tokio::spawn(collect_tool_outcome(
        client.invoke("slow", json!({})),
        |_| {},
    ));
    h.probe.started.notified().await;
    let Harness { server, probe } = h;
    server.shutdown().await.unwrap();
    let error = tokio::time::timeout(PATIENCE, call)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert!(
        error.message.contains("1001") && error.message.contains("server shutting down"),
        "{}",
        error.message
    );
    tokio::time::timeout(PATIENCE, async {
        while probe.dropped.load(Ordering::SeqCst) < 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    assert!(client.is_closed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_authentication_hook_judges_the_upgrade_and_names_the_caller() {
    let registry = ToolRegistry::builder()
        .state_arc(Arc::new(Probe::default()))
        .build();
    Fixture::register_tools(&registry).unwrap();
    // The same hook an MCP endpoint would take.
    let http = HttpServerOptions::new().authenticate(|request: &HttpRequestParts| {
        let alice = request
            .headers
            .get("authorization")
            .is_some_and(|value| value == "Bearer alice-token");
        async move {
            if alice {
                let principal = AuthenticatedPrincipal::new(
                    "alice",
                    PrincipalKind::Human,
                    PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
                );
                Ok(AuthContext::new(principal, AllowAll))
            } else {
                Err(HttpAuthRejection::unauthorized("unknown token"))
            }
        }
    });
    let options = WsServerOptions::new()
        .http(http)
        .identify(|request: &HttpRequestParts| {
            let auth = request.extensions.get::<AuthContext>().cloned();
            async move { auth.ok_or_else(|| WsRejection::unauthorized("no principal")) }
        });
    let callers = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&callers);
    let handler = WsHandler::builder(&registry).authorize(
        move |_tool: &ToolDefinition, caller: &AuthContext, _input: &Value| {
            seen.lock().unwrap().push(caller.principal().id.clone());
            Ok::<_, HookError>(true)
        },
    );
    let server = serve_ws("127.0.0.1:0".parse().unwrap(), handler, options)
        .await
        .unwrap();
    let url = server.url();
    let status = |result: Result<WsClient, WsClientError>| match result {
        Ok(_) => 101,
        Err(WsClientError::Rejected { status, .. }) => status,
        Err(other) => panic!("{other}"),
    };
    let connect = |options: WsClientOptions| WsClient::connect(&url, options);
    assert_eq!(status(connect(WsClientOptions::new()).await), 401);
    assert_eq!(
        status(connect(WsClientOptions::new().api_key("mallory-token")).await),
        401
    );
    let alice = connect(WsClientOptions::new().api_key("alice-token"))
        .await
        .unwrap();
    let client = FixtureClient::new(alice);
    assert_eq!(client.echo(Text { text: "hi".into() }).await.unwrap(), "hi");
    assert_eq!(*callers.lock().unwrap(), ["alice"]);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_public_bind_without_a_key_refuses_to_start() {
    let registry = ToolRegistry::new();
    let error = serve_ws(
        "0.0.0.0:0".parse().unwrap(),
        WsHandler::builder(&registry),
        WsServerOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, HttpServeError::Insecure { .. }));
    assert!(
        error.to_string().contains("HttpServerOptions::api_key"),
        "{error}"
    );
}
