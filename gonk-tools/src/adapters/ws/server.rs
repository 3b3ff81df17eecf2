//! [`ws_router`] (mount it in an axum app) and [`serve_ws`] (a standalone
//! server on a bound address).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{FromRequestParts, Request, State};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::connection::{self, Limits};
use super::guard::Guard;
use super::options::{WsIdentify, WsServerOptions};
use crate::adapters::ws::{WsBroadcast, WsHandler, WsHandlerBuilder};

/// Broadcasts a slow connection may fall behind by before it misses some.
const HUB_CAPACITY: usize = 1024;

struct Endpoint<C> {
    handler: WsHandler<C>,
    guard: Guard,
    identify: Arc<dyn WsIdentify<C>>,
    hub: broadcast::Sender<Arc<str>>,
    limits: Limits,
    max_message_bytes: usize,
    shutdown: CancellationToken,
}

/// Builds the WebSocket endpoint as an axum router (mount it with `merge`
/// next to other routes, e.g. [`mcp_router`](crate::adapters::mcp)'s).
///
/// Takes the handler's builder: the router fans every broadcast out to
/// all of its open sockets (an emitter set on the builder still receives
/// each broadcast too), then builds the handler — the op table is taken
/// now.
///
/// ```no_run
/// use gonk_tools::prelude::*;
/// use gonk_tools::adapters::ws::{ws_router, WsServerOptions};
/// use gonk_tools::adapters::ws::WsHandler;
///
/// # async fn run(registry: ToolRegistry) -> std::io::Result<()> {
/// let app = axum::Router::new()
///     .route("/health", axum::routing::get(|| async { "ok" }))
///     .merge(ws_router(WsHandler::builder(&registry), WsServerOptions::new()));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
pub fn ws_router<C: Send + Sync + 'static>(
    handler: WsHandlerBuilder<C>,
    options: WsServerOptions<C>,
) -> axum::Router {
    let shutdown = options.shutdown.clone().unwrap_or_default();
    router_with_shutdown(handler, options, shutdown)
}

fn router_with_shutdown<C: Send + Sync + 'static>(
    handler: WsHandlerBuilder<C>,
    options: WsServerOptions<C>,
    shutdown: CancellationToken,
) -> axum::Router {
    let (hub, _) = broadcast::channel::<Arc<str>>(HUB_CAPACITY);
    let fan_out = hub.clone();
    let handler = handler
        .also_emit(move |message: &WsBroadcast| {
            // No open socket is not a failure.
            let _ = fan_out.send(Arc::from(message.to_text()));
        })
        .build();
    let endpoint = Arc::new(Endpoint {
        handler,
        guard: Guard::new(
            options.api_key.clone(),
            options.host_check,
            &options.allowed_hosts,
            &options.allowed_origins,
        ),
        identify: Arc::clone(&options.identify),
        hub,
        limits: Limits {
            max_in_flight: options.max_in_flight,
            ping_interval: options.ping_interval,
        },
        max_message_bytes: options.max_message_bytes,
        shutdown,
    });
    axum::Router::new()
        .route(&options.path, axum::routing::get(upgrade::<C>))
        .with_state(endpoint)
}

async fn upgrade<C: Send + Sync + 'static>(
    State(endpoint): State<Arc<Endpoint<C>>>,
    request: Request,
) -> Response {
    let (mut parts, _body) = request.into_parts();
    if let Err(rejection) = endpoint.guard.check(&parts) {
        return rejection.into_response();
    }
    let upgrade = match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let caller = match endpoint.identify.identify(&parts).await {
        Ok(caller) => caller,
        Err(rejection) => return rejection.into_response(),
    };
    let broadcasts = endpoint.hub.subscribe();
    let limit = endpoint.max_message_bytes;
    upgrade
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| {
            connection::serve(
                socket,
                endpoint.handler.clone(),
                caller,
                broadcasts,
                endpoint.limits,
                endpoint.shutdown.clone(),
            )
        })
}

/// Why the WebSocket server did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WsServeError {
    /// A non-loopback bind without an API key, an identify hook or the
    /// insecure flag.
    #[error(
        "refusing to serve WebSocket on {addr} without authentication: it is not a loopback \
         address, so anyone who can reach it could call the tools. Set an API key \
         (WsServerOptions::api_key), bind 127.0.0.1, or — on a trusted network only — set \
         WsServerOptions::allow_insecure_remote(true)"
    )]
    Insecure {
        /// The requested address.
        addr: SocketAddr,
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

/// A running WebSocket server (see [`serve_ws`]). Dropping the handle
/// leaves it running; [`shutdown`](Self::shutdown) stops it.
#[derive(Debug)]
pub struct WsServer {
    local_addr: SocketAddr,
    path: String,
    shutdown: CancellationToken,
    task: JoinHandle<io::Result<()>>,
}

impl WsServer {
    /// The bound address (with the actual port when port 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL, `ws://ADDR/ws`.
    pub fn url(&self) -> String {
        format!("ws://{}{}", self.local_addr, self.path)
    }

    /// A token that stops the server when cancelled.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Stops accepting connections, closes every socket (code 1001) —
    /// aborting the calls in flight — and waits for the server task.
    pub async fn shutdown(self) -> io::Result<()> {
        self.shutdown.cancel();
        self.wait().await
    }

    /// Waits until the server stops.
    pub async fn wait(self) -> io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(join) => Err(io::Error::other(join)),
        }
    }
}

/// Serves the handler at `ws://ADDR/ws` (the path is configurable) and
/// returns once the socket is bound. Accepted connections use
/// `TCP_NODELAY`.
///
/// A non-loopback `addr` refuses to start without an API key, an identify
/// hook or [`allow_insecure_remote`](WsServerOptions::allow_insecure_remote);
/// the bound IP of a non-loopback, non-wildcard address is added to the
/// Host allow-list.
pub async fn serve_ws<C: Send + Sync + 'static>(
    addr: SocketAddr,
    handler: WsHandlerBuilder<C>,
    mut options: WsServerOptions<C>,
) -> Result<WsServer, WsServeError> {
    let ip = addr.ip();
    if !ip.is_loopback() && options.api_key.is_none() && !options.identifies && !options.insecure {
        return Err(WsServeError::Insecure { addr });
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| WsServeError::Bind { addr, source })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| WsServeError::Bind { addr, source })?;
    if !ip.is_loopback() && !ip.is_unspecified() {
        options.allowed_hosts.push(match ip {
            std::net::IpAddr::V4(v4) => v4.to_string(),
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        });
    }
    let shutdown = options.shutdown.clone().unwrap_or_default();
    let path = options.path.clone();
    let app = router_with_shutdown(handler, options, shutdown.clone());
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(target: "gonk_tools::adapters::ws", %error, "could not set TCP_NODELAY");
        }
    });
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
    });
    Ok(WsServer {
        local_addr,
        path,
        shutdown,
        task,
    })
}
