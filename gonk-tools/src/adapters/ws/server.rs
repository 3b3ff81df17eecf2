//! [`ws_router`] (mount it in an axum app) and [`serve_ws`] (a standalone
//! server on a bound address).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{FromRequestParts, Request, State};
use axum::response::{IntoResponse, Response};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::connection::{self, Limits};
use super::guard;
use super::options::{WsIdentify, WsServerOptions};
use super::rejection::WsRejection;
use crate::adapters::http::session_table::SessionTable;
use crate::adapters::http::{HttpAuthenticator, HttpGuard, HttpServeError, HttpServer};
use crate::adapters::ws::{WsBroadcast, WsHandler, WsHandlerBuilder};

/// Broadcasts a slow connection may fall behind by before it misses some.
const HUB_CAPACITY: usize = 1024;

struct Endpoint<C> {
    handler: WsHandler<C>,
    guard: HttpGuard,
    authenticator: Option<Arc<dyn HttpAuthenticator>>,
    identify: Arc<dyn WsIdentify<C>>,
    hub: broadcast::Sender<Arc<str>>,
    limits: Limits,
    max_message_bytes: usize,
    shutdown: CancellationToken,
    /// The open connections under the cap (see `max_connections`).
    connections: Arc<SessionTable<u64>>,
    next_connection: AtomicU64,
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
    let guard = options.http.guard().clone();
    if let Some(problem) = guard.api_key_problem() {
        tracing::error!(target: "gonk_tools::adapters::ws", "{problem}: every upgrade will get 401");
    }
    let shutdown = options.http.shutdown();
    router_with(handler, options, guard, shutdown)
}

fn router_with<C: Send + Sync + 'static>(
    handler: WsHandlerBuilder<C>,
    options: WsServerOptions<C>,
    guard: HttpGuard,
    shutdown: CancellationToken,
) -> axum::Router {
    let (hub, _) = broadcast::channel::<Arc<str>>(HUB_CAPACITY);
    let fan_out = hub.clone();
    let handler = handler
        .also_emit(move |message: &WsBroadcast| {
            // No open socket is not a failure, and nothing to serialize for.
            if fan_out.receiver_count() > 0 {
                let _ = fan_out.send(Arc::from(message.to_text()));
            }
        })
        .build();
    let endpoint = Arc::new(Endpoint {
        handler,
        guard,
        authenticator: options.http.authenticator().cloned(),
        identify: Arc::clone(&options.identify),
        hub,
        limits: Limits {
            max_in_flight: options.max_in_flight,
            ping_interval: options.ping_interval,
        },
        max_message_bytes: options.max_message_bytes,
        shutdown,
        connections: SessionTable::new(options.connections, "WebSocket connection"),
        next_connection: AtomicU64::new(0),
    });
    axum::Router::new()
        .route(options.path(), axum::routing::get(upgrade::<C>))
        .with_state(endpoint)
}

async fn upgrade<C: Send + Sync + 'static>(
    State(endpoint): State<Arc<Endpoint<C>>>,
    request: Request,
) -> Response {
    let (mut parts, _body) = request.into_parts();
    if let Err(rejection) = guard::check(&endpoint.guard, &parts) {
        return rejection.into_response();
    }
    let mut principal = None;
    if let Some(authenticator) = &endpoint.authenticator {
        match authenticator.authenticate(&parts).await {
            // For the identify hook to make the caller from.
            Ok(auth) => {
                principal = Some(auth.security_context_key().to_owned());
                parts.extensions.insert(auth);
            }
            Err(rejection) => return WsRejection::from(rejection).into_response(),
        }
    }
    let upgrade = match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let caller = match endpoint.identify.identify(&parts).await {
        Ok(caller) => caller,
        Err(rejection) => return rejection.into_response(),
    };
    // The connection's entry: made before the upgrade so a refusal is an
    // HTTP answer; an upgrade that never completes drops it.
    let key = endpoint.next_connection.fetch_add(1, Ordering::Relaxed);
    let entry = match endpoint.connections.hold(key, principal) {
        Ok(entry) => entry,
        Err(refusal) => return WsRejection::busy(refusal.message("connections")).into_response(),
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
                entry,
            )
        })
}

/// Serves the handler at `ws://ADDR/ws` (the path is configurable) and
/// returns once the socket is bound. Accepted connections use
/// `TCP_NODELAY`.
///
/// A non-loopback `addr` refuses to start without an API key, an
/// authentication or identify hook, or
/// [`allow_insecure_remote`](crate::adapters::http::HttpServerOptions::allow_insecure_remote); an
/// empty API key refuses to start. The bound address is added to the Host
/// allow-list (for a wildcard bind, every address and the name of the
/// machine), and a port in `Host` must be the bound one.
///
/// [`HttpServer::shutdown`] (or cancelling its token) stops accepting
/// connections and closes every socket (code 1001), aborting the calls in
/// flight.
pub async fn serve_ws<C: Send + Sync + 'static>(
    addr: SocketAddr,
    handler: WsHandlerBuilder<C>,
    options: WsServerOptions<C>,
) -> Result<HttpServer, HttpServeError> {
    let bound = options
        .http
        .bind("WebSocket", addr, options.identifies, options.path())
        .await?;
    let local_addr = bound.local_addr;
    let shutdown = options.http.shutdown();
    let path = options.path().to_owned();
    let app = router_with(handler, options, bound.guard.clone(), shutdown.clone());
    let listener = bound.into_listener();
    let stop = shutdown.clone();
    let serve = async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
    };
    Ok(HttpServer::spawn("ws", local_addr, &path, shutdown, serve))
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;
    use crate::adapters::http::HttpServerOptions;
    use crate::registry::ToolRegistry;

    /// The status of a bare `GET /ws` with this `Host` (no upgrade headers:
    /// past the guard, the upgrade itself refuses it, but not with `403`).
    async fn status_for_host(addr: SocketAddr, host: String) -> u16 {
        tokio::task::spawn_blocking(move || {
            let mut stream = std::net::TcpStream::connect(addr).unwrap();
            write!(
                stream,
                "GET /ws HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            answer[9..12].parse().unwrap()
        })
        .await
        .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_standalone_server_ties_host_to_its_port() {
        let registry = ToolRegistry::new();
        let server = serve_ws(
            "127.0.0.1:0".parse().unwrap(),
            WsHandler::builder(&registry),
            WsServerOptions::new(),
        )
        .await
        .unwrap();
        let addr = server.local_addr();
        let port = addr.port();
        let other = port.wrapping_add(1).max(1);
        assert_ne!(
            status_for_host(addr, format!("localhost:{port}")).await,
            403
        );
        assert_ne!(status_for_host(addr, "localhost".to_owned()).await, 403);
        assert_eq!(
            status_for_host(addr, format!("localhost:{other}")).await,
            403
        );
        assert_eq!(
            status_for_host(addr, format!("evil.example:{port}")).await,
            403
        );
        server.shutdown().await.unwrap();
    }

    #[tokio::test]
    async fn an_unusable_api_key_refuses_to_start() {
        let registry = ToolRegistry::new();
        for key in ["", " k3y"] {
            let error = serve_ws(
                "127.0.0.1:0".parse().unwrap(),
                WsHandler::builder(&registry),
                WsServerOptions::new().http(HttpServerOptions::new().api_key(key)),
            )
            .await
            .unwrap_err();
            assert!(
                matches!(error, HttpServeError::UnusableApiKey { .. }),
                "{key:?}: {error}"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_options_shutdown_token_stops_the_standalone_server() {
        let registry = ToolRegistry::new();
        let token = CancellationToken::new();
        let server = serve_ws(
            "127.0.0.1:0".parse().unwrap(),
            WsHandler::builder(&registry),
            WsServerOptions::new().http(HttpServerOptions::new().shutdown_token(token.clone())),
        )
        .await
        .unwrap();
        assert_eq!(server.url(), format!("ws://{}/ws", server.local_addr()));
        token.cancel();
        assert!(server.shutdown_token().is_cancelled());
        tokio::time::timeout(std::time::Duration::from_secs(10), server.wait())
            .await
            .expect("the server stops")
            .unwrap();
    }
}
