//! HTTP security in front of the MCP service, past the shared guard (Host,
//! Origin and API key, in [`host`](super::host)): the host's
//! authentication hook (verified credentials → [`AuthContext`]), session
//! pinning to the security context key, and the connection guard that
//! cancels a call whose client went away. (The body limit and the JSON-RPC
//! checks are in [`admission`](super::admission).)

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::response::Response;
use http::{Method, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::SessionManager;
use tokio_util::sync::CancellationToken;

use super::body::{plain, BodyEnd, EndAware};
use super::direct::SESSION_HEADER;
use super::host;
use crate::adapters::http::HttpAuthenticator;
use crate::security::AuthContext;

/// Past this many pinned sessions, closed ones are pruned on the next
/// `initialize`.
const PRUNE_THRESHOLD: usize = 256;

/// Per-request state the middleware hands to the MCP handler through the
/// request extensions.
#[derive(Clone, Debug)]
pub(crate) struct RequestState {
    /// Cancelled when the client drops the response before it is complete.
    pub(crate) disconnected: CancellationToken,
    /// What the authentication hook made of the request's credentials.
    pub(crate) auth: Option<AuthContext>,
}

/// The security layer's shared state.
pub(crate) struct Security {
    pub(crate) authenticator: Option<Arc<dyn HttpAuthenticator>>,
    pub(crate) sessions: Arc<LocalSessionManager>,
    /// Session id → the security context key of the principal that opened
    /// it (`None` for an unauthenticated or API-key-only session).
    pub(crate) pinned: Mutex<HashMap<String, Option<String>>>,
}

/// The same answer rmcp gives for an unknown session.
fn session_not_found() -> Response {
    plain(StatusCode::NOT_FOUND, "Not Found: Session not found")
}

impl Security {
    fn pinned_key(&self, session: &str) -> Option<Option<String>> {
        self.pinned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .cloned()
    }

    async fn pin(&self, session: String, key: Option<String>) {
        let prune: Vec<String> = {
            let mut pinned = self.pinned.lock().unwrap_or_else(|p| p.into_inner());
            pinned.insert(session, key);
            if pinned.len() > PRUNE_THRESHOLD {
                pinned.keys().cloned().collect()
            } else {
                Vec::new()
            }
        };
        let mut closed = Vec::new();
        for id in prune {
            if !self
                .sessions
                .has_session(&id.clone().into())
                .await
                .unwrap_or(false)
            {
                closed.push(id);
            }
        }
        if !closed.is_empty() {
            let mut pinned = self.pinned.lock().unwrap_or_else(|p| p.into_inner());
            for id in closed {
                pinned.remove(&id);
            }
        }
    }

    fn unpin(&self, session: &str) {
        self.pinned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session);
    }
}

/// Authentication hook → session pinning → connection guard → `next`
/// (the admission layer and the MCP service).
pub(crate) async fn guard<Fut>(
    security: &Security,
    request: Request,
    next: impl FnOnce(Request) -> Fut,
) -> Response
where
    Fut: Future<Output = Response>,
{
    let (parts, body) = request.into_parts();
    let auth = match &security.authenticator {
        None => None,
        Some(authenticator) => match authenticator.authenticate(&parts).await {
            Ok(auth) => Some(auth),
            Err(rejection) => return host::refused(&rejection),
        },
    };
    let mut request = Request::from_parts(parts, body);
    // The security context key of the caller. Without an auth hook every
    // caller that passed the API key is the same principal.
    let principal_key: Option<String> = auth
        .as_ref()
        .map(|auth| auth.security_context_key().to_owned());

    let session = request
        .headers()
        .get(&SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(session) = &session {
        if let Some(pinned) = security.pinned_key(session) {
            if pinned != principal_key {
                return session_not_found();
            }
        }
    }

    let disconnected = CancellationToken::new();
    request.extensions_mut().insert(RequestState {
        disconnected: disconnected.clone(),
        auth,
    });
    let method = request.method().clone();
    let mut response = next(request).await;
    // rmcp answers a closed session 202; the spec's clients expect 200 or
    // 204 (the Python SDK logs a failure for anything else).
    if method == Method::DELETE && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }

    match (&session, response.headers().get(&SESSION_HEADER)) {
        (None, Some(created)) if response.status().is_success() => {
            if let Ok(created) = created.to_str() {
                security.pin(created.to_owned(), principal_key).await;
            }
        }
        (Some(session), _) if method == Method::DELETE && response.status().is_success() => {
            security.unpin(session);
        }
        _ => {}
    }

    // A response dropped before its end: the client closed the connection
    // mid-response.
    response.map(|body| {
        EndAware::wrap(body, move |how| {
            if how == BodyEnd::Abandoned {
                disconnected.cancel();
            }
        })
    })
}
