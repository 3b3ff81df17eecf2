//! A good token is accepted on every surface — MCP in the session era
//! (2025) and the stateless one (2026), and the WebSocket upgrade — RS256
//! and ES256 alike; the tool runs as the token's principal and the receipt
//! names issuer, subject and client id.

use futures::{SinkExt, StreamExt};
use gonk_tools::adapters::mcp::McpEra;
use gonk_tools::prelude::*;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use crate::support::{bearer, Protected};

async fn search(client: &gonk_tools::adapters::mcp::McpClient) -> Value {
    collect_tool_outcome(client.invoke("notes.search", json!({"query": "q"})), |_| {})
        .await
        .expect("the call succeeds")
        .data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_mcp_eras_run_the_call_as_the_tokens_principal() {
    let server = Protected::start().await;
    let token = server.token("notes:read");
    for era in [McpEra::Session, McpEra::Stateless] {
        let client = server.client(era, &token).await.expect("connects");
        assert_eq!(client.era(), era);
        assert_eq!(search(&client).await, json!("alice found: q"));
        client.close().await.unwrap();
    }
    assert_eq!(server.runs(), 2);
    let receipts = server.invoke_receipts();
    assert_eq!(receipts.len(), 2, "{receipts:?}");
    for (issuer, subject, client_id) in receipts {
        assert_eq!(issuer, server.issuer.issuer());
        assert_eq!(subject, "alice");
        assert_eq!(client_id, "claude-desktop");
    }
    // The receipts never hold the token.
    let all = serde_json::to_string(&server.audit.snapshot()).unwrap();
    assert!(!all.contains(&token));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_es256_token_is_accepted_too() {
    let server = Protected::start().await;
    let mut claims = server.issuer.claims(&server.url);
    claims.kid = "ec-a".into();
    claims.body["sub"] = json!("bob");
    let token = server.issuer.sign(&claims);
    let client = server.client(McpEra::Stateless, &token).await.unwrap();
    assert_eq!(search(&client).await, json!("bob found: q"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_websocket_upgrade_takes_the_same_token() {
    let server = Protected::start().await;
    let ws_url = server
        .url
        .replace("http://", "ws://")
        .replace("/mcp", "/ws");

    // Without a token: 401 with the resource server's challenge, no socket.
    let refused = tokio_tungstenite::connect_async(ws_url.as_str())
        .await
        .expect_err("no token, no socket");
    let tokio_tungstenite::tungstenite::Error::Http(response) = refused else {
        panic!("not an HTTP refusal: {refused}");
    };
    assert_eq!(response.status(), 401);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("resource_metadata="), "{challenge}");

    let mut request = ws_url.as_str().into_client_request().unwrap();
    request.headers_mut().insert(
        "authorization",
        bearer(&server.token("notes:read")).parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("the upgrade passes");
    socket
        .send(Message::text(
            json!({"reqId": 1, "op": "notes.search", "input": {"query": "ws"}}).to_string(),
        ))
        .await
        .unwrap();
    let reply = loop {
        let frame = socket.next().await.expect("a reply").expect("a frame");
        if let Message::Text(text) = frame {
            let value: Value = serde_json::from_str(&text).unwrap();
            if value["type"] == "result" || value["type"] == "error" {
                break value;
            }
        }
    };
    assert_eq!(reply["result"], json!("alice found: ws"), "{reply}");
    assert_eq!(
        server.invoke_receipts(),
        [(
            server.issuer.issuer().to_owned(),
            "alice".to_owned(),
            "claude-desktop".to_owned()
        )]
    );
}
