//! The streamable-HTTP transport: its options ([`McpHttpOptions`], around
//! the shared [`HttpServerOptions`]), an axum router to mount, and a
//! standalone server on a bound address.

use std::collections::HashMap;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::admission::{self, Admission, OpenStreams};
use super::host;
use super::security::{self, Security};
use crate::adapters::http::session_table::{SessionLimits, SessionTable};
use crate::adapters::http::{HttpGuard, HttpServeError, HttpServer, HttpServerOptions};
use crate::adapters::mcp::server::McpServer;
use crate::adapters::mcp::{McpServerOptions, WriteToolPolicy};
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

/// Options of the streamable-HTTP transport: the MCP-specific ones
/// (sessions, their cap and idle timeout, the body limit, SSE keep-alive,
/// routes served beside the endpoint) and the [`HttpServerOptions`] every
/// HTTP surface takes (path, API key, authentication hook, Host and Origin
/// allow-lists, insecure-remote opt-in, shutdown token).
///
/// Secure by default: loopback only, a Host/Origin allow-list against DNS
/// rebinding, a 4 MiB body limit, and — over HTTP — write tools withheld
/// unless allow-listed ([`WriteToolPolicy::RequireAllowlist`]). The Host,
/// Origin and API-key rules are the shared [`HttpGuard`]'s, the same as
/// the WebSocket endpoint's.
///
/// ```
/// use gonk_tools::adapters::http::HttpServerOptions;
/// use gonk_tools::adapters::mcp::{McpHttpOptions, McpServerOptions};
///
/// let options = McpHttpOptions::new(McpServerOptions::new("notes", "1.0.0"))
///     .http(HttpServerOptions::new().api_key("s3cret").allowed_hosts(["notes.internal"]))
///     .max_sessions(64);
/// assert_eq!(options.path(), "/mcp");
/// ```
#[derive(Clone)]
pub struct McpHttpOptions {
    pub(crate) server: McpServerOptions,
    pub(crate) http: HttpServerOptions,
    pub(crate) max_body_bytes: usize,
    pub(crate) sse_keep_alive: Option<Duration>,
    pub(crate) also_serve: Option<axum::Router>,
    pub(crate) map_router: Option<RouterMap>,
    pub(crate) max_sessions: usize,
    pub(crate) max_sessions_per_principal: Option<usize>,
    pub(crate) session_idle_timeout: Option<Duration>,
    pub(crate) sessions: bool,
}

impl std::fmt::Debug for McpHttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpOptions")
            .field("server", &self.server)
            .field("http", &self.http)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("also_serve", &self.also_serve.is_some())
            .field("map_router", &self.map_router.is_some())
            .field("max_sessions", &self.max_sessions)
            .field(
                "max_sessions_per_principal",
                &self.max_sessions_per_principal,
            )
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("sessions", &self.sessions)
            .finish_non_exhaustive()
    }
}

/// The endpoint's path unless [`HttpServerOptions::at`] sets another.
const DEFAULT_PATH: &str = "/mcp";

impl McpHttpOptions {
    /// HTTP options for a server with these options, at path `/mcp`, with
    /// the default [`HttpServerOptions`] (loopback only, no API key).
    pub fn new(server: McpServerOptions) -> Self {
        McpHttpOptions {
            server,
            http: HttpServerOptions::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            sse_keep_alive: Some(Duration::from_secs(15)),
            also_serve: None,
            map_router: None,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_principal: None,
            session_idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            sessions: true,
        }
    }

    /// The endpoint path (default `/mcp`; [`HttpServerOptions::at`] sets
    /// another).
    pub fn path(&self) -> &str {
        self.http.path().unwrap_or(DEFAULT_PATH)
    }

    /// What every HTTP surface takes: the path, the API key, the
    /// authentication hook, the Host and Origin allow-lists, the
    /// insecure-remote opt-in and the shutdown token (replacing the ones set
    /// before). Under [`serve_http`], the bound address joins the Host
    /// allow-list and a shutdown token is the server's; under
    /// [`mcp_router`], cancelling the token ends every session.
    pub fn http(mut self, http: HttpServerOptions) -> Self {
        self.http = http;
        self
    }

    /// The most 2025-era sessions open at once (default
    /// [`DEFAULT_MAX_SESSIONS`]). At the cap, an `initialize` closes the
    /// least recently used *idle* session — one with no call running and no
    /// `GET` stream open — with a log line, and that session's next request
    /// gets `404` (MCP clients then initialize again). Only when every
    /// session that could make room is busy does the `initialize` get `503`
    /// with `Retry-After` and a JSON-RPC error (`-32000`, "Server busy: …").
    /// Sessions also end with `DELETE` or after
    /// [`session_idle_timeout`](Self::session_idle_timeout). See
    /// [`max_sessions_per_principal`](Self::max_sessions_per_principal) for
    /// the share of one caller.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// The sessions one principal (one security context key; every
    /// caller without an authentication hook is the same one) may hold
    /// once more than one principal holds sessions (default an eighth of
    /// [`max_sessions`](Self::max_sessions)). A principal at its share
    /// that opens another closes its own least recently used idle session
    /// — never another principal's — or gets `503` when all of its own are
    /// busy; so one caller cannot push everyone else's sessions out.
    pub fn max_sessions_per_principal(mut self, share: usize) -> Self {
        self.max_sessions_per_principal = Some(share.max(1));
        self
    }

    /// The most `subscriptions/listen` streams (2026 era) open at once
    /// (default [`DEFAULT_MAX_SESSIONS`]), and one principal's share of
    /// them (`None`: an eighth, once more than one principal listens).
    /// A listen stream is always open, so it counts as idle between
    /// notifications and as used when it opened or last delivered one: at
    /// the cap (or at a principal's share) the stream that has gone longest
    /// without delivering anything is ended, with a log line, and its
    /// client listens again.
    pub fn max_listen_streams(mut self, max: usize, per_principal: Option<usize>) -> Self {
        self.server.listen_limits = SessionLimits {
            cap: max.max(1),
            per_principal: per_principal.map(|share| share.max(1)),
        };
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
    let guard = options.http.guard().clone();
    if let Some(problem) = guard.api_key_problem() {
        tracing::error!(target: "gonk_tools::mcp", "{problem}: every request will get 401");
    }
    let sessions_cancel = options.http.shutdown();
    Endpoint::new(registry, options, guard, sessions_cancel).router
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
            table: SessionTable::new(
                SessionLimits {
                    cap: options.max_sessions,
                    per_principal: options.max_sessions_per_principal,
                },
                "session",
            ),
            server: Arc::new(server.clone()),
            streams: streams.clone(),
            initializing: tokio::sync::Mutex::new(()),
            path: options.path().to_owned(),
            keep_alive: options.sse_keep_alive,
            sessions_cancel: cancel,
            sessionless: !options.sessions,
            detached_peers: Default::default(),
            session_idle_timeout: options.session_idle_timeout,
            #[cfg(feature = "oauth")]
            resource: options.http.oauth_resource().cloned(),
        };
        let security = Security {
            authenticator: options.http.authenticator().cloned(),
            sessions,
            pinned: Mutex::new(HashMap::new()),
        };
        let front = Arc::new(Front {
            guard,
            security,
            admission,
        });
        let router = axum::Router::new()
            .route_service(options.path(), service)
            .layer(axum::middleware::from_fn_with_state(front, Front::serve));
        // The protected resource metadata: public, outside the guard.
        #[cfg(feature = "oauth")]
        let router = match options.http.oauth_resource() {
            Some(resource) => router.merge(resource.metadata_router(options.path())),
            None => router,
        };
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

/// Serves `registry` over streamable HTTP at `http://ADDR/mcp` (the path is
/// configurable) and returns once the socket is bound.
///
/// A non-loopback `addr` refuses to start without an API key, an
/// authentication hook or
/// [`allow_insecure_remote`](HttpServerOptions::allow_insecure_remote); an
/// empty API key refuses to start. The bound address is added to the Host
/// allow-list (for a wildcard bind, every address and the name of the
/// machine). Accepted connections get `TCP_NODELAY`.
///
/// [`HttpServer::shutdown`] (or cancelling its token) stops accepting
/// connections and calls, lets running calls finish within
/// [`McpServerOptions::shutdown_grace`](crate::adapters::mcp::McpServerOptions::shutdown_grace),
/// cancels the rest (each answered with an `ABORTED` error saying the
/// server is shutting down), waits (bounded) for those answers to be
/// written, then ends the sessions.
pub async fn serve_http(
    addr: SocketAddr,
    registry: ToolRegistry,
    mut options: McpHttpOptions,
) -> Result<HttpServer, HttpServeError> {
    let bound = options
        .http
        .bind("MCP", addr, false, options.path())
        .await?;
    let local_addr = bound.local_addr;
    let guard = bound.guard.clone();
    let cancel = options.http.shutdown();
    let sessions_cancel = CancellationToken::new();
    let path = options.path().to_owned();
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
    let stop_accepting = CancellationToken::new();
    let serve = axum::serve(bound.into_listener(), endpoint.router)
        .with_graceful_shutdown(stop_accepting.clone().cancelled_owned());
    let shutdown = cancel.clone();
    let Endpoint {
        server, streams, ..
    } = endpoint;
    let run = async move {
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
    };
    Ok(HttpServer::spawn("http", local_addr, &path, cancel, run))
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    use super::*;
    use crate::adapters::mcp::McpServerOptions;

    /// Sends one raw HTTP/1.1 request; the stream is left at the body.
    fn request(addr: SocketAddr, head: &str, body: &str) -> BufReader<TcpStream> {
        let mut stream = TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "{head}Host: {addr}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        BufReader::new(stream)
    }

    /// The status line and the `mcp-session-id` header of an answer.
    fn status_and_session(reader: &mut BufReader<TcpStream>) -> (String, Option<String>) {
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        let mut session = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                return (status, session);
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("mcp-session-id") {
                    session = Some(value.trim().to_owned());
                }
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_mounted_endpoint_ends_its_sessions_when_the_shutdown_token_is_cancelled() {
        let token = CancellationToken::new();
        let options = McpHttpOptions::new(McpServerOptions::new("mounted", "1.0.0"))
            .http(HttpServerOptions::new().shutdown_token(token.clone()));
        let router = mcp_router(ToolRegistry::new(), options);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(axum::serve(listener, router).into_future());

        // A 2025 session and its server → client stream, read to its end.
        let stream_ended = tokio::task::spawn_blocking(move || {
            let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
            let mut answer = request(
                addr,
                "POST /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nConnection: close\r\n",
                initialize,
            );
            let (status, session) = status_and_session(&mut answer);
            assert!(status.contains(" 200 "), "{status}");
            let session = session.expect("a session id");
            let mut events = request(
                addr,
                &format!(
                    "GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\nConnection: close\r\n"
                ),
                "",
            );
            let (status, _) = status_and_session(&mut events);
            assert!(status.contains(" 200 "), "{status}");
            let mut rest = Vec::new();
            let _ = events.read_to_end(&mut rest);
        });
        // The stream stays open until the token ends the session.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!stream_ended.is_finished(), "the stream ended on its own");
        token.cancel();
        tokio::time::timeout(Duration::from_secs(10), stream_ended)
            .await
            .expect("cancelling the token ends the session's stream")
            .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_options_shutdown_token_stops_the_standalone_server() {
        let token = CancellationToken::new();
        let options = McpHttpOptions::new(McpServerOptions::new("standalone", "1.0.0"))
            .http(HttpServerOptions::new().shutdown_token(token.clone()));
        let server = serve_http("127.0.0.1:0".parse().unwrap(), ToolRegistry::new(), options)
            .await
            .unwrap();
        token.cancel();
        assert!(server.shutdown_token().is_cancelled());
        tokio::time::timeout(Duration::from_secs(10), server.wait())
            .await
            .expect("the server stops")
            .unwrap();
    }
}
