//! A small OAuth-protected MCP server for the client-side tests: one
//! listener serving an MCP endpoint of ours (`/mcp`) behind a bearer-token
//! check, its protected resource metadata, and a toy authorization server
//! (metadata, dynamic registration, an authorization endpoint that
//! approves at once, a token endpoint for the code, refresh and
//! client-credentials grants, PKCE S256 checked). Everything it is asked is
//! recorded, so a test can say which requests the client made.
//!
//! `notes.search` needs `notes:read`; `notes.create` needs `notes:write`,
//! and calling it with a token that lacks it answers `403
//! insufficient_scope` (the tool is listed either way). `whoami` answers
//! the token's subject.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Form, Query, State};
use axum::http::{header, HeaderMap, Request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::Engine;
use futures::future::BoxFuture;
use gonk_tools::adapters::http::{
    HttpAuthRejection, HttpRequestParts, HttpServer, HttpServerOptions,
};
use gonk_tools::adapters::mcp::oauth::AuthorizationRedirect;
use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    policy_fn, AuthContext, AuthMethod, AuthenticatedPrincipal, AuthorizationDecision,
    PrincipalIdentity, PrincipalKind,
};
use serde_json::Value;
use sha2::Digest;

/// What the mock does beyond the defaults.
#[derive(Clone, Debug)]
pub struct MockOptions {
    /// The machine client the token endpoint knows (client credentials).
    pub machine: (String, String),
    /// Seconds an access token lives.
    pub lifetime: u64,
    /// Every `tools/call` is refused with `403 insufficient_scope` naming a
    /// scope never asked before (a server no step-up satisfies).
    pub never_satisfied: bool,
    /// The scope the `401` challenge names (none: the client falls back to
    /// the metadata's `scopes_supported`).
    pub challenge_scope: Option<String>,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            machine: ("indexer".to_owned(), "indexer-secret".to_owned()),
            lifetime: 3600,
            never_satisfied: false,
            challenge_scope: Some("notes:read".to_owned()),
        }
    }
}

/// A token the mock issued.
#[derive(Clone, Debug)]
struct Issued {
    subject: String,
    scopes: Vec<String>,
}

/// A code the authorization endpoint handed out.
struct Pending {
    client_id: String,
    challenge: String,
    scopes: Vec<String>,
    resource: Option<String>,
}

#[derive(Default)]
struct Mock {
    base: Mutex<String>,
    options: Mutex<Option<MockOptions>>,
    access: Mutex<HashMap<String, Issued>>,
    refresh: Mutex<HashMap<String, Issued>>,
    codes: Mutex<HashMap<String, Pending>>,
    /// Every request to the authorization server, in order.
    events: Mutex<Vec<Value>>,
    /// The `Authorization` header of every request to `/mcp`.
    mcp_authorizations: Mutex<Vec<Option<String>>>,
    /// Every access and refresh token ever issued.
    issued: Mutex<Vec<String>>,
    counter: AtomicU64,
}

impl Mock {
    fn base(&self) -> String {
        self.base.lock().unwrap().clone()
    }

    fn options(&self) -> MockOptions {
        self.options.lock().unwrap().clone().unwrap_or_default()
    }

    fn next(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}",
            self.counter.fetch_add(1, Ordering::SeqCst) + 1
        )
    }

    fn record(&self, event: Value) {
        self.events.lock().unwrap().push(event);
    }

    fn token_of(&self, headers: &HeaderMap) -> Option<Issued> {
        let token = headers
            .get(header::AUTHORIZATION)?
            .to_str()
            .ok()?
            .strip_prefix("Bearer ")?;
        self.access.lock().unwrap().get(token).cloned()
    }

    /// A new access and refresh token for `subject` with `scopes`.
    fn issue(&self, subject: &str, scopes: Vec<String>) -> Value {
        let access = self.next("access");
        let refresh = self.next("refresh");
        self.issued
            .lock()
            .unwrap()
            .extend([access.clone(), refresh.clone()]);
        let issued = Issued {
            subject: subject.to_owned(),
            scopes: scopes.clone(),
        };
        self.access
            .lock()
            .unwrap()
            .insert(access.clone(), issued.clone());
        self.refresh.lock().unwrap().insert(refresh.clone(), issued);
        let mut answer = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.options().lifetime,
            "refresh_token": refresh,
        });
        if !scopes.is_empty() {
            answer["scope"] = json!(scopes.join(" "));
        }
        answer
    }
}

/// The running mock.
pub struct MockOAuth {
    /// The MCP endpoint (`http://127.0.0.1:PORT/mcp`).
    pub url: String,
    mock: Arc<Mock>,
    server: HttpServer,
}

impl MockOAuth {
    /// Starts the mock on a loopback port.
    pub async fn start(options: MockOptions) -> MockOAuth {
        let mock = Arc::new(Mock::default());
        *mock.options.lock().unwrap() = Some(options);
        let checking = Arc::clone(&mock);
        let http = HttpServerOptions::new().authenticate(move |request: &HttpRequestParts| {
            let issued = checking.token_of(&request.headers);
            async move {
                let issued = issued.ok_or_else(|| HttpAuthRejection::unauthorized("no token"))?;
                let kind = if issued.subject == "alice" {
                    PrincipalKind::Human
                } else {
                    PrincipalKind::Service
                };
                let principal = AuthenticatedPrincipal::new(
                    &issued.subject,
                    kind,
                    PrincipalIdentity::new("mock-as", &issued.subject, AuthMethod::Oauth),
                );
                Ok(AuthContext::new(
                    principal,
                    policy_fn(|_| Ok(AuthorizationDecision::allow())),
                ))
            }
        });
        let guarding = Arc::clone(&mock);
        let options = McpHttpOptions::new(McpServerOptions::new("mock-notes", "1.0.0"))
            .http(http)
            .also_serve(authorization_server(Arc::clone(&mock)))
            .map_router(move |router| {
                let guarding = Arc::clone(&guarding);
                router.layer(axum::middleware::from_fn(move |request, next| {
                    guard(Arc::clone(&guarding), request, next)
                }))
            });
        let server = serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry(), options)
            .await
            .expect("the mock serves");
        let url = server.url();
        let base = url.trim_end_matches("/mcp").to_owned();
        *mock.base.lock().unwrap() = base;
        MockOAuth { url, mock, server }
    }

    /// The base URL (issuer of the authorization server).
    pub fn base(&self) -> String {
        self.mock.base()
    }

    /// Every request to the authorization server so far: `{"endpoint":
    /// "register" | "authorize" | "token", …}`.
    pub fn events(&self) -> Vec<Value> {
        self.mock.events.lock().unwrap().clone()
    }

    /// The events of one endpoint.
    pub fn events_of(&self, endpoint: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|event| event["endpoint"] == endpoint)
            .collect()
    }

    /// The `Authorization` header of every request to the MCP endpoint.
    pub fn mcp_authorizations(&self) -> Vec<Option<String>> {
        self.mock.mcp_authorizations.lock().unwrap().clone()
    }

    /// Every access and refresh token issued so far.
    pub fn issued_tokens(&self) -> Vec<String> {
        self.mock.issued.lock().unwrap().clone()
    }

    /// Forgets every access token (refresh tokens stay): the next request
    /// gets `401`.
    pub fn revoke_access_tokens(&self) {
        self.mock.access.lock().unwrap().clear();
    }

    /// Stops the server.
    pub async fn shutdown(self) {
        let _ = self.server.shutdown().await;
    }
}

/// `notes.search` (read), `notes.create` (write), `whoami`.
fn registry() -> ToolRegistry {
    #[derive(Deserialize, JsonSchema)]
    struct Search {
        query: String,
    }
    #[derive(Deserialize, JsonSchema)]
    struct Create {
        title: String,
    }
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("notes.search")
                .description("Search notes.")
                .approval(ApprovalTier::Read)
                .handler(|input: Search, _ctx| async move {
                    Ok::<_, ToolError>(format!("found: {}", input.query))
                })
                .build(),
            ToolDefinition::builder("notes.create")
                .description("Create a note.")
                .approval(ApprovalTier::Read)
                .handler(|input: Create, _ctx| async move {
                    Ok::<_, ToolError>(format!("created: {}", input.title))
                })
                .build(),
            ToolDefinition::builder("whoami")
                .description("The token's subject.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    Ok::<_, ToolError>(
                        ctx.auth()
                            .map(|auth| auth.principal().id.clone())
                            .unwrap_or_default(),
                    )
                })
                .build(),
        ])
        .expect("registers");
    registry
}

/// The bearer check in front of `/mcp`: no or an unknown token → `401`
/// with the challenge; a `tools/call` of `notes.create` without
/// `notes:write` (or any call, for a never satisfied server) → `403`.
async fn guard(mock: Arc<Mock>, request: Request<Body>, next: Next) -> Response {
    if request.uri().path() != "/mcp" {
        return next.run(request).await;
    }
    mock.mcp_authorizations.lock().unwrap().push(
        request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned),
    );
    let base = mock.base();
    let options = mock.options();
    let metadata = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let Some(issued) = mock.token_of(request.headers()) else {
        let challenge = match &options.challenge_scope {
            Some(scope) => format!("Bearer resource_metadata=\"{metadata}\", scope=\"{scope}\""),
            None => format!("Bearer resource_metadata=\"{metadata}\""),
        };
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
            "a bearer token is required",
        )
            .into_response();
    };
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if message["method"] == "tools/call" {
        let needed = if options.never_satisfied {
            Some(mock.next("extra"))
        } else if message["params"]["name"] == "notes.create" {
            Some("notes:write".to_owned())
        } else {
            None
        };
        if let Some(needed) = needed.filter(|scope| !issued.scopes.contains(scope)) {
            let challenge = format!(
                "Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{metadata}\""
            );
            return (
                StatusCode::FORBIDDEN,
                [(header::WWW_AUTHENTICATE, challenge)],
                "insufficient scope",
            )
                .into_response();
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The protected resource metadata and the authorization server.
fn authorization_server(mock: Arc<Mock>) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(|State(mock): State<Arc<Mock>>| async move {
                let base = mock.base();
                axum::Json(json!({
                    "resource": format!("{base}/mcp"),
                    "authorization_servers": [base],
                    "scopes_supported": ["notes:read", "notes:write"],
                    "bearer_methods_supported": ["header"],
                }))
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(|State(mock): State<Arc<Mock>>| async move {
                let base = mock.base();
                axum::Json(json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
                    "scopes_supported": ["notes:read", "notes:write", "offline_access"],
                    "authorization_response_iss_parameter_supported": true,
                }))
            }),
        )
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(mock)
}

async fn register(State(mock): State<Arc<Mock>>, body: axum::body::Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let client_id = mock.next("client");
    mock.record(json!({
        "endpoint": "register",
        "client_name": request["client_name"],
        "redirect_uris": request["redirect_uris"],
        "client_id": client_id,
    }));
    (
        StatusCode::CREATED,
        axum::Json(json!({
            "client_id": client_id,
            "client_name": request["client_name"],
            "redirect_uris": request["redirect_uris"],
            "token_endpoint_auth_method": "none",
        })),
    )
        .into_response()
}

async fn authorize(
    State(mock): State<Arc<Mock>>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    mock.record(json!({"endpoint": "authorize", "query": query}));
    let Some(redirect) = query.get("redirect_uri") else {
        return (StatusCode::BAD_REQUEST, "no redirect_uri").into_response();
    };
    if query.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return (StatusCode::BAD_REQUEST, "PKCE S256 is required").into_response();
    }
    let code = mock.next("code");
    mock.codes.lock().unwrap().insert(
        code.clone(),
        Pending {
            client_id: query.get("client_id").cloned().unwrap_or_default(),
            challenge: query.get("code_challenge").cloned().unwrap_or_default(),
            scopes: query
                .get("scope")
                .map(|scope| scope.split(' ').map(str::to_owned).collect())
                .unwrap_or_default(),
            resource: query.get("resource").cloned(),
        },
    );
    let mut location = reqwest::Url::parse(redirect).expect("a redirect URI");
    location
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair(
            "state",
            query.get("state").map(String::as_str).unwrap_or(""),
        )
        .append_pair("iss", &mock.base());
    (
        StatusCode::FOUND,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

fn refused(error: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({ "error": error })),
    )
        .into_response()
}

async fn token(
    State(mock): State<Arc<Mock>>,
    headers: HeaderMap,
    Form(form): Form<BTreeMap<String, String>>,
) -> Response {
    let grant = form.get("grant_type").cloned().unwrap_or_default();
    mock.record(json!({
        "endpoint": "token",
        "grant_type": grant,
        "scope": form.get("scope"),
        "resource": form.get("resource"),
    }));
    match grant.as_str() {
        "authorization_code" => {
            let pending = form
                .get("code")
                .and_then(|code| mock.codes.lock().unwrap().remove(code));
            let Some(pending) = pending else {
                return refused("invalid_grant");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(verifier.as_bytes()));
            if computed != pending.challenge || form.get("resource") != pending.resource.as_ref() {
                return refused("invalid_grant");
            }
            let _ = pending.client_id;
            axum::Json(mock.issue("alice", pending.scopes)).into_response()
        }
        "refresh_token" => {
            let issued = form
                .get("refresh_token")
                .and_then(|refresh| mock.refresh.lock().unwrap().get(refresh).cloned());
            match issued {
                Some(issued) => {
                    axum::Json(mock.issue(&issued.subject, issued.scopes)).into_response()
                }
                None => refused("invalid_grant"),
            }
        }
        "client_credentials" => {
            let (id, secret) = mock.options().machine;
            let basic = headers
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Basic "))
                .and_then(|encoded| {
                    base64::engine::general_purpose::STANDARD
                        .decode(encoded)
                        .ok()
                })
                .map(|decoded| String::from_utf8_lossy(&decoded).into_owned());
            let posted = form
                .get("client_id")
                .zip(form.get("client_secret"))
                .map(|(id, secret)| format!("{id}:{secret}"));
            if basic.or(posted) != Some(format!("{id}:{secret}")) {
                return (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(json!({"error": "invalid_client"})),
                )
                    .into_response();
            }
            let scopes = form
                .get("scope")
                .map(|scope| scope.split(' ').map(str::to_owned).collect())
                .unwrap_or_default();
            axum::Json(mock.issue(&id, scopes)).into_response()
        }
        _ => refused("unsupported_grant_type"),
    }
}

/// The person's part of the flow, headless: the mock approves at once and
/// redirects to the redirect URI, whose URL (with the code) is the answer.
pub struct FollowRedirect;

impl AuthorizationRedirect for FollowRedirect {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:9/callback".to_owned()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let browser = gonk_tools::adapters::http::OutboundHttp::new()
                .client_builder()
                .expect("an HTTP client builder")
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let response = browser.get(url).send().await.map_err(|e| e.to_string())?;
            response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|location| location.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| format!("no redirect: {}", response.status()))
        })
    }
}
