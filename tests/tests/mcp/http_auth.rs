//! The host's authentication hook over HTTP: it is the only source of auth
//! (`tools/list` shows only what `tool.discover` allows, `tools/call` runs
//! as the hook's principal, a hidden tool answers like a missing one), a
//! rejected credential gets 401 with a Bearer challenge, and a session is
//! pinned to the principal that opened it: another principal presenting
//! its session id gets the unknown-session answer.

use std::net::SocketAddr;

use gonk_tools::adapters::http::{
    HttpAuthRejection, HttpRequestParts, HttpServer, HttpServerOptions,
};
use gonk_tools::adapters::mcp::{
    serve_http, McpClient, McpHttpClientOptions, McpHttpOptions, McpServerOptions,
};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    policy_fn, AuthContext, AuthMethod, AuthenticatedPrincipal, AuthorizationAction,
    AuthorizationDecision, PrincipalIdentity, PrincipalKind,
};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::StatusCode;

fn principal(id: &str) -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        id,
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", id, AuthMethod::Oauth),
    )
}

/// Alice may see and call everything; Bob may not discover `admin.reset`.
fn auth_for(id: &str) -> AuthContext {
    AuthContext::new(
        principal(id),
        policy_fn(|request| {
            let admin = request.resource.target.as_deref() == Some("admin.reset");
            let bob = request.principal.id == "bob";
            Ok(match request.action {
                AuthorizationAction::Discover | AuthorizationAction::Invoke if admin && bob => {
                    AuthorizationDecision::deny("admins only")
                }
                _ => AuthorizationDecision::allow(),
            })
        }),
    )
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("whoami")
                .description("The calling principal's id.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    Ok::<_, ToolError>(
                        ctx.auth()
                            .map(|auth| auth.principal().id.clone())
                            .unwrap_or_else(|| "anonymous".to_owned()),
                    )
                })
                .build(),
            ToolDefinition::builder("admin.reset")
                .description("An admin-only tool.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("reset") })
                .build(),
        ])
        .unwrap();
    registry
}

async fn server() -> HttpServer {
    let http = HttpServerOptions::new().authenticate(|request: &HttpRequestParts| {
        let token = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        async move {
            match token.as_deref() {
                Some("alice-token") => Ok(auth_for("alice")),
                Some("bob-token") => Ok(auth_for("bob")),
                _ => Err(HttpAuthRejection::unauthorized("unknown or missing token")),
            }
        }
    });
    let options = McpHttpOptions::new(McpServerOptions::new("auth-test", "1.0.0")).http(http);
    serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry(), options)
        .await
        .unwrap()
}

async fn connect(url: &str, token: &str) -> McpClient {
    McpClient::connect_http(url, McpHttpClientOptions::new().api_key(token))
        .await
        .unwrap()
}

async fn names(client: &McpClient) -> Vec<String> {
    client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_call_run_as_the_hooks_principal() {
    let server = server().await;
    let alice = connect(&server.url(), "alice-token").await;
    let bob = connect(&server.url(), "bob-token").await;

    assert_eq!(names(&alice).await, ["whoami", "admin.reset"]);
    assert_eq!(names(&bob).await, ["whoami"]);

    for (client, id) in [(&alice, "alice"), (&bob, "bob")] {
        let output = collect_tool_outcome(client.invoke("whoami", json!({})), |_| {})
            .await
            .unwrap();
        assert_eq!(output.data, id);
    }
    let reset = collect_tool_outcome(alice.invoke("admin.reset", json!({})), |_| {})
        .await
        .unwrap();
    assert_eq!(reset.data, "reset");

    // Hidden for Bob: the same answer as a tool that does not exist.
    let hidden = collect_tool_outcome(bob.invoke("admin.reset", json!({})), |_| {})
        .await
        .unwrap_err();
    let missing = collect_tool_outcome(bob.invoke("admin.nope", json!({})), |_| {})
        .await
        .unwrap_err();
    assert_eq!(hidden.code, ErrorCode::ToolNotFound);
    assert_eq!(hidden.message, "Unknown tool: admin.reset");
    assert_eq!(missing.code, ErrorCode::ToolNotFound);
    assert_eq!(missing.message, "Unknown tool: admin.nope");

    alice.close().await.unwrap();
    bob.close().await.unwrap();
    server.shutdown().await.unwrap();
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-http","version":"1.0.0"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

async fn post(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &str,
) -> reqwest::Response {
    let mut request = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .post(url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_owned());
    if let Some(token) = token {
        request = request.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_credential_gets_401_and_sessions_are_pinned_to_their_principal() {
    let server = server().await;
    let url = server.url();

    let rejected = post(&url, Some("forged-token"), None, INITIALIZE).await;
    assert_eq!(rejected.status(), StatusCode::UNAUTHORIZED);
    let challenge = rejected.headers()[WWW_AUTHENTICATE]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    assert_eq!(
        post(&url, None, None, INITIALIZE).await.status(),
        StatusCode::UNAUTHORIZED
    );

    let opened = post(&url, Some("alice-token"), None, INITIALIZE).await;
    assert_eq!(opened.status(), StatusCode::OK);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(opened.bytes().await.unwrap());

    // Bob presents Alice's session: the unknown-session answer.
    let stolen = post(&url, Some("bob-token"), Some(&session), PING).await;
    assert_eq!(stolen.status(), StatusCode::NOT_FOUND);
    let unknown = post(&url, Some("bob-token"), Some("no-such-session"), PING).await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert_eq!(stolen.text().await.unwrap(), unknown.text().await.unwrap());

    // Alice's own session keeps working.
    let own = post(&url, Some("alice-token"), Some(&session), PING).await;
    assert_eq!(own.status(), StatusCode::OK);
    let body = own.text().await.unwrap();
    assert!(body.contains(r#""id":2"#), "{body}");

    server.shutdown().await.unwrap();
}
