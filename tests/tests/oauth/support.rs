//! A protected server in this process: two notes-like tools that count
//! their runs, an audit sink, MCP at `/mcp` and WebSocket at `/ws` on one
//! port, behind a `ProtectedResource` over the mock issuer.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gonk_tools::adapters::http::oauth::{JwtVerifier, ProtectedResource, TokenVerifier};
use gonk_tools::adapters::http::{HttpServer, HttpServerOptions};
use gonk_tools::adapters::mcp::{
    serve_http, McpClient, McpEra, McpHttpClientOptions, McpHttpOptions, McpServerOptions,
    WriteToolPolicy,
};
use gonk_tools::adapters::ws::{ws_router, HookError, WsHandler, WsRejection, WsServerOptions};
use gonk_tools::prelude::*;
use gonk_tools::security::{ApproveAll, AuthContext, InMemoryAuditSink, SecurityOptions};
use gonk_tools_tests::mock_issuer::MockIssuer;
use serde_json::{json, Value};

pub struct Protected {
    pub issuer: MockIssuer,
    pub server: HttpServer,
    /// `http://127.0.0.1:PORT/mcp`: the resource URI, the audience.
    pub url: String,
    pub runs: Arc<AtomicUsize>,
    pub audit: Arc<InMemoryAuditSink>,
}

#[derive(Deserialize, JsonSchema)]
struct Search {
    query: String,
}

#[derive(Deserialize, JsonSchema)]
struct Create {
    title: String,
}

fn registry(runs: &Arc<AtomicUsize>, audit: &Arc<InMemoryAuditSink>) -> ToolRegistry {
    let registry = ToolRegistry::builder()
        .security(
            SecurityOptions::new()
                .approval_provider(ApproveAll)
                .audit_sink(Arc::clone(audit)),
        )
        .build();
    let (searches, creates) = (Arc::clone(runs), Arc::clone(runs));
    registry
        .register_all([
            ToolDefinition::builder("notes.search")
                .description("Search notes.")
                .approval(ApprovalTier::Read)
                .handler(move |input: Search, ctx: ToolContext| {
                    let runs = Arc::clone(&searches);
                    async move {
                        runs.fetch_add(1, Ordering::SeqCst);
                        let who = ctx
                            .auth()
                            .map(|auth| auth.principal().identity.subject.clone())
                            .unwrap_or_default();
                        Ok::<_, ToolError>(format!("{who} found: {}", input.query))
                    }
                })
                .build(),
            ToolDefinition::builder("notes.create")
                .description("Create a note.")
                .approval(ApprovalTier::Write)
                .handler(move |input: Create, _ctx| {
                    let runs = Arc::clone(&creates);
                    async move {
                        runs.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, ToolError>(format!("created: {}", input.title))
                    }
                })
                .build(),
        ])
        .expect("registers");
    registry
}

impl Protected {
    /// JWTs of the mock issuer; `notes.create` needs `notes:write`.
    pub async fn start() -> Protected {
        let issuer = MockIssuer::start().await;
        let verifier = JwtVerifier::new(issuer.issuer()).expect("a loopback issuer");
        Self::start_with(issuer, verifier).await
    }

    pub async fn start_with(issuer: MockIssuer, verifier: impl TokenVerifier) -> Protected {
        let resource = ProtectedResource::new(verifier)
            .authorization_server(issuer.issuer())
            .scopes_supported(["notes:read", "notes:write"])
            .require_scopes("notes.create", ["notes:write"]);
        let http = HttpServerOptions::new().protected_resource(resource);
        let runs = Arc::new(AtomicUsize::new(0));
        let audit = Arc::new(InMemoryAuditSink::new());
        let registry = registry(&runs, &audit);
        // Each socket runs as the principal the upgrade's token made.
        let handler = WsHandler::<AuthContext>::builder(&registry).context(|auth: &AuthContext| {
            Ok::<_, HookError>(ToolContext::new().with_auth(auth.clone()))
        });
        let ws_options = WsServerOptions::new().http(http.clone()).identify(
            |request: &axum::http::request::Parts| {
                let auth = request.extensions.get::<AuthContext>().cloned();
                async move { auth.ok_or_else(|| WsRejection::unauthorized("no token")) }
            },
        );
        let ws = ws_router(handler, ws_options);
        let options = McpHttpOptions::new(
            McpServerOptions::new("protected", "1.0.0").write_policy(WriteToolPolicy::Permissive),
        )
        .http(http)
        .also_serve(ws);
        let server = serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry, options)
            .await
            .expect("serves");
        let url = server.url();
        Protected {
            issuer,
            server,
            url,
            runs,
            audit,
        }
    }

    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }

    /// A valid RS256 token for this server with `scope`.
    pub fn token(&self, scope: &str) -> String {
        let mut claims = self.issuer.claims(&self.url);
        claims.body["scope"] = json!(scope);
        self.issuer.sign(&claims)
    }

    /// `McpClient` in `era` with `token` as its bearer.
    pub async fn client(&self, era: McpEra, token: &str) -> Result<McpClient, String> {
        McpClient::builder()
            .era(era)
            .connect_http(&self.url, McpHttpClientOptions::new().api_key(token))
            .await
            .map_err(|error| error.to_string())
    }

    /// The receipts' `(subjectIssuer, subjectId, actorSubject)` of
    /// `tool.invoke` decisions.
    pub fn invoke_receipts(&self) -> Vec<(String, String, String)> {
        self.audit
            .snapshot()
            .into_iter()
            .map(|receipt| serde_json::to_value(receipt).unwrap())
            .filter(|receipt| receipt["action"] == "tool.invoke")
            .map(|receipt| {
                let text = |key: &str| receipt[key].as_str().unwrap_or_default().to_owned();
                (
                    text("subjectIssuer"),
                    text("subjectId"),
                    text("actorSubject"),
                )
            })
            .collect()
    }
}

/// A raw `tools/call` of `notes.search` in the 2026 era, with these
/// headers; the status, the `WWW-Authenticate` value and the body.
pub async fn raw_call(url: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    raw_call_of(url, "notes.search", json!({"query": "raw"}), headers).await
}

pub async fn raw_call_of(
    url: &str,
    tool: &str,
    arguments: Value,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let body = json!({
        "jsonrpc": "2.0", "id": "c1", "method": "tools/call",
        "params": {
            "name": tool, "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    let mut request = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.unwrap_or_default();
    (status, challenge, text)
}

pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}
