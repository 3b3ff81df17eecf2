//! [`WsServerOptions`]: who the caller of a connection is and the limits
//! of a connection, around the [`HttpServerOptions`] every HTTP surface
//! takes (where the endpoint lives, who may connect).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::rejection::WsRejection;
use crate::adapters::http::session_table::SessionLimits;
use crate::adapters::http::HttpServerOptions;

/// The default cap on open connections: 1024.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

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

/// Options of the WebSocket endpoint: the WebSocket-specific ones (who
/// the caller of a connection is, the message size limit, calls in flight,
/// keepalive) and the [`HttpServerOptions`] every HTTP surface takes
/// (path, API key, authentication hook, Host and Origin allow-lists,
/// insecure-remote opt-in, shutdown token).
///
/// Secure by default, like MCP over HTTP: loopback only (a non-loopback
/// bind needs an API key, an authentication or identify hook, or the
/// insecure flag), a Host allow-list against DNS rebinding, an Origin
/// allow-list against cross-site WebSocket hijacking, a message size limit,
/// a cap on calls in flight per connection, and ping/pong keepalive. The
/// Host, Origin and API-key rules are the shared
/// [`HttpGuard`](crate::adapters::http::HttpGuard)'s, the same as MCP's.
///
/// ```
/// use gonk_tools::adapters::http::HttpServerOptions;
/// use gonk_tools::adapters::ws::WsServerOptions;
///
/// let options = WsServerOptions::new()
///     .http(
///         HttpServerOptions::new()
///             .api_key("s3cret")
///             .allowed_origins(["https://notes.example.com"]),
///     )
///     .max_message_bytes(64 * 1024);
/// assert_eq!(options.path(), "/ws");
/// ```
pub struct WsServerOptions<C = ()> {
    pub(crate) http: HttpServerOptions,
    pub(crate) identify: Arc<dyn WsIdentify<C>>,
    pub(crate) identifies: bool,
    pub(crate) max_message_bytes: usize,
    pub(crate) max_in_flight: usize,
    pub(crate) ping_interval: Duration,
    pub(crate) connections: SessionLimits,
}

impl<C> Clone for WsServerOptions<C> {
    fn clone(&self) -> Self {
        WsServerOptions {
            http: self.http.clone(),
            identify: Arc::clone(&self.identify),
            identifies: self.identifies,
            max_message_bytes: self.max_message_bytes,
            max_in_flight: self.max_in_flight,
            ping_interval: self.ping_interval,
            connections: self.connections,
        }
    }
}

impl<C> fmt::Debug for WsServerOptions<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WsServerOptions")
            .field("http", &self.http)
            .field("identifies", &self.identifies)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_in_flight", &self.max_in_flight)
            .field("ping_interval", &self.ping_interval)
            .field("connections", &self.connections)
            .finish_non_exhaustive()
    }
}

impl Default for WsServerOptions<()> {
    fn default() -> Self {
        Self::new()
    }
}

/// The endpoint's path unless [`HttpServerOptions::at`] sets another.
const DEFAULT_PATH: &str = "/ws";

impl WsServerOptions<()> {
    /// Options for an endpoint at `/ws` whose callers are anonymous (`()`),
    /// with the default [`HttpServerOptions`] (loopback only, no API key).
    pub fn new() -> Self {
        WsServerOptions {
            http: HttpServerOptions::new(),
            identify: Arc::new(|_: &http::request::Parts| std::future::ready(Ok(()))),
            identifies: false,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            ping_interval: DEFAULT_PING_INTERVAL,
            connections: SessionLimits::new(DEFAULT_MAX_CONNECTIONS),
        }
    }
}

impl<C> WsServerOptions<C> {
    /// The endpoint path (default `/ws`; [`HttpServerOptions::at`] sets
    /// another).
    pub fn path(&self) -> &str {
        self.http.path().unwrap_or(DEFAULT_PATH)
    }

    /// What every HTTP surface takes: the path, the API key (which the
    /// upgrade also takes as `?access_token=`), the authentication hook,
    /// the Host and Origin allow-lists, the insecure-remote opt-in and the
    /// shutdown token (replacing the ones set before). Under
    /// [`serve_ws`](super::serve_ws) the bound address joins the Host
    /// allow-list and a port in `Host` must be the bound one; under
    /// [`ws_router`](super::ws_router), cancelling the token closes every
    /// socket.
    pub fn http(mut self, http: HttpServerOptions) -> Self {
        self.http = http;
        self
    }

    /// Identifies the caller of each connection from its upgrade request
    /// (a session cookie, a verified token); every request on the socket
    /// runs as that caller. Counts as authentication for a non-loopback
    /// bind. When the [`HttpServerOptions`] have an authentication hook, it
    /// has run first, and the request's extensions hold the
    /// [`AuthContext`](crate::security::AuthContext) it returned.
    ///
    /// ```
    /// use gonk_tools::adapters::ws::{WsRejection, WsServerOptions};
    /// use gonk_tools::security::AuthContext;
    ///
    /// // The connection's caller is what the authentication hook verified.
    /// let options = WsServerOptions::new().identify(|request: &http::request::Parts| {
    ///     let auth = request.extensions.get::<AuthContext>().cloned();
    ///     async move { auth.ok_or_else(|| WsRejection::unauthorized("sign in first")) }
    /// });
    /// # let _ = options;
    /// ```
    pub fn identify<C2>(self, identify: impl WsIdentify<C2>) -> WsServerOptions<C2> {
        WsServerOptions {
            http: self.http,
            identify: Arc::new(identify),
            identifies: true,
            max_message_bytes: self.max_message_bytes,
            max_in_flight: self.max_in_flight,
            ping_interval: self.ping_interval,
            connections: self.connections,
        }
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

    /// The most connections open at once (default
    /// [`DEFAULT_MAX_CONNECTIONS`]). A connection is *busy* while a call of
    /// it runs, and counts as used when a message arrives or a call ends;
    /// a connection with no call running is *idle* (a socket is always
    /// open, so being open does not make it busy). At the cap, an upgrade
    /// closes the least recently used idle connection — with a log line
    /// and close code 1013 ("try again later"), so its client reconnects —
    /// and the upgrade is refused with `503` only when every connection
    /// that could make room is busy.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.connections.cap = max.max(1);
        self
    }

    /// The connections one principal (one security context key from the
    /// authentication hook; without one every caller is the same) may
    /// hold once more than one principal is connected (default an eighth
    /// of [`max_connections`](Self::max_connections)). A principal at its
    /// share that connects again closes its own least recently used idle
    /// connection — never another principal's — or gets `503` when all of
    /// its own are busy.
    pub fn max_connections_per_principal(mut self, share: usize) -> Self {
        self.connections.per_principal = Some(share.max(1));
        self
    }

    /// The keepalive ping interval (default 20 s). A connection that sends
    /// nothing — not even a pong — for two intervals is closed.
    pub fn ping_interval(mut self, interval: Duration) -> Self {
        self.ping_interval = interval.max(Duration::from_millis(10));
        self
    }
}
