//! HTTPS on the crate's own HTTP client (`OutboundHttp`: rustls on ring):
//! the resource server discovers a remote issuer's metadata and keys over
//! TLS when its CA is trusted — added in code, or named by `SSL_CERT_FILE`
//! for `notes serve` — and refuses every token, fetching nothing, when the
//! certificate does not chain to a trusted root; `McpClient` reaches an
//! `https://` MCP endpoint, and refuses an untrusted one with an error
//! that says why. The TLS servers are the test's own (a CA made at run
//! time, a terminator in front of the mock issuer or the MCP server).

use std::net::SocketAddr;

use gonk_tools::adapters::http::oauth::{JwtVerifier, TokenRejectionKind, TokenVerifier};
use gonk_tools::adapters::http::{HttpServerOptions, OutboundHttp};
use gonk_tools::adapters::mcp::{
    serve_http, McpClient, McpEra, McpHttpClientOptions, McpHttpOptions, McpServerOptions,
};
use gonk_tools::prelude::*;
use gonk_tools_tests::mock_issuer::MockIssuer;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::tls::TestCa;
use gonk_tools_tests::workspace::notes_serve_command;
use serde_json::json;

use crate::support::{bearer, raw_call, raw_call_of, Protected};

fn trusting(ca: &TestCa) -> OutboundHttp {
    OutboundHttp::new()
        .root_certificates_pem(ca.ca_pem())
        .expect("the test CA is a certificate")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verifier_finds_an_https_issuers_keys_when_its_ca_is_trusted() {
    let ca = TestCa::new("issuer");
    let issuer = MockIssuer::start_tls(&ca).await;
    assert!(issuer.issuer().starts_with("https://127.0.0.1:"));
    let verifier = JwtVerifier::new(issuer.issuer())
        .expect("an https issuer")
        .http_client(trusting(&ca).client().expect("a client"));
    let server = Protected::start_with(issuer, verifier).await;

    let (status, _, body) = raw_call(
        &server.url,
        &[("authorization", &bearer(&server.token("notes:read")))],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("alice found"), "{body}");
    assert_eq!(
        server.issuer.jwks_fetches(),
        1,
        "metadata and keys over TLS"
    );
    assert_eq!(server.runs(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_issuer_certificate_fails_closed() {
    let ca = TestCa::new("issuer");
    let issuer = MockIssuer::start_tls(&ca).await;
    let mut claims = issuer.claims("https://notes.example/mcp");
    claims.body["scope"] = json!("notes:read");
    let token = issuer.sign(&claims);

    // The platform's roots, and a pinned CA that is not the issuer's.
    let stranger = TestCa::new("stranger");
    for http in [OutboundHttp::new(), trusting(&stranger).only_added_roots()] {
        let verifier = JwtVerifier::new(issuer.issuer())
            .unwrap()
            .http_client(http.client().unwrap());
        let refused = verifier
            .verify(&token, "https://notes.example/mcp")
            .await
            .expect_err("keys that came over an untrusted connection are no keys");
        assert_eq!(
            refused.kind(),
            TokenRejectionKind::Unavailable,
            "{refused:?}"
        );
    }
    assert_eq!(
        issuer.jwks_fetches(),
        0,
        "no request got past the handshake"
    );

    // Behind the resource server: 401, nothing run.
    let verifier = JwtVerifier::new(issuer.issuer()).unwrap();
    let server = Protected::start_with(issuer, verifier).await;
    let (status, challenge, _) = raw_call(
        &server.url,
        &[("authorization", &bearer(&server.token("notes:read")))],
    )
    .await;
    assert_eq!(status, 401, "{challenge}");
    assert_eq!(server.runs(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_serve_trusts_the_ca_ssl_cert_file_names() {
    let ca = TestCa::new("issuer");
    let issuer = MockIssuer::start_tls(&ca).await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.ca_pem()).unwrap();

    for (trusted, db) in [(true, "trusted.db"), (false, "untrusted.db")] {
        let mut command =
            notes_serve_command(&dir.path().join(db), &["--auth-issuer", issuer.issuer()]);
        if trusted {
            command.env("SSL_CERT_FILE", &ca_file);
        } else {
            command.env_remove("SSL_CERT_FILE");
        }
        let server = tokio::task::block_in_place(|| ServerProcess::start(command));
        let mut claims = issuer.claims(&server.url);
        claims.body["scope"] = json!("notes:read");
        let token = issuer.sign(&claims);
        if trusted {
            let client = McpClient::builder()
                .era(McpEra::Stateless)
                .connect_http(&server.url, McpHttpClientOptions::new().api_key(&token))
                .await
                .expect("the issuer's keys came over TLS");
            collect_tool_outcome(client.invoke("notes.search", json!({"query": "x"})), |_| {})
                .await
                .expect("a verified token searches");
        } else {
            let (status, challenge, _) = raw_call_of(
                &server.url,
                "notes.search",
                json!({"query": "x"}),
                &[("authorization", &bearer(&token))],
            )
            .await;
            assert_eq!(status, 401, "without the CA no token verifies: {challenge}");
        }
    }
}

/// An MCP server behind TLS at `https://127.0.0.1:PORT/mcp`.
async fn mcp_behind_tls(ca: &TestCa) -> (String, gonk_tools::adapters::http::HttpServer) {
    let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let front_addr = front.local_addr().unwrap();
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("echo")
                .description("Echo.")
                .approval(ApprovalTier::Read)
                .handler(|input: serde_json::Value, _ctx| async move { Ok::<_, ToolError>(input) })
                .build(),
        )
        .unwrap();
    let options = McpHttpOptions::new(McpServerOptions::new("tls", "1.0.0"))
        .http(HttpServerOptions::new().allowed_hosts([front_addr.to_string()]));
    let server = serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry, options)
        .await
        .expect("serves");
    let backend: SocketAddr = server
        .url()
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    ca.terminate(front, backend);
    (format!("https://{front_addr}/mcp"), server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_client_reaches_an_https_endpoint_whose_ca_it_trusts() {
    let ca = TestCa::new("mcp");
    let (url, _server) = mcp_behind_tls(&ca).await;
    for era in [McpEra::Session, McpEra::Stateless] {
        let client = McpClient::builder()
            .era(era)
            .connect_http(&url, McpHttpClientOptions::new().outbound(trusting(&ca)))
            .await
            .expect("connects over TLS");
        let echoed = collect_tool_outcome(client.invoke("echo", json!({"over": "tls"})), |_| {})
            .await
            .expect("calls over TLS");
        assert_eq!(echoed.data, json!({"over": "tls"}));
        client.close().await.unwrap();
    }

    let refused = McpClient::builder()
        .connect_http(&url, McpHttpClientOptions::new())
        .await
        .expect_err("the test CA is not among the platform's roots");
    let message = refused.to_string();
    assert!(
        message.contains("certificate") || message.contains("UnknownIssuer"),
        "the error says it is the certificate: {message}"
    );
}
