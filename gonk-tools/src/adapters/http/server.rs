//! [`HttpServer`]: the handle of a standalone HTTP surface (MCP's
//! [`serve_http`](crate::adapters::mcp::serve_http), the WebSocket's
//! [`serve_ws`](crate::adapters::ws::serve_ws)), and [`HttpServeError`],
//! why one did not start.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Why a standalone HTTP server did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpServeError {
    /// A non-loopback bind without an API key, an authentication hook (or
    /// the surface's own, such as the WebSocket identify hook) or the
    /// insecure flag.
    #[error(
        "refusing to serve {surface} on {addr} without authentication: it is not a loopback \
         address, so anyone who can reach it could call the tools. Set an API key \
         (HttpServerOptions::api_key, clients send `Authorization: Bearer <key>`) or an \
         authentication hook (HttpServerOptions::authenticate), bind 127.0.0.1, or — on a \
         trusted network only — set HttpServerOptions::allow_insecure_remote(true)"
    )]
    Insecure {
        /// The surface: `"MCP"` or `"WebSocket"`.
        surface: &'static str,
        /// The requested address.
        addr: SocketAddr,
    },
    /// The API key is empty (or otherwise one no client can send).
    #[error(
        "refusing to serve {surface} with an unusable API key: {problem}. Set a non-empty key \
         (HttpServerOptions::api_key)"
    )]
    UnusableApiKey {
        /// The surface: `"MCP"` or `"WebSocket"`.
        surface: &'static str,
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

/// A running standalone server of an HTTP surface. Dropping the handle
/// leaves the server running; [`shutdown`](Self::shutdown) stops it.
#[derive(Debug)]
pub struct HttpServer {
    local_addr: SocketAddr,
    url: String,
    shutdown: CancellationToken,
    task: JoinHandle<io::Result<()>>,
}

impl HttpServer {
    /// Runs `serve` — which stops once `shutdown` is cancelled — as the
    /// server at `scheme://local_addr/path`.
    pub(crate) fn spawn(
        scheme: &str,
        local_addr: SocketAddr,
        path: &str,
        shutdown: CancellationToken,
        serve: impl Future<Output = io::Result<()>> + Send + 'static,
    ) -> Self {
        HttpServer {
            local_addr,
            url: format!("{scheme}://{local_addr}{path}"),
            shutdown,
            task: tokio::spawn(serve),
        }
    }

    /// The bound address (with the actual port when port 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL: `http://ADDR/mcp` for MCP, `ws://ADDR/ws` for the
    /// WebSocket (with the path the options set).
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// A token that starts the [`shutdown`](Self::shutdown) when cancelled
    /// (e.g. from a SIGTERM or Ctrl-C handler while another task
    /// [`wait`](Self::wait)s). It is the options'
    /// [`shutdown_token`](super::HttpServerOptions::shutdown_token) when
    /// they set one.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Shuts down gracefully and waits for the server task. Both surfaces
    /// stop accepting connections first; then MCP stops taking calls, lets
    /// running calls finish within
    /// [`McpServerOptions::shutdown_grace`](crate::adapters::mcp::McpServerOptions::shutdown_grace),
    /// cancels the rest (each answered with an `ABORTED` error saying the
    /// server is shutting down), waits (bounded) for those answers to be
    /// written and ends the sessions; the WebSocket closes every socket
    /// (code 1001), aborting the calls in flight.
    pub async fn shutdown(self) -> io::Result<()> {
        self.shutdown.cancel();
        self.wait().await
    }

    /// Waits until the server stops (it runs until
    /// [`shutdown`](Self::shutdown) or an I/O error).
    pub async fn wait(self) -> io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(join) => Err(io::Error::other(join)),
        }
    }
}
