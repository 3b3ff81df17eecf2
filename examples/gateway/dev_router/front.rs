//! The dev router's HTTP front: one `/mcp` that hands each request to the
//! MCP endpoint of one environment.
//!
//! * A request with `Mcp-Session-Id` goes to the environment its session
//!   was opened on. A session this router does not know, or that its
//!   environment no longer knows (ended, idle too long, the environment
//!   reconnected after a config change), gets `404` with a JSON-RPC error
//!   that says to reconnect — what the MCP spec tells a client to do on
//!   `404`: send `initialize` again, without the header.
//! * A request without a session (an `initialize`, or any request of the
//!   stateless 2026 revision) goes to the environment named by its
//!   `Gonk-Dev-Environment` header, else to the active one; a session that
//!   its answer opens is pinned there.
//! * Every answer names its environment in `Gonk-Dev-Environment`.
//!
//! The environment's endpoint does the rest (Host/Origin checks, the
//! gateway's authentication, sessions pinned to their principal), in
//! process: no credential of the client goes any further.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::serve::ListenerExt;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::DevRouter;

/// The header naming a request's (and an answer's) environment.
pub const ENVIRONMENT_HEADER: &str = "gonk-dev-environment";

/// The MCP session header (2025 revisions).
const SESSION_HEADER: &str = "mcp-session-id";

/// After a shutdown starts, how long open connections (a session's GET
/// stream) get to close before the server stops anyway.
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// The front as an axum router serving `path`.
pub fn router(dev: DevRouter, path: &str) -> axum::Router {
    axum::Router::new()
        .route(path, axum::routing::any(route))
        .with_state(dev)
}

fn header_text(request: &Request, name: &str) -> Option<String> {
    request
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A JSON-RPC error answer (`id` null: it answers no request in particular).
fn error(status: StatusCode, code: i64, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The answer to a session that is not (or no longer) known.
fn reconnect(active: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        -32001,
        format!(
            "Session not found: this MCP session ended or was never opened here. Reconnect: send \
             initialize again without Mcp-Session-Id (new sessions go to the active dev \
             environment, {active})"
        ),
    )
}

/// Whether `response` is the endpoint's plain unknown-session answer (its
/// other `404`s, for a JSON-RPC method it does not serve, are JSON).
fn is_unknown_session(response: &Response) -> bool {
    response.status() == StatusCode::NOT_FOUND
        && !response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"))
}

async fn route(State(dev): State<DevRouter>, request: Request) -> Response {
    let session = header_text(&request, SESSION_HEADER);
    let environment = match (&session, header_text(&request, ENVIRONMENT_HEADER)) {
        // A session stays where it was opened. One this router does not
        // know goes to the active environment, which checks the
        // credentials first (401 before 404) and does not know it either.
        (Some(id), _) => dev.session(id).unwrap_or_else(|| dev.active()),
        (None, Some(asked)) if dev.has_environment(&asked) => asked,
        (None, Some(asked)) => {
            return error(
                StatusCode::BAD_REQUEST,
                -32602,
                format!(
                    "{ENVIRONMENT_HEADER}: there is no dev environment {asked:?}; leave the header out for the active one ({})",
                    dev.active()
                ),
            )
        }
        (None, None) => dev.active(),
    };
    let Some(endpoint) = dev.endpoint(&environment) else {
        if let Some(id) = &session {
            dev.forget(id);
            return reconnect(&dev.active());
        }
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            -32603,
            format!(
                "dev environment {environment} is not connected; the gateway keeps trying (see its log)"
            ),
        );
    };
    let method = request.method().clone();
    let mut response = match endpoint.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    match &session {
        Some(id) if is_unknown_session(&response) => {
            dev.forget(id);
            return reconnect(&dev.active());
        }
        Some(id) if method == Method::DELETE && response.status().is_success() => dev.forget(id),
        Some(id) if response.status().is_success() && dev.session(id).is_none() => {
            dev.pin(id.clone(), environment.clone());
        }
        Some(_) => {}
        None => {
            let opened = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if let Some(id) = opened.filter(|_| response.status().is_success()) {
                dev.pin(id, environment.clone());
            }
        }
    }
    if let Ok(value) = HeaderValue::from_str(&environment) {
        response.headers_mut().insert(ENVIRONMENT_HEADER, value);
    }
    response
}

/// The running front (see [`bind`]).
pub struct DevServer {
    local_addr: SocketAddr,
    path: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<io::Result<()>>,
}

impl DevServer {
    /// The endpoint URL, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// Cancelling it stops the server: no new connections, open ones get a
    /// few seconds to close.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Waits until the server stops.
    pub async fn wait(self) -> io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(join) => Err(io::Error::other(join)),
        }
    }
}

/// Serves the front of `dev` at `http://ADDR/path`; returns once bound.
/// Loopback only: the environments' endpoints accept only loopback
/// `Host`s (the dev router is a development tool).
pub async fn bind(dev: DevRouter, addr: SocketAddr, path: &str) -> Result<DevServer, String> {
    if !addr.ip().is_loopback() {
        return Err(format!(
            "the dev router serves on loopback only, not {}: use --host 127.0.0.1 (or ::1)",
            addr.ip()
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("could not bind {addr}: {e}"))?;
    let local_addr = listener
        .local_addr()
        .map_err(|e| format!("could not bind {addr}: {e}"))?;
    let listener = listener.tap_io(|tcp| {
        // Without it a kept-alive answer waits for the client's delayed ACK.
        let _ = tcp.set_nodelay(true);
    });
    let stop = CancellationToken::new();
    let serve = axum::serve(listener, router(dev, path))
        .with_graceful_shutdown(stop.clone().cancelled_owned());
    let stopping = stop.clone();
    let task = tokio::spawn(async move {
        let serve = std::future::IntoFuture::into_future(serve);
        tokio::pin!(serve);
        tokio::select! {
            result = &mut serve => return result,
            () = stopping.cancelled() => {}
        }
        // A session's GET stream does not end by itself.
        match tokio::time::timeout(CLOSE_BOUND, serve).await {
            Ok(result) => result,
            Err(_) => Ok(()),
        }
    });
    Ok(DevServer {
        local_addr,
        path: path.to_owned(),
        stop,
        task,
    })
}
