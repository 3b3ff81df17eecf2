//! The streamable-HTTP transport: an axum router to mount, and a
//! standalone server on a bound address.

use std::collections::HashMap;
use std::future::IntoFuture;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::admission::{self, Admission, OpenStreams};
use super::host;
use super::security::{self, HttpAuthenticator, Security};
use super::server::McpServer;
use super::{McpServerOptions, WriteToolPolicy};
use crate::adapters::http::HttpGuard;
use crate::registry::ToolRegistry;

/// The default request body limit: 4 MiB. A larger body gets `413`.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The default cap on open sessions: 1024.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// The default session idle timeout: 5 minutes.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// After the running calls of a shutdown have ended, how long their
/// answers get to leave, and then how long open connections get to close.
const FLUSH_BOUND: Duration = Duration::from_secs(5);

/// Options of the streamable-HTTP transport.
///
/// Secure by default: loopback only, a Host/Origin allow-list against DNS
/// rebinding, a 4 MiB body limit, and — over HTTP — write tools withheld
/// unless allow-listed ([`WriteToolPolicy::RequireAllowlist`]). The Host,
/// Origin and API-key rules are the shared [`HttpGuard`]'s, the same as
/// the WebSocket endpoint's.
///
/// ```
/// use gonk_tools::adapters::mcp::{McpHttpOptions, McpServerOptions};
///
/// let options = McpHttpOptions::new(McpServerOptions::new("notes", "1.0.0"))
///     .api_key("s3cret")
///     .allowed_hosts(["notes.internal"]);
/// assert_eq!(options.path(), "/mcp");
/// ```
#[derive(Clone)]
pub struct McpHttpOptions {
    pub(crate) server: McpServerOptions,
    pub(crate) path: String,
    pub(crate) api_key: Option<String>,
    pub(crate) authenticator: Option<Arc<dyn HttpAuthenticator>>,
    pub(crate) insecure: bool,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) host_check: bool,
    pub(crate) max_body_bytes: usize,
    pub(crate) sse_keep_alive: Option<Duration>,
    pub(crate) also_serve: Option<axum::Router>,
    pub(crate) map_router: Option<RouterMap>,
    pub(crate) max_sessions: usize,
    pub(crate) session_idle_timeout: Option<Duration>,
    pub(crate) sessions: bool,
}

impl std::fmt::Debug for McpHttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpOptions")
            .field("server", &self.server)
            .field("path", &self.path)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("authenticator", &self.authenticator.is_some())
            .field("insecure", &self.insecure)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("host_check", &self.host_check)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("also_serve", &self.also_serve.is_some())
            .field("map_router", &self.map_router.is_some())
            .field("max_sessions", &self.max_sessions)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("sessions", &self.sessions)
            .finish_non_exhaustive()
    }
}

impl McpHttpOptions {
    /// HTTP options for a server with these options, at path `/mcp`.
    pub fn new(server: McpServerOptions) -> Self {
        McpHttpOptions {
            server,
            path: "/mcp".to_owned(),
            api_key: None,
            authenticator: None,
            insecure: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            host_check: true,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            sse_keep_alive: Some(Duration::from_secs(15)),
            also_serve: None,
            map_router: None,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            sessions: true,
        }
    }

    /// The endpoint path (default `/mcp`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Serves at `path` instead of `/mcp`.
    pub fn at(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Requires `Authorization: Bearer <key>` on every request (the scheme
    /// in any case; compared in constant time); a missing or wrong key gets
    /// `401` with `WWW-Authenticate: Bearer`. An empty key (or one with
    /// surrounding white space or control characters, which no client can
    /// send) matches no request, and makes [`serve_http`] refuse to start.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The host's authentication hook: every request's credentials become
    /// the [`AuthContext`](crate::security::AuthContext) its `tools/list`
    /// (only tools whose `tool.discover` is allowed) and `tools/call` run
    /// with, and each session is pinned to the principal that opened it (a
    /// different principal presenting its session id gets `404`, as for an
    /// unknown session). A rejection answers `401`/`403`. Counts as
    /// authentication for a non-loopback bind.
    ///
    /// ```
    /// use gonk_tools::adapters::mcp::{
    ///     HttpAuthRejection, HttpRequestParts, McpHttpOptions, McpServerOptions,
    /// };
    /// use gonk_tools::security::{AllowAll, AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind};
    ///
    /// let options = McpHttpOptions::new(McpServerOptions::new("app", "1.0.0")).authenticate(
    ///     |request: &HttpRequestParts| {
    ///         let token = request
    ///             .headers
    ///             .get("authorization")
    ///             .and_then(|v| v.to_str().ok())
    ///             .and_then(|v| v.strip_prefix("Bearer "))
    ///             .map(str::to_owned);
    ///         async move {
    ///             match token.as_deref() {
    ///                 Some("alice-token") => Ok(AuthContext::new(
    ///                     AuthenticatedPrincipal::new(
    ///                         "alice",
    ///                         PrincipalKind::Human,
    ///                         PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
    ///                     ),
    ///                     AllowAll,
    ///                 )),
    ///                 _ => Err(HttpAuthRejection::unauthorized("unknown token")),
    ///             }
    ///         }
    ///     },
    /// );
    /// # let _ = options;
    /// ```
    pub fn authenticate(mut self, authenticator: impl HttpAuthenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// Allows a non-loopback bind without an API key. Anyone who can reach
    /// the address can then call the tools: only for trusted networks.
    pub fn allow_insecure_remote(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// Host names (or `host:port`) accepted in the `Host` header, besides
    /// the loopback names and — for [`serve_http`] — the bound address (for
    /// a wildcard bind such as `0.0.0.0`: every address and the name of the
    /// machine). Needed when clients reach the server by another name
    /// (`notes serve --allow-host NAME`).
    ///
    /// A `Host` must be exactly one well-formed header; when it carries a
    /// port, the port must be the server's (under [`serve_http`]) or the
    /// entry's own (`host:port`). Several `Host` headers or a malformed one
    /// get `400`; a name or port not allowed gets `403`. An entry that is
    /// not `host` or `host:port` is ignored, with a warning.
    pub fn allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.allowed_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// Browser origins accepted in the `Origin` header, besides the
    /// loopback origins (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`) and the page's own origin (`http` or `https` on the
    /// host and port of the request's allowed `Host`: a page served next to
    /// `/mcp`, as with [`also_serve`](Self::also_serve)).
    ///
    /// An entry is `scheme://host` — on the scheme's default port only
    /// (`https://app.example` is `:443`) —, `scheme://host:port`,
    /// `scheme://host:*` for any port, or `null`. A request without
    /// `Origin` is not from a browser page and is not checked; several
    /// `Origin` headers get `400`, an origin not allowed `403`.
    pub fn allowed_origins<S: Into<String>>(
        mut self,
        origins: impl IntoIterator<Item = S>,
    ) -> Self {
        self.allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// Turns the Host/Origin allow-list off (e.g. behind a proxy that
    /// checks it). Not recommended. The API key is still checked.
    pub fn disable_host_check(mut self) -> Self {
        self.host_check = false;
        self
    }

    /// The most sessions open at once (default [`DEFAULT_MAX_SESSIONS`]).
    /// An `initialize` past it gets `503` with `Retry-After` and a JSON-RPC
    /// error (`-32000`, "Server busy: …"); sessions end with `DELETE` or
    /// after [`session_idle_timeout`](Self::session_idle_timeout).
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// How long a session may go without a request before it is closed
    /// (default [`DEFAULT_SESSION_IDLE_TIMEOUT`], 5 minutes; `None` keeps
    /// sessions until `DELETE` or shutdown). A closed session's id gets
    /// `404`, and MCP clients then start a new session.
    pub fn session_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// Whether 2025-era clients get a session (default `true`).
    ///
    /// With `sessions(false)` the server assigns no session, as the
    /// 2025 specification allows: `initialize` is answered without an
    /// `Mcp-Session-Id` header and every later request is served on its own
    /// (a fresh server value per request, the answer as plain JSON), like a
    /// 2026-era (stateless) request. That saves the session's worker,
    /// channel and event cache on every request, and any replica can serve
    /// any request (no sticky routing). What needs a session is then not
    /// offered: `GET` (the server→client SSE stream) and `DELETE` get
    /// `405 Method Not Allowed`; a JSON-RPC response (an answer to a
    /// server→client request) gets a JSON-RPC `-32600` error; and
    /// `logging/setLevel` or `resources/subscribe` are accepted but last
    /// only for that request, so no log or update notifications follow.
    /// Progress and log notifications of a call still reach the client, in
    /// that call's own SSE answer. [`max_sessions`](Self::max_sessions) and
    /// [`session_idle_timeout`](Self::session_idle_timeout) do not apply.
    /// The 2026 era is served the same either way.
    pub fn sessions(mut self, sessions: bool) -> Self {
        self.sessions = sessions;
        self
    }

    /// The request body limit in bytes (default 4 MiB). A declared
    /// `Content-Length` over it gets `413` before the body is read.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// The SSE keep-alive interval (default 15 s; `None` disables it).
    pub fn sse_keep_alive(mut self, interval: Option<Duration>) -> Self {
        self.sse_keep_alive = interval;
        self
    }

    /// Also serves `routes` on the same listener (e.g. a WebSocket
    /// endpoint and a page next to `/mcp`): one port for every surface.
    /// Used by [`serve_http`] only ([`mcp_router`] is already a router to
    /// merge). The MCP endpoint's checks (API key, Host/Origin allow-list,
    /// body limit) do not cover these routes: they guard themselves.
    pub fn also_serve(mut self, routes: axum::Router) -> Self {
        self.also_serve = Some(match self.also_serve.take() {
            Some(existing) => existing.merge(routes),
            None => routes,
        });
        self
    }

    /// Applies `map` to the whole router [`serve_http`] serves (the MCP
    /// endpoint with its checks, and the [`also_serve`](Self::also_serve)
    /// routes) — e.g. a layer that adds a response header naming the
    /// replica behind a load balancer. Called again, the maps run in order.
    pub fn map_router(
        mut self,
        map: impl Fn(axum::Router) -> axum::Router + Send + Sync + 'static,
    ) -> Self {
        self.map_router = Some(match self.map_router.take() {
            Some(first) => Arc::new(move |router| map(first(router))),
            None => Arc::new(map),
        });
        self
    }

    fn rmcp_config(&self, cancel: CancellationToken) -> StreamableHttpServerConfig {
        // Host and Origin are the shared guard's (see `host`), in front of
        // rmcp.
        StreamableHttpServerConfig::default()
            .with_max_request_body_bytes(self.max_body_bytes)
            .with_sse_keep_alive(self.sse_keep_alive)
            .with_cancellation_token(cancel)
            // A stateless (2026) request's final answer, when it comes
            // first, as plain JSON rather than a one-event SSE stream (as
            // the `direct` path answers it).
            .with_json_response(true)
            // Off: every 2025-era request is served as rmcp serves a
            // stateless one (see `sessions`).
            .with_legacy_session_mode(self.sessions)
            .disable_allowed_hosts()
            .disable_allowed_origins()
    }

    /// The endpoint's Host, Origin and API-key checks (the server's own
    /// address is added by [`serve_http`] once it is bound).
    fn guard(&self) -> HttpGuard {
        HttpGuard::from_settings(
            &self.allowed_hosts,
            &self.allowed_origins,
            self.api_key.as_deref(),
            self.host_check,
        )
    }
}

/// What [`McpHttpOptions::map_router`] keeps.
type RouterMap = Arc<dyn Fn(axum::Router) -> axum::Router + Send + Sync>;

/// Builds the MCP endpoint as an axum router (mount it with `merge` or
/// `nest`). Each `initialize` opens a session; sessions are pinned to the
/// principal that opened them.
///
/// ```no_run
/// use gonk_tools::prelude::*;
/// use gonk_tools::adapters::mcp::{mcp_router, McpHttpOptions, McpServerOptions};
///
/// # async fn run(registry: ToolRegistry) -> std::io::Result<()> {
/// let app = axum::Router::new()
///     .route("/health", axum::routing::get(|| async { "ok" }))
///     .merge(mcp_router(registry, McpHttpOptions::new(McpServerOptions::new("app", "1.0.0"))));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
pub fn mcp_router(registry: ToolRegistry, options: McpHttpOptions) -> axum::Router {
    let guard = options.guard();
    if let Some(problem) = guard.api_key_problem() {
        tracing::error!(target: "gonk_tools::mcp", "{problem}: every request will get 401");
    }
    Endpoint::new(registry, options, guard, CancellationToken::new()).router
}

/// The endpoint and what a graceful shutdown needs of it.
struct Endpoint {
    router: axum::Router,
    server: McpServer,
    streams: OpenStreams,
}

impl Endpoint {
    fn new(
        registry: ToolRegistry,
        options: McpHttpOptions,
        guard: HttpGuard,
        cancel: CancellationToken,
    ) -> Self {
        let config = options.rmcp_config(cancel.clone());
        let server = McpServer::new(
            registry,
            options.server.clone(),
            WriteToolPolicy::RequireAllowlist,
        );
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = options.session_idle_timeout;
        let sessions = Arc::new(manager);
        let prototype = server.clone();
        let service = StreamableHttpService::new(
            move || Ok(prototype.new_session()),
            Arc::clone(&sessions),
            config,
        );
        let streams = OpenStreams::default();
        let admission = Admission {
            max_body_bytes: options.max_body_bytes,
            sessions: Arc::clone(&sessions),
            max_sessions: options.max_sessions,
            server: Arc::new(server.clone()),
            streams: streams.clone(),
            initializing: tokio::sync::Mutex::new(()),
            path: options.path.clone(),
            keep_alive: options.sse_keep_alive,
            sessions_cancel: cancel,
            sessionless: !options.sessions,
            detached_peers: Default::default(),
        };
        let security = Security {
            authenticator: options.authenticator.clone(),
            sessions,
            pinned: Mutex::new(HashMap::new()),
        };
        let front = Arc::new(Front {
            guard,
            security,
            admission,
        });
        let router = axum::Router::new()
            .route_service(&options.path, service)
            .layer(axum::middleware::from_fn_with_state(front, Front::serve));
        Endpoint {
            router,
            server,
            streams,
        }
    }
}

/// What stands in front of rmcp's service, in the order it runs: Host,
/// Origin and API key → authentication hook and session pinning →
/// admission. One axum layer, not three: each layer clones the stack
/// below it and boxes a future on every request.
struct Front {
    guard: HttpGuard,
    security: Security,
    admission: Admission,
}

impl Front {
    async fn serve(
        axum::extract::State(front): axum::extract::State<Arc<Front>>,
        request: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> axum::response::Response {
        if let Err(rejection) = front.guard.check(request.uri(), request.headers()) {
            return host::answer(&rejection);
        }
        security::guard(&front.security, request, |request| {
            admission::admit(&front.admission, request, next)
        })
        .await
    }
}

/// Why the HTTP server did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpServeError {
    /// A non-loopback bind without an API key, an authentication hook or
    /// the insecure flag.
    #[error(
        "refusing to serve MCP on {addr} without authentication: it is not a loopback address, so \
         anyone who can reach it could call the tools. Set an API key (McpHttpOptions::api_key, \
         clients send `Authorization: Bearer <key>`), bind 127.0.0.1, or — on a trusted network \
         only — set McpHttpOptions::allow_insecure_remote(true)"
    )]
    Insecure {
        /// The requested address.
        addr: SocketAddr,
    },
    /// The API key is empty (or otherwise one no client can send).
    #[error(
        "refusing to serve MCP with an unusable API key: {problem}. Set a non-empty key \
         (McpHttpOptions::api_key, or notes serve --api-key / NOTES_API_KEY)"
    )]
    UnusableApiKey {
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The address could not be bound.
    #[error("could not bind {addr}: {source}")]
    Bind {
        /// The requested address.
        addr: SocketAddr,
        /// The OS error.
        source: io::Error,
    },
}

/// A running HTTP server (see [`serve_http`]). Dropping the handle leaves
/// the server running; call [`shutdown`](Self::shutdown) to stop it.
#[derive(Debug)]
pub struct McpHttpServer {
    local_addr: SocketAddr,
    path: String,
    cancel: CancellationToken,
    task: JoinHandle<io::Result<()>>,
}

impl McpHttpServer {
    /// The bound address (with the actual port when port 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// A token that starts the graceful [`shutdown`](Self::shutdown) when
    /// cancelled (e.g. from a SIGTERM or Ctrl-C handler while another task
    /// [`wait`](Self::wait)s).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Shuts down gracefully and waits for the server task: stops
    /// accepting connections and calls, lets running calls finish within
    /// [`McpServerOptions::shutdown_grace`], cancels the rest (each answered
    /// with an `ABORTED` error saying the server is shutting down), waits
    /// (bounded) for those answers to be written, then ends the sessions.
    pub async fn shutdown(self) -> io::Result<()> {
        self.cancel.cancel();
        self.wait().await
    }

    /// Waits until the server stops (it runs until [`shutdown`](Self::shutdown)
    /// or an I/O error).
    pub async fn wait(self) -> io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(join) => Err(io::Error::other(join)),
        }
    }
}

/// Serves `registry` over streamable HTTP at `http://ADDR/mcp` (the path is
/// configurable) and returns once the socket is bound.
///
/// A non-loopback `addr` refuses to start without an API key or
/// [`allow_insecure_remote`](McpHttpOptions::allow_insecure_remote); an
/// empty API key refuses to start. The bound address is added to the Host
/// allow-list (for a wildcard bind, every address and the name of the
/// machine). Accepted connections get `TCP_NODELAY`.
pub async fn serve_http(
    addr: SocketAddr,
    registry: ToolRegistry,
    mut options: McpHttpOptions,
) -> Result<McpHttpServer, HttpServeError> {
    let guard = options.guard();
    if let Some(problem) = guard.api_key_problem() {
        return Err(HttpServeError::UnusableApiKey { problem });
    }
    let ip = addr.ip();
    if !ip.is_loopback()
        && options.api_key.is_none()
        && options.authenticator.is_none()
        && !options.insecure
    {
        return Err(HttpServeError::Insecure { addr });
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| HttpServeError::Bind { addr, source })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| HttpServeError::Bind { addr, source })?;
    let guard = guard.bound(local_addr);
    let cancel = CancellationToken::new();
    let sessions_cancel = CancellationToken::new();
    let path = options.path.clone();
    let also_serve = options.also_serve.take();
    let map_router = options.map_router.take();
    let grace = options.server.shutdown_grace;
    let mut endpoint = Endpoint::new(registry, options, guard, sessions_cancel.clone());
    if let Some(routes) = also_serve {
        endpoint.router = endpoint.router.merge(routes);
    }
    if let Some(map) = map_router {
        endpoint.router = map(endpoint.router);
    }
    // Without TCP_NODELAY the last chunk of every response on a kept-alive
    // connection waits for the client's delayed ACK (~40 ms on Linux).
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(target: "gonk_tools::mcp", %error, "could not set TCP_NODELAY");
        }
    });
    let stop_accepting = CancellationToken::new();
    let serve = axum::serve(listener, endpoint.router)
        .with_graceful_shutdown(stop_accepting.clone().cancelled_owned());
    let shutdown = cancel.clone();
    let Endpoint {
        server, streams, ..
    } = endpoint;
    let task = tokio::spawn(async move {
        let serve = serve.into_future();
        tokio::pin!(serve);
        let drain = async {
            shutdown.cancelled().await;
            stop_accepting.cancel();
            server.inflight().drain(grace).await;
            // The last answers are on their way: let them leave, then end
            // the sessions (and their GET streams).
            streams.idle(FLUSH_BOUND).await;
            sessions_cancel.cancel();
        };
        tokio::select! {
            result = &mut serve => return result,
            () = drain => {}
        }
        match tokio::time::timeout(FLUSH_BOUND, serve).await {
            Ok(result) => result,
            // A connection that will not close does not hold the process.
            Err(_) => Ok(()),
        }
    });
    Ok(McpHttpServer {
        local_addr,
        path,
        cancel,
        task,
    })
}
