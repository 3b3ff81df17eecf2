//! [`HttpServerOptions`]: what every HTTP surface of the crate takes — the
//! endpoint's path, who may reach it (the guard's Host, Origin and API-key
//! rules, the authentication hook, the insecure-remote opt-in) and the
//! token that shuts it down — and the start-up checks of a standalone
//! server.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::serve::ListenerExt;
use tokio_util::sync::CancellationToken;

use super::authenticate::HttpAuthenticator;
use super::guard::HttpGuard;
use super::server::HttpServeError;

/// The options every HTTP surface takes: the MCP endpoint
/// ([`McpHttpOptions::http`](crate::adapters::mcp::McpHttpOptions::http))
/// and the WebSocket endpoint
/// ([`WsServerOptions::http`](crate::adapters::ws::WsServerOptions::http)).
/// Configure who may connect once, and give a clone to each.
///
/// Secure by default: a standalone server binds loopback only (a
/// non-loopback bind needs an API key, an authentication hook or
/// [`allow_insecure_remote`](Self::allow_insecure_remote)), and the shared
/// [`HttpGuard`] keeps a `Host` allow-list against DNS rebinding and an
/// `Origin` allow-list against cross-site requests from browser pages.
///
/// ```
/// use gonk_tools::adapters::http::HttpServerOptions;
/// use gonk_tools::adapters::mcp::{McpHttpOptions, McpServerOptions};
/// use gonk_tools::adapters::ws::WsServerOptions;
///
/// let http = HttpServerOptions::new()
///     .api_key("s3cret")
///     .allowed_hosts(["notes.internal"]);
/// let mcp = McpHttpOptions::new(McpServerOptions::new("notes", "1.0.0")).http(http.clone());
/// let ws = WsServerOptions::new().http(http);
/// assert_eq!((mcp.path(), ws.path()), ("/mcp", "/ws"));
/// ```
#[derive(Clone)]
pub struct HttpServerOptions {
    path: Option<String>,
    guard: HttpGuard,
    has_api_key: bool,
    authenticator: Option<Arc<dyn HttpAuthenticator>>,
    #[cfg(feature = "oauth")]
    protected_resource: Option<super::oauth::ProtectedResource>,
    insecure: bool,
    shutdown: Option<CancellationToken>,
}

impl fmt::Debug for HttpServerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServerOptions")
            .field("path", &self.path)
            .field("guard", &self.guard)
            .field("authenticator", &self.authenticator.is_some())
            .field("insecure", &self.insecure)
            .field("shutdown", &self.shutdown.is_some())
            .finish()
    }
}

impl Default for HttpServerOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpServerOptions {
    /// Loopback only: the loopback names and origins, no API key, no
    /// authentication hook, each surface at its own path.
    pub fn new() -> Self {
        HttpServerOptions {
            path: None,
            guard: HttpGuard::new(),
            has_api_key: false,
            authenticator: None,
            #[cfg(feature = "oauth")]
            protected_resource: None,
            insecure: false,
            shutdown: None,
        }
    }

    /// The endpoint path, when [`at`](Self::at) set one (else each surface
    /// serves at its own: `/mcp`, `/ws`).
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Serves the endpoint at `path` instead of the surface's own.
    pub fn at(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = Some(if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        });
        self
    }

    /// Requires the key on every request, as `Authorization: Bearer <key>`
    /// (the scheme in any case; compared in constant time) — and, on the
    /// WebSocket upgrade, also as the `access_token` query parameter (RFC
    /// 6750 §2.3), since a browser cannot set headers on a WebSocket; the
    /// header wins when both are sent. A missing or wrong key gets `401`
    /// with `WWW-Authenticate: Bearer`.
    ///
    /// An empty key (or one with surrounding white space or control
    /// characters, which no client can send) matches no request, and makes
    /// a standalone server refuse to start.
    pub fn api_key(mut self, key: impl AsRef<str>) -> Self {
        self.guard = self.guard.api_key(key);
        self.has_api_key = true;
        self
    }

    /// The host's authentication hook: every request's credentials become
    /// the [`AuthContext`](crate::security::AuthContext) it runs with, and a
    /// rejection answers `401`/`403`. Counts as authentication for a
    /// non-loopback bind. It runs after the guard (Host, Origin, API key).
    ///
    /// * **MCP**: its `tools/list` shows only tools whose `tool.discover`
    ///   is allowed, and `tools/call` runs as that principal; each session is
    ///   pinned to the principal that opened it (a different principal
    ///   presenting its session id gets `404`, as for an unknown session).
    /// * **WebSocket**: the hook judges the upgrade request; no socket opens
    ///   on a rejection. The `AuthContext` is in the request's extensions
    ///   for the [identify hook](crate::adapters::ws::WsServerOptions::identify)
    ///   to make the connection's caller from.
    ///
    /// ```
    /// use gonk_tools::adapters::http::{HttpAuthRejection, HttpRequestParts, HttpServerOptions};
    /// use gonk_tools::security::{AllowAll, AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind};
    ///
    /// let options = HttpServerOptions::new().authenticate(|request: &HttpRequestParts| {
    ///     let token = request
    ///         .headers
    ///         .get("authorization")
    ///         .and_then(|v| v.to_str().ok())
    ///         .and_then(|v| v.strip_prefix("Bearer "))
    ///         .map(str::to_owned);
    ///     async move {
    ///         match token.as_deref() {
    ///             Some("alice-token") => Ok(AuthContext::new(
    ///                 AuthenticatedPrincipal::new(
    ///                     "alice",
    ///                     PrincipalKind::Human,
    ///                     PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
    ///                 ),
    ///                 AllowAll,
    ///             )),
    ///             _ => Err(HttpAuthRejection::unauthorized("unknown token")),
    ///         }
    ///     }
    /// });
    /// # let _ = options;
    /// ```
    pub fn authenticate(mut self, authenticator: impl HttpAuthenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        #[cfg(feature = "oauth")]
        {
            self.protected_resource = None;
        }
        self
    }

    /// Makes every surface on these options an OAuth resource server
    /// (feature `oauth`): `resource` is the authentication hook (replacing
    /// one set before, as [`authenticate`](Self::authenticate) does), its
    /// protected resource metadata is served beside the MCP endpoint, and
    /// its challenges answer a missing or bad token — and, over MCP, a
    /// tool whose scope the token lacks (`403 insufficient_scope`). A
    /// standalone server without a resource URI takes its own URL. Set no
    /// [`api_key`](Self::api_key) beside it (the guard would demand the key
    /// as the bearer token); a static key is one more verifier:
    /// [`ApiKeyVerifier`](super::oauth::ApiKeyVerifier).
    #[cfg(feature = "oauth")]
    pub fn protected_resource(mut self, resource: super::oauth::ProtectedResource) -> Self {
        self.authenticator = Some(Arc::new(resource.clone()));
        self.protected_resource = Some(resource);
        self
    }

    /// The OAuth resource server set by
    /// [`protected_resource`](Self::protected_resource).
    #[cfg(feature = "oauth")]
    pub fn oauth_resource(&self) -> Option<&super::oauth::ProtectedResource> {
        self.protected_resource.as_ref()
    }

    /// Allows a non-loopback bind without an API key or an authentication
    /// hook. Anyone who can reach the address can then call the tools: only
    /// for trusted networks.
    pub fn allow_insecure_remote(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// Host names (or `host:port`) accepted in the `Host` header, besides
    /// the loopback names and — for a standalone server — the bound address
    /// (for a wildcard bind such as `0.0.0.0`: every address and the name of
    /// the machine). Needed when clients reach the server by another name
    /// (`notes serve --allow-host NAME`).
    ///
    /// A `Host` must be exactly one well-formed header; when it carries a
    /// port, the port must be the server's (for a standalone server; a
    /// mounted router does not know its port and takes any) or the entry's
    /// own (`host:port`). Several `Host` headers or a malformed one get
    /// `400`; a name or port not allowed gets `403`. An entry that is not
    /// `host` or `host:port` is ignored, with a warning.
    pub fn allowed_hosts<S: AsRef<str>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.guard = self.guard.allowed_hosts(hosts);
        self
    }

    /// Browser origins accepted in the `Origin` header, besides the
    /// loopback origins (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`) and the page's own origin (`http` or `https` on the
    /// host and port of the request's allowed `Host`: a page served next to
    /// the endpoint).
    ///
    /// An entry is `scheme://host` — on the scheme's default port only
    /// (`https://app.example` is `:443`) —, `scheme://host:port`,
    /// `scheme://host:*` for any port, or `null`. A request without
    /// `Origin` is not from a browser page and is not checked; several
    /// `Origin` headers get `400`, an origin not allowed `403`.
    pub fn allowed_origins<S: AsRef<str>>(mut self, origins: impl IntoIterator<Item = S>) -> Self {
        self.guard = self.guard.allowed_origins(origins);
        self
    }

    /// Turns the Host and Origin allow-lists off (e.g. behind a proxy that
    /// checks them). Not recommended. The API key is still checked.
    pub fn disable_host_check(mut self) -> Self {
        self.guard = self.guard.disable_host_check();
        self
    }

    /// Shuts the endpoint down when `token` is cancelled: a standalone
    /// server stops as [`HttpServer::shutdown`](super::HttpServer::shutdown)
    /// does (the token is then its
    /// [`shutdown_token`](super::HttpServer::shutdown_token)); a mounted
    /// router closes what it holds open — every WebSocket (code 1001,
    /// aborting its calls in flight), every MCP session (and its `GET`
    /// stream) — so the host's own server can stop.
    pub fn shutdown_token(mut self, token: CancellationToken) -> Self {
        self.shutdown = Some(token);
        self
    }

    /// The request checks (the server's own address is added by
    /// [`bind`](Self::bind) once it is bound).
    pub(crate) fn guard(&self) -> &HttpGuard {
        &self.guard
    }

    pub(crate) fn authenticator(&self) -> Option<&Arc<dyn HttpAuthenticator>> {
        self.authenticator.as_ref()
    }

    /// The shutdown token: the one given, or a fresh one.
    pub(crate) fn shutdown(&self) -> CancellationToken {
        self.shutdown.clone().unwrap_or_default()
    }

    /// Binds a standalone `surface` server on `addr`, after the start-up
    /// checks: an unusable API key, and a non-loopback bind without
    /// authentication (`own_authentication`: the surface has a hook of its
    /// own that counts). Accepted connections get `TCP_NODELAY`.
    pub(crate) async fn bind(
        &self,
        surface: &'static str,
        addr: SocketAddr,
        own_authentication: bool,
        path: &str,
    ) -> Result<BoundListener, HttpServeError> {
        if let Some(problem) = self.guard.api_key_problem() {
            return Err(HttpServeError::UnusableApiKey { surface, problem });
        }
        let authenticated = self.has_api_key || self.authenticator.is_some() || own_authentication;
        if !addr.ip().is_loopback() && !authenticated && !self.insecure {
            return Err(HttpServeError::Insecure { surface, addr });
        }
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| HttpServeError::Bind { addr, source })?;
        let local_addr = listener
            .local_addr()
            .map_err(|source| HttpServeError::Bind { addr, source })?;
        // Without a resource URI of its own, the resource server is this
        // server as bound.
        #[cfg(feature = "oauth")]
        if let Some(resource) = &self.protected_resource {
            resource.settle(format!("http://{local_addr}{path}"));
        }
        #[cfg(not(feature = "oauth"))]
        let _ = path;
        Ok(BoundListener {
            listener,
            local_addr,
            guard: self.guard.clone().bound(local_addr),
        })
    }
}

/// A standalone server's socket, bound: what [`HttpServerOptions::bind`]
/// gives a surface to serve on.
pub(crate) struct BoundListener {
    listener: tokio::net::TcpListener,
    /// The bound address (with the actual port when port 0 was asked).
    pub(crate) local_addr: SocketAddr,
    /// The options' guard, which knows the bound address.
    pub(crate) guard: HttpGuard,
}

impl BoundListener {
    /// The listener, each accepted connection with `TCP_NODELAY`: without
    /// it the last chunk of every response on a kept-alive connection waits
    /// for the client's delayed ACK (~40 ms on Linux).
    pub(crate) fn into_listener(
        self,
    ) -> impl axum::serve::Listener<Io = tokio::net::TcpStream, Addr = SocketAddr> {
        self.listener.tap_io(|tcp| {
            if let Err(error) = tcp.set_nodelay(true) {
                tracing::debug!(target: "gonk_tools::adapters::http", %error, "could not set TCP_NODELAY");
            }
        })
    }
}
