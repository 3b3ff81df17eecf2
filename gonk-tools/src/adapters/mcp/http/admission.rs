//! What a `POST` must pass before rmcp's streamable-HTTP service sees it:
//! a declared `Content-Length` over the limit gets `413` before the body is
//! read; the body is read (bounded) and checked by the JSON-RPC error layer
//! (`400` with `-32700` / `-32600` / `-32602` instead of rmcp's `415`); an
//! `initialize` past the session cap, or during a shutdown, gets `503`.
//! A plain request (on an open 2025 session, or a stateless 2026 call or
//! listing) is then served here with the message just read, not handed to
//! rmcp's service to be parsed again (see [`direct`](super::direct)).
//! Responses to admitted `POST`s are counted while they stream, so a
//! graceful shutdown can wait for the last answer to leave.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::{header, HeaderValue, Method, StatusCode};
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::SessionManager;
use tokio::sync::{Mutex, Notify};
use tokio_util::sync::CancellationToken;

use super::body::{self, EndAware};
use super::direct::{self, SESSION_HEADER};
use super::security::RequestState;
use crate::adapters::http::session_table::SessionTable;
use crate::adapters::mcp::jsonrpc::{self, Inbound, Rejection, INVALID_REQUEST};
use crate::adapters::mcp::server::inflight::until_zero;
use crate::adapters::mcp::server::McpServer;

/// The admission layer's state.
pub(crate) struct Admission {
    pub(crate) max_body_bytes: usize,
    pub(crate) sessions: Arc<LocalSessionManager>,
    /// The open sessions under the cap: who opened each, which are busy
    /// (a call or a stream open), which was used least recently.
    pub(crate) table: Arc<SessionTable<String>>,
    /// The server: it serves the requests without a session, and holds
    /// the shutdown state. Shared, so such a request takes one count, not
    /// a clone of each of the server's parts.
    pub(crate) server: Arc<McpServer>,
    /// `POST` responses still streaming.
    pub(crate) streams: OpenStreams,
    /// One `initialize` at a time, so the session cap is exact.
    pub(crate) initializing: Mutex<()>,
    /// The endpoint's path: only a `POST` to it is served directly.
    pub(crate) path: String,
    /// The SSE keep-alive interval of directly served answers.
    pub(crate) keep_alive: Option<Duration>,
    /// The sessions' token (rmcp's `cancellation_token`): it ends the
    /// directly served answers, as rmcp's.
    pub(crate) sessions_cancel: CancellationToken,
    /// `McpHttpOptions::sessions(false)`: no session is opened nor looked
    /// up; rmcp serves each 2025-era request on its own.
    pub(crate) sessionless: bool,
    /// The peers of the requests served without a session.
    pub(crate) detached_peers: direct::DetachedPeers,
    /// rmcp's idle timeout of a session: a session whose calls run in
    /// their requests sends one through rmcp's worker within half of it.
    pub(crate) session_idle_timeout: Option<Duration>,
    /// The OAuth resource server, whose scope requirements a `tools/call`
    /// meets before anything runs.
    #[cfg(feature = "oauth")]
    pub(crate) resource: Option<crate::adapters::http::oauth::ProtectedResource>,
}

/// `403 insufficient_scope` for a `tools/call` whose tool needs a scope the
/// caller's token lacks (MCP's scope step-up): the client asks for a wider
/// token and retries; nothing runs. The tool stays listed.
#[cfg(feature = "oauth")]
async fn step_up(
    admission: &Admission,
    parts: &http::request::Parts,
    message: &rmcp::model::ClientJsonRpcMessage,
) -> Option<Response> {
    let resource = admission.resource.as_ref()?;
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    let auth = parts
        .extensions
        .get::<super::security::RequestState>()?
        .auth
        .as_ref()?;
    let tool = admission.server.tool_name(call.params.name.as_ref())?;
    let needed = admission
        .server
        .missing_scopes(resource, auth, &tool)
        .await?;
    tracing::info!(target: "gonk_tools::mcp", tool = %tool, needed = %needed.join(" "), "tools/call refused: the token lacks a scope (403 insufficient_scope)");
    let mut response = json_error(
        StatusCode::FORBIDDEN,
        &Rejection::new(
            -32000,
            format!(
                "Forbidden: calling {tool} needs the scope {}; ask the authorization server for it",
                needed.join(" ")
            ),
            Some(request.id.clone()),
        ),
    );
    if let Ok(challenge) = HeaderValue::from_str(&resource.insufficient_scope_challenge(&needed)) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    Some(response)
}

/// A count of response bodies still being written. Entering and leaving
/// touch one counter; the waiter of a shutdown is woken only once it waits.
#[derive(Clone, Debug, Default)]
pub(crate) struct OpenStreams(Arc<StreamCount>);

#[derive(Debug, Default)]
struct StreamCount {
    open: AtomicUsize,
    /// Set once a shutdown waits for the count to reach zero.
    awaited: AtomicBool,
    idle: Notify,
}

impl OpenStreams {
    fn enter(&self) -> StreamGuard {
        self.0.open.fetch_add(1, Ordering::SeqCst);
        StreamGuard(Some(self.clone()))
    }

    /// Waits until no response is streaming, at most `bound`.
    pub(crate) async fn idle(&self, bound: Duration) {
        let count = &*self.0;
        count.awaited.store(true, Ordering::SeqCst);
        let drained = until_zero(&count.open, &count.idle);
        let _ = tokio::time::timeout(bound, drained).await;
    }
}

struct StreamGuard(Option<OpenStreams>);

impl StreamGuard {
    fn end(&mut self) {
        if let Some(streams) = self.0.take() {
            let count = &*streams.0;
            // `awaited` is read after the decrement, and `idle` reads the
            // count after setting it: one of the two sees the other.
            let was = count.open.fetch_sub(1, Ordering::SeqCst);
            if was == 1 && count.awaited.load(Ordering::SeqCst) {
                count.idle.notify_waiters();
            }
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.end();
    }
}

fn json_error(status: StatusCode, rejection: &Rejection) -> Response {
    body::json(status, rejection.to_bytes())
}

fn too_large(limit: usize) -> Response {
    json_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        &Rejection::new(
            INVALID_REQUEST,
            format!("Request body too large: the limit is {limit} bytes"),
            None,
        ),
    )
}

enum Unread {
    TooLarge,
    Failed(axum::Error),
}

/// The whole body, or `TooLarge` as soon as it passes `limit` bytes.
async fn read_bounded(mut body: Body, limit: usize) -> Result<Bytes, Unread> {
    use http_body::Body as _;
    let mut collected = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(Unread::Failed)?;
        if let Ok(data) = frame.into_data() {
            if data.len() > limit.saturating_sub(collected.len()) {
                return Err(Unread::TooLarge);
            }
            collected.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(collected))
}

fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// Admits `request`: served here (directly, see [`direct`]) or passed to
/// rmcp's service (`next`), or answered with the error of what it failed.
pub(crate) async fn admit(admission: &Admission, request: Request, next: Next) -> Response {
    // A session is busy while any of its requests is answered: a call
    // running, or its `GET` stream open (see `SessionTable`).
    let session = request
        .headers()
        .get(&SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let busy = session
        .as_ref()
        .and_then(|session| admission.table.busy(session));
    let closes = request.method() == Method::DELETE;
    let response = admit_marked(admission, request, next).await;
    if let (true, Some(session)) = (closes && response.status().is_success(), &session) {
        admission.table.remove(session);
    }
    match busy {
        None => response,
        Some(busy) => response.map(|inner| EndAware::wrap(inner, move |_| drop(busy))),
    }
}

async fn admit_marked(admission: &Admission, request: Request, next: Next) -> Response {
    // Other methods carry no body; a body that is not JSON is rmcp's 415.
    if request.method() != Method::POST || !is_json(&request) {
        return next.run(request).await;
    }
    let limit = admission.max_body_bytes;
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return too_large(limit);
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_bounded(body, limit).await {
        Ok(bytes) => bytes,
        Err(Unread::TooLarge) => return too_large(limit),
        Err(Unread::Failed(error)) => {
            let mut response = Response::new(Body::from(format!(
                "Bad Request: the request body could not be read: {error}"
            )));
            *response.status_mut() = StatusCode::BAD_REQUEST;
            return response;
        }
    };
    let message = match jsonrpc::read(&bytes) {
        Inbound::Reject(rejection) => {
            let status = if rejection.code == jsonrpc::METHOD_NOT_FOUND {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::BAD_REQUEST
            };
            return json_error(status, &rejection);
        }
        Inbound::Ignore => {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::ACCEPTED;
            return response;
        }
        Inbound::Message(message) => message,
    };
    #[cfg(feature = "oauth")]
    if let Some(refusal) = step_up(admission, &parts, &message).await {
        return refusal;
    }
    let mut parts = parts;
    if is_listen(&message) {
        admission.server.hold_listen_stream(&mut parts);
    }
    let opens_session = !admission.sessionless
        && !parts.headers.contains_key(&SESSION_HEADER)
        && matches!(
            &*message,
            JsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::InitializeRequest(_))
        );
    // A plain request on an open session, or a plain stateless one, is
    // served with the message read above, not as bytes for rmcp to parse
    // again (see `direct`).
    let direct =
        match (!admission.sessionless && !opens_session && parts.uri.path() == admission.path)
            .then(|| direct::session_of(&parts, &message))
            .flatten()
        {
            Some(session) if direct::is_open(&admission.sessions, &session).await => Some(session),
            _ => None,
        };
    if let Some(session) = &direct {
        if direct::is_call(&message) {
            let here = admission
                .server
                .open_sessions()
                .serving_here(session, admission.session_idle_timeout);
            if let Some(here) = here {
                let mut guard = admission.streams.enter();
                let response = direct::serve_in_session(
                    here,
                    *message,
                    parts,
                    admission.keep_alive,
                    &admission.sessions_cancel,
                )
                .await;
                return response.map(|inner| EndAware::wrap(inner, move |_| guard.end()));
            }
        }
    } else if let Some(session) = parts.headers.get(&SESSION_HEADER) {
        // A call running in its request is not in rmcp's loop: its
        // cancellation is found here (and passed on to rmcp all the same).
        if let (Ok(session), Some(request)) = (session.to_str(), cancelled_request(&message)) {
            admission.server.open_sessions().cancel(session, request);
        }
    }
    let stateless = direct.is_none()
        && !opens_session
        && parts.uri.path() == admission.path
        && (direct::is_stateless(&admission.server, &parts, &message)
            || (admission.sessionless && direct::is_sessionless_2025(&parts, &message)));
    let guard = admission.streams.enter();
    let response = if stateless {
        direct::serve_stateless(
            &admission.server,
            &admission.detached_peers,
            *message,
            parts,
            admission.keep_alive,
            &admission.sessions_cancel,
        )
        .await
    } else if let Some(session) = direct {
        direct::serve(
            &admission.sessions,
            &session,
            *message,
            parts,
            admission.keep_alive,
            &admission.sessions_cancel,
        )
        .await
    } else if opens_session {
        let request = Request::from_parts(parts, Body::from(bytes));
        let id = match &*message {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let _one_at_a_time = admission.initializing.lock().await;
        if admission.server.inflight().is_draining() {
            return json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                &Rejection::new(
                    -32000,
                    "The server is shutting down and takes no new sessions",
                    id,
                ),
            );
        }
        open_session(admission, request, id, next).await
    } else {
        next.run(Request::from_parts(parts, Body::from(bytes)))
            .await
    };
    let mut guard = guard;
    response.map(|inner| EndAware::wrap(inner, move |_| guard.end()))
}

/// Whether `message` opens a `subscriptions/listen` stream.
fn is_listen(message: &rmcp::model::ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        JsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::SubscriptionsListenRequest(_))
    )
}

/// The request a `notifications/cancelled` names.
fn cancelled_request(
    message: &rmcp::model::ClientJsonRpcMessage,
) -> Option<&rmcp::model::RequestId> {
    match message {
        JsonRpcMessage::Notification(rmcp::model::JsonRpcNotification {
            notification: rmcp::model::ClientNotification::CancelledNotification(cancelled),
            ..
        }) => cancelled.params.request_id.as_ref(),
        _ => None,
    }
}

/// Opens a session for an `initialize` (one at a time, the caller holds
/// the lock): room is made by the session table's rule — the least
/// recently used idle session goes, with a log line, and its next request
/// gets `404` — or `503` when every candidate is busy.
async fn open_session(
    admission: &Admission,
    request: Request,
    id: Option<rmcp::model::RequestId>,
    next: Next,
) -> Response {
    // Sessions rmcp ended on its own (idle timeout) leave the table first.
    {
        let live = admission.sessions.sessions.read().await;
        admission
            .table
            .retain(|session| live.contains_key(session.as_str()));
    }
    let principal = request
        .extensions()
        .get::<RequestState>()
        .and_then(|state| state.auth.as_ref())
        .map(|auth| auth.security_context_key().to_owned());
    match admission.table.make_room(&principal) {
        Ok(None) => {}
        Ok(Some(evicted)) => {
            let _ = admission
                .sessions
                .close_session(&evicted.as_str().into())
                .await;
        }
        Err(refusal) => {
            let mut response = json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                &Rejection::new(-32000, refusal.message("sessions"), id),
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        }
    }
    let response = next.run(request).await;
    if response.status().is_success() {
        if let Some(created) = response
            .headers()
            .get(&SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
        {
            admission.table.insert(created.to_owned(), principal);
        }
    }
    response
}
