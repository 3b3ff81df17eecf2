//! [`WsServerOptions`]: where the endpoint lives, who may connect, and the
//! limits of a connection.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::rejection::WsRejection;
use crate::adapters::http::HttpGuard;

/// The default limit of one incoming message: 1 MiB. A larger message
/// closes the connection with code 1009 (message too big).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// The default number of calls one connection may have in flight; a
/// request past it gets a `BUSY` error reply at once.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 32;

/// The default keepalive: a ping every 20 s; a connection silent for two
/// intervals is closed.
pub const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(20);

/// Turns the HTTP upgrade request into the caller every request of the
/// connection runs as (the `C` of [`WsHandler<C>`](crate::adapters::ws::WsHandler)).
/// A rejection answers the upgrade with `401`/`403` and no socket opens.
pub trait WsIdentify<C>: Send + Sync + 'static {
    /// Identifies one connection.
    fn identify(
        &self,
        request: &http::request::Parts,
    ) -> BoxFuture<'static, Result<C, WsRejection>>;
}

impl<C, F, Fut> WsIdentify<C> for F
where
    F: Fn(&http::request::Parts) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<C, WsRejection>> + Send + 'static,
{
    fn identify(
        &self,
        request: &http::request::Parts,
    ) -> BoxFuture<'static, Result<C, WsRejection>> {
        Box::pin(self(request))
    }
}

/// Options of the WebSocket endpoint.
///
/// Secure by default, like MCP over HTTP: loopback only (a non-loopback
/// bind needs an API key, an identify hook or the insecure flag), a Host
/// allow-list against DNS rebinding, an Origin allow-list against
/// cross-site WebSocket hijacking, a message size limit, a cap on calls in
/// flight per connection, and ping/pong keepalive. The Host, Origin and
/// API-key rules are the shared [`HttpGuard`]'s, the same as MCP's.
///
/// ```
/// use gonk_tools::adapters::ws::WsServerOptions;
///
/// let options = WsServerOptions::new()
///     .api_key("s3cret")
///     .allowed_origins(["https://notes.example.com"])
///     .max_message_bytes(64 * 1024);
/// assert_eq!(options.path(), "/ws");
/// ```
pub struct WsServerOptions<C = ()> {
    pub(crate) path: String,
    pub(crate) api_key: Option<String>,
    pub(crate) identify: Arc<dyn WsIdentify<C>>,
    pub(crate) identifies: bool,
    pub(crate) insecure: bool,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) host_check: bool,
    pub(crate) max_message_bytes: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) ping_interval: Duration,
    pub(crate) shutdown: Option<CancellationToken>,
}

impl<C> Clone for WsServerOptions<C> {
    fn clone(&self) -> Self {
        WsServerOptions {
            path: self.path.clone(),
            api_key: self.api_key.clone(),
            identify: Arc::clone(&self.identify),
            identifies: self.identifies,
            insecure: self.insecure,
            allowed_hosts: self.allowed_hosts.clone(),
            allowed_origins: self.allowed_origins.clone(),
            host_check: self.host_check,
            max_message_bytes: self.max_message_bytes,
            max_in_flight: self.max_in_flight,
            ping_interval: self.ping_interval,
            shutdown: self.shutdown.clone(),
        }
    }
}

impl<C> fmt::Debug for WsServerOptions<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WsServerOptions")
            .field("path", &self.path)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("identifies", &self.identifies)
            .field("insecure", &self.insecure)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("host_check", &self.host_check)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_in_flight", &self.max_in_flight)
            .field("ping_interval", &self.ping_interval)
            .finish_non_exhaustive()
    }
}

impl Default for WsServerOptions<()> {
    fn default() -> Self {
        Self::new()
    }
}

impl WsServerOptions<()> {
    /// Options for an endpoint at `/ws` whose callers are anonymous (`()`).
    pub fn new() -> Self {
        WsServerOptions {
            path: "/ws".to_owned(),
            api_key: None,
            identify: Arc::new(|_: &http::request::Parts| std::future::ready(Ok(()))),
            identifies: false,
            insecure: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            host_check: true,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            ping_interval: DEFAULT_PING_INTERVAL,
            shutdown: None,
        }
    }
}

impl<C> WsServerOptions<C> {
    /// The endpoint path (default `/ws`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Serves at `path` instead of `/ws`.
    pub fn at(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Requires the key on the upgrade request, as `Authorization: Bearer
    /// <key>` (the scheme in any case; the header wins when both are sent)
    /// or — for browsers, which cannot set headers on a WebSocket — the
    /// `access_token` query parameter (RFC 6750 §2.3). Compared in constant
    /// time. A missing or wrong key gets `401` and no socket opens. An empty
    /// key (or one with surrounding white space or control characters,
    /// which no client can send in a header) matches no request, and makes
    /// [`serve_ws`](super::serve_ws) refuse to start.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Identifies the caller of each connection from its upgrade request
    /// (a session cookie, a verified token); every request on the socket
    /// runs as that caller. Counts as authentication for a non-loopback
    /// bind.
    pub fn identify<C2>(self, identify: impl WsIdentify<C2>) -> WsServerOptions<C2> {
        WsServerOptions {
            path: self.path,
            api_key: self.api_key,
            identify: Arc::new(identify),
            identifies: true,
            insecure: self.insecure,
            allowed_hosts: self.allowed_hosts,
            allowed_origins: self.allowed_origins,
            host_check: self.host_check,
            max_message_bytes: self.max_message_bytes,
            max_in_flight: self.max_in_flight,
            ping_interval: self.ping_interval,
            shutdown: self.shutdown,
        }
    }

    /// Allows a non-loopback bind without an API key. Anyone who can reach
    /// the address can then call the tools: only for trusted networks.
    pub fn allow_insecure_remote(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// Host names (or `host:port`) accepted in the `Host` header, besides
    /// the loopback names and — for [`serve_ws`](super::serve_ws) — the
    /// bound address (for a wildcard bind such as `0.0.0.0`: every address
    /// and the name of the machine).
    ///
    /// A `Host` must be exactly one well-formed header; when it carries a
    /// port, the port must be the server's (under
    /// [`serve_ws`](super::serve_ws); a mounted [`ws_router`](super::ws_router)
    /// does not know its port and takes any) or the entry's own
    /// (`host:port`). Several `Host` headers or a malformed one get `400`; a
    /// name or port not allowed gets `403`. An entry that is not `host` or
    /// `host:port` is ignored, with a warning.
    pub fn allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.allowed_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// Browser origins accepted in the `Origin` header, besides the
    /// loopback origins (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`) and the page's own origin (`http` or `https` on the
    /// host and port of the request's allowed `Host`).
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

    /// Turns the Host and Origin allow-lists off (e.g. behind a proxy that
    /// checks them). Not recommended. The API key is still checked.
    pub fn disable_host_check(mut self) -> Self {
        self.host_check = false;
        self
    }

    /// The upgrade request's Host, Origin and API-key checks (the server's
    /// own address is added by [`serve_ws`](super::serve_ws) once it is
    /// bound).
    pub(crate) fn guard(&self) -> HttpGuard {
        HttpGuard::from_settings(
            &self.allowed_hosts,
            &self.allowed_origins,
            self.api_key.as_deref(),
            self.host_check,
        )
    }

    /// The limit of one incoming message in bytes (default 1 MiB).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// How many calls one connection may have in flight (default 32).
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.max_in_flight = calls.max(1);
        self
    }

    /// Closes every socket (code 1001, aborting its calls in flight) when
    /// `token` is cancelled — for a host that mounts [`ws_router`](super::ws_router)
    /// and shuts its server down ([`serve_ws`](super::serve_ws) does this
    /// itself).
    pub fn shutdown_token(mut self, token: CancellationToken) -> Self {
        self.shutdown = Some(token);
        self
    }

    /// The keepalive ping interval (default 20 s). A connection that sends
    /// nothing — not even a pong — for two intervals is closed.
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.ping_interval = interval.max(Duration::from_millis(10));
        self
    }
}
