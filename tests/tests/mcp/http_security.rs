//! HTTP security of the MCP adapter, from outside: real sockets, real HTTP
//! requests.
//!
//! * a non-loopback bind without an API key refuses to start (library and
//!   `notes serve`);
//! * a missing or wrong key gets 401 with a `WWW-Authenticate: Bearer`
//!   challenge; the right key (raw HTTP or the Rust MCP client) gets in;
//! * a foreign Host or Origin gets 403 (DNS rebinding);
//! * a 5 MiB body gets 413 and the server keeps serving.

use std::net::SocketAddr;

use gonk_tools::adapters::http::{HttpServeError, HttpServer, HttpServerOptions};
use gonk_tools::adapters::mcp::{
    serve_http, McpClient, McpHttpClientOptions, McpHttpOptions, McpServerOptions,
};
use gonk_tools::prelude::*;
use gonk_tools_tests::workspace::notes_command;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN, WWW_AUTHENTICATE};
use reqwest::StatusCode;

#[derive(Deserialize, JsonSchema)]
struct Echo {
    text: String,
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("echo")
                .description("Echo the text.")
                .approval(ApprovalTier::Read)
                .handler(|input: Echo, _ctx| async move { Ok::<_, ToolError>(input.text) })
                .build(),
        )
        .expect("echo registers");
    registry
}

fn options() -> McpHttpOptions {
    McpHttpOptions::new(McpServerOptions::new("security-test", "1.0.0"))
}

async fn loopback(options: McpHttpOptions) -> HttpServer {
    serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry(), options)
        .await
        .expect("a loopback server starts")
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-http","version":"1.0.0"}}}"#;

fn post(url: &str, body: impl Into<reqwest::Body>) -> reqwest::RequestBuilder {
    gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .post(url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body)
}

#[tokio::test]
async fn a_non_loopback_bind_without_a_key_refuses_to_start() {
    let anywhere = SocketAddr::from(([0, 0, 0, 0], 0));
    let error = serve_http(anywhere, registry(), options())
        .await
        .expect_err("0.0.0.0 without a key must not start");
    assert!(matches!(error, HttpServeError::Insecure { .. }));
    let message = error.to_string();
    assert!(message.contains("API key"), "{message}");

    // With a key, or the explicit insecure flag, it starts.
    let keyed = serve_http(
        anywhere,
        registry(),
        options().http(HttpServerOptions::new().api_key("k")),
    )
    .await
    .expect("0.0.0.0 with a key starts");
    keyed.shutdown().await.expect("shuts down");
    let insecure = serve_http(
        anywhere,
        registry(),
        options().http(HttpServerOptions::new().allow_insecure_remote(true)),
    )
    .await
    .expect("0.0.0.0 with the insecure flag starts");
    insecure.shutdown().await.expect("shuts down");
}

#[test]
fn notes_serve_refuses_a_non_loopback_host_without_a_key() {
    let output = notes_command()
        .args([
            "--db", ":memory:", "serve", "--host", "0.0.0.0", "--port", "0",
        ])
        .output()
        .expect("notes runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to serve MCP on 0.0.0.0"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_missing_or_wrong_key_gets_401_with_a_bearer_challenge() {
    let server = loopback(options().http(HttpServerOptions::new().api_key("right-key"))).await;
    let url = server.url();

    let missing = post(&url, INITIALIZE).send().await.expect("a response");
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let challenge = missing.headers()[WWW_AUTHENTICATE]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.starts_with("Bearer"), "{challenge}");

    let wrong = post(&url, INITIALIZE)
        .header(AUTHORIZATION, "Bearer wrong-key")
        .send()
        .await
        .expect("a response");
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let challenge = wrong.headers()[WWW_AUTHENTICATE]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    assert!(challenge.contains("invalid_token"), "{challenge}");

    let right = post(&url, INITIALIZE)
        .header(AUTHORIZATION, "Bearer right-key")
        .send()
        .await
        .expect("a response");
    assert_eq!(right.status(), StatusCode::OK);
    drop(right);

    // The Rust MCP client: the right key connects, a wrong one does not.
    let client = McpClient::connect_http(&url, McpHttpClientOptions::new().api_key("right-key"))
        .await
        .expect("the right key connects");
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "echo");
    client.close().await.expect("closes");
    assert!(
        McpClient::connect_http(&url, McpHttpClientOptions::new().api_key("wrong-key"))
            .await
            .is_err()
    );

    server.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn a_foreign_host_or_origin_gets_403() {
    let server = loopback(options()).await;
    let url = server.url();

    let foreign_host = post(&url, INITIALIZE)
        .header(HOST, "evil.example.com")
        .send()
        .await
        .expect("a response");
    assert_eq!(foreign_host.status(), StatusCode::FORBIDDEN);

    let foreign_origin = post(&url, INITIALIZE)
        .header(ORIGIN, "http://evil.example.com")
        .send()
        .await
        .expect("a response");
    assert_eq!(foreign_origin.status(), StatusCode::FORBIDDEN);

    let local_origin = post(&url, INITIALIZE)
        .header(ORIGIN, format!("http://{}", server.local_addr()))
        .send()
        .await
        .expect("a response");
    assert_eq!(local_origin.status(), StatusCode::OK);
    drop(local_origin);

    server.shutdown().await.expect("shuts down");
}

#[tokio::test]
async fn a_5_mib_body_gets_413_and_the_server_keeps_serving() {
    let server = loopback(options().http(HttpServerOptions::new().api_key("k"))).await;
    let url = server.url();

    // A syntactically plausible JSON-RPC message padded past 4 MiB.
    let padding = "x".repeat(5 * 1024 * 1024);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"{padding}","version":"1"}}}}}}"#
    );
    let large = post(&url, body)
        .header(AUTHORIZATION, "Bearer k")
        .send()
        .await
        .expect("a response");
    assert_eq!(large.status(), StatusCode::PAYLOAD_TOO_LARGE);

    let after = post(&url, INITIALIZE)
        .header(AUTHORIZATION, "Bearer k")
        .send()
        .await
        .expect("a response");
    assert_eq!(after.status(), StatusCode::OK);
    drop(after);

    server.shutdown().await.expect("shuts down");
}
