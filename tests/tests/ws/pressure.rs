//! WebSocket connections under pressure, as MCP sessions are
//! (`mcp::pressure`): at the cap the least recently used idle connection
//! (no call running) is closed with code 1013 to make room, one principal
//! at its share only ever closes its own, and an upgrade gets `503` only
//! when every candidate is busy.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use gonk_tools::adapters::http::{
    HttpAuthRejection, HttpRequestParts, HttpServer, HttpServerOptions,
};
use gonk_tools::adapters::ws::{serve_ws, WsHandler, WsServerOptions};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    AllowAll, AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind,
};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

/// Only a guard against a hang.
const PATIENCE: Duration = Duration::from_secs(30);

type Raw =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn start(options: WsServerOptions) -> HttpServer {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("echo")
                .description("Echoes its input.")
                .approval(ApprovalTier::Read)
                .handler(|input: Value, _ctx: ToolContext| async move { Ok::<_, ToolError>(input) })
                .build(),
        )
        .unwrap();
    registry
        .register(
            ToolDefinition::builder("wait")
                .description("Runs until cancelled.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, _ctx: ToolContext| async move {
                    std::future::pending::<()>().await;
                    Ok::<_, ToolError>("never")
                })
                .build(),
        )
        .unwrap();
    serve_ws(
        "127.0.0.1:0".parse().unwrap(),
        WsHandler::builder(&registry),
        options,
    )
    .await
    .unwrap()
}

/// `Bearer alice` and `Bearer bob` are two principals.
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

/// Connects as `who` (none: no credentials); the upgrade's status if it
/// was refused.
async fn connect(url: &str, who: Option<&str>) -> Result<Raw, u16> {
    let mut request = url.into_client_request().unwrap();
    if let Some(who) = who {
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {who}").parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            Err(response.status().as_u16())
        }
        Err(other) => panic!("{other}"),
    }
}

/// Sends a call and reads frames until its answer.
async fn call(socket: &mut Raw, id: u64, op: &str, input: Value) -> Value {
    let frame = json!({"reqId": id, "op": op, "input": input}).to_string();
    socket.send(Message::text(frame)).await.unwrap();
    loop {
        let frame = tokio::time::timeout(PATIENCE, socket.next())
            .await
            .expect("an answer")
            .expect("the socket is open")
            .expect("a frame");
        if let Message::Text(text) = frame {
            let value: Value = serde_json::from_str(text.as_str()).unwrap();
            if value["reqId"] == id {
                return value;
            }
        }
    }
}

/// Reads until the server's close frame: its code.
async fn close_code(socket: &mut Raw) -> CloseCode {
    loop {
        let frame = tokio::time::timeout(PATIENCE, socket.next())
            .await
            .expect("the server closes");
        match frame {
            Some(Ok(Message::Close(Some(frame)))) => return frame.code,
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_1100_idle_connections_a_new_client_connects_at_once() {
    // The default cap (1,024), one principal.
    let server = start(WsServerOptions::new()).await;
    let url = server.url();
    let mut sockets = Vec::new();
    for _ in 0..1100 {
        sockets.push(connect(&url, None).await.expect("room is made"));
    }
    let mut fresh = connect(&url, None).await.expect("a new client connects");
    let answer = call(&mut fresh, 1, "echo", json!({"hi": 1})).await;
    assert_eq!(answer["result"], json!({"hi": 1}), "{answer}");
    // The 77 least recently used (the oldest) were closed with "try again
    // later", so their clients reconnect; the newest still answers.
    for socket in &mut sockets[..77] {
        assert_eq!(close_code(socket).await, CloseCode::Again);
    }
    let last = sockets.last_mut().unwrap();
    let answer = call(last, 2, "echo", json!({"still": "here"})).await;
    assert_eq!(answer["result"], json!({"still": "here"}), "{answer}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principal_at_its_share_closes_only_its_own_connections() {
    // A cap of 16, a share of 2 each once two principals are connected.
    let server = start(
        WsServerOptions::new()
            .http(two_principals())
            .max_connections(16),
    )
    .await;
    let url = server.url();
    let mut bob = Vec::new();
    for _ in 0..2 {
        bob.push(connect(&url, Some("bob")).await.unwrap());
    }
    let mut alice = Vec::new();
    for _ in 0..5 {
        alice.push(connect(&url, Some("alice")).await.unwrap());
    }
    for socket in &mut alice[..3] {
        assert_eq!(close_code(socket).await, CloseCode::Again);
    }
    for (i, socket) in bob.iter_mut().enumerate() {
        let answer = call(socket, i as u64, "echo", json!({"who": "bob"})).await;
        assert_eq!(
            answer["result"]["who"], "bob",
            "alice never closes bob's: {answer}"
        );
    }
    // Alice's two busy (a call running in each): her next upgrade is
    // refused with 503, and bob's connections stay.
    for (i, socket) in alice[3..].iter_mut().enumerate() {
        let frame = json!({"reqId": 100 + i, "op": "wait"}).to_string();
        socket.send(Message::text(frame)).await.unwrap();
    }
    // The calls are running once a later frame on the same socket is
    // answered (frames are handled in order).
    for (i, socket) in alice[3..].iter_mut().enumerate() {
        let answer = call(socket, 200 + i as u64, "echo", json!({"n": 1})).await;
        assert_eq!(answer["result"]["n"], 1, "{answer}");
    }
    assert_eq!(connect(&url, Some("alice")).await.err(), Some(503));
    for (i, socket) in bob.iter_mut().enumerate() {
        let answer = call(socket, 300 + i as u64, "echo", json!({"who": "bob"})).await;
        assert_eq!(answer["result"]["who"], "bob", "{answer}");
    }
    server.shutdown().await.unwrap();
}
