//! The plain requests, served with the message the admission layer
//! already read instead of handing rmcp's service the bytes to parse a
//! second time (the parse was a sixth of a request's instructions).
//!
//! Two cases are taken here, each only where every check rmcp makes
//! passes (anything else, and a session id rmcp does not know, goes to
//! rmcp's service with the body as it came, for rmcp's own answer):
//!
//! * **A request on an open 2025 session** ([`session_of`]): not
//!   `initialize` nor `server/discover`, a session id, an `Accept` naming
//!   both `application/json` and `text/event-stream` without parameters, a
//!   readable `Host`, no per-request protocol version in `_meta`, and an
//!   `MCP-Protocol-Version` header that is absent or a known version with
//!   the `initialize` handshake. The session answers as under rmcp, but a
//!   final answer that comes first is sent as plain JSON (see [`serve`]).
//!   A `tools/call` of a session whose client cannot be asked runs
//!   in the request's own task instead, with the session's server and peer
//!   (see [`serve_in_session`]).
//! * **A stateless (2026) `tools/call` or `tools/list`** ([`is_stateless`]):
//!   the era's `_meta` fields complete, its version known and the same in
//!   the `MCP-Protocol-Version` header, one `Mcp-Method` (and for a call
//!   one plain `Mcp-Name`) matching the body, a tool without `x-mcp-header`
//!   annotations (so no `Mcp-Param-*` header to check), no session id; and
//!   with sessions off, a 2025 `tools/call` or `tools/list` rmcp would serve
//!   the same way ([`is_sessionless_2025`]). Its handler runs in the
//!   request's own task, with rmcp's checks but without rmcp's serve loop
//!   (see [`serve_stateless`]); a final answer that comes first is plain
//!   JSON (rmcp's `json_response`), else SSE.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::{FutureExt as _, Stream};
use http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use http_body::Frame;
use rmcp::model::{
    ClientCapabilities, ClientJsonRpcMessage, ClientRequest, ErrorCode, GetExtensions, GetMeta,
    Implementation, InitializeRequestParams, JsonRpcMessage, JsonRpcRequest, ProtocolVersion,
    ServerJsonRpcMessage,
};
use rmcp::service::{serve_directly, Peer, RequestContext};
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use rmcp::{ErrorData, RoleServer, Service};
use serde_json::Value;

use super::security::RequestState;
use crate::adapters::mcp::server::notify::{AnswerStream, ANSWER_STREAM_CAPACITY};
use crate::adapters::mcp::server::sessions::{OpenSession, Running};
use crate::adapters::mcp::server::McpServer;
use sse_stream::Sse;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

// Header names as values, not text: a lookup by text parses the name
// first, and these are looked up on every request.
pub(crate) static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
static PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
/// How a Base64-wrapped SEP-2243 header value starts.
const BASE64_HEADER_PREFIX: &str = "=?base64?";
const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";
const JSON_AND_SSE: &str = "application/json, text/event-stream";

/// The session `message` goes to directly, when it is the plain case (see
/// the module's documentation); `None` leaves it to rmcp's service.
pub(crate) fn session_of(
    parts: &http::request::Parts,
    message: &ClientJsonRpcMessage,
) -> Option<SessionId> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    if matches!(
        request.request,
        ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_)
    ) {
        return None;
    }
    if request.request.get_meta().protocol_version().is_some() {
        return None;
    }
    if !has_handshake_version(&parts.headers)
        || !accepts_json_and_sse(&parts.headers)
        || !host_is_readable(parts)
    {
        return None;
    }
    let session = parts.headers.get(&SESSION_HEADER)?.to_str().ok()?;
    Some(session.into())
}

/// No `MCP-Protocol-Version`, or one rmcp knows of an era with the
/// `initialize` handshake: rmcp then routes the request to its session and
/// checks no `_meta` fields and no standard headers.
fn has_handshake_version(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(&PROTOCOL_VERSION_HEADER) else {
        return true;
    };
    let Ok(value) = value.to_str() else {
        return false;
    };
    value < ProtocolVersion::STANDARD_HEADERS.as_str()
        && ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|known| known.as_str() == value && known.has_initialize())
}

/// Whether `Accept` names both types plainly (no parameters, no quotes):
/// then rmcp's weighing accepts it too. Anything subtler is rmcp's to judge.
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        // What the SDKs send, as they send it.
        if value.as_bytes() == JSON_AND_SSE.as_bytes() {
            return true;
        }
        let Ok(value) = value.to_str() else {
            continue;
        };
        for entry in value.split(',') {
            let entry = entry.trim();
            json |= entry.eq_ignore_ascii_case(JSON);
            sse |= entry.eq_ignore_ascii_case(EVENT_STREAM);
        }
    }
    json && sse
}

/// rmcp answers `400` for a `Host` it cannot read, even with its host
/// allow-list off.
fn host_is_readable(parts: &http::request::Parts) -> bool {
    match parts.headers.get(header::HOST) {
        Some(host) => host
            .to_str()
            .is_ok_and(|host| http::uri::Authority::try_from(host).is_ok()),
        None => parts.uri.authority().is_some(),
    }
}

/// Whether `message` is a 2025-era `tools/call` or `tools/list` that rmcp,
/// with sessions off (`McpHttpOptions::sessions(false)`), would serve on
/// its own as it is: no per-request version in `_meta`, an
/// `MCP-Protocol-Version` header absent or a known handshake-era version,
/// none of the 2026 standard headers (rmcp would check them against the
/// body), `Accept` naming JSON and SSE, a readable `Host`. Served by
/// [`serve_stateless`], like a 2026 request.
pub(crate) fn is_sessionless_2025(
    parts: &http::request::Parts,
    message: &ClientJsonRpcMessage,
) -> bool {
    let JsonRpcMessage::Request(request) = message else {
        return false;
    };
    if !matches!(
        request.request,
        ClientRequest::CallToolRequest(_) | ClientRequest::ListToolsRequest(_)
    ) {
        return false;
    }
    let headers = &parts.headers;
    request.request.get_meta().protocol_version().is_none()
        && has_handshake_version(headers)
        && !headers.contains_key(&METHOD_HEADER)
        && !headers.contains_key(&NAME_HEADER)
        && accepts_json_and_sse(headers)
        && host_is_readable(parts)
}

/// Whether `message` is a stateless (2026) `tools/call` or `tools/list`
/// that rmcp would serve as it is (see the module's documentation).
pub(crate) fn is_stateless(
    server: &McpServer,
    parts: &http::request::Parts,
    message: &ClientJsonRpcMessage,
) -> bool {
    let JsonRpcMessage::Request(request) = message else {
        return false;
    };
    let (method, name) = match &request.request {
        ClientRequest::CallToolRequest(call) => ("tools/call", Some(call.params.name.as_ref())),
        ClientRequest::ListToolsRequest(_) => ("tools/list", None),
        _ => return false,
    };
    let headers = &parts.headers;
    let meta = request.request.get_meta();
    let Some(version) = meta.protocol_version() else {
        return false;
    };
    let known = ProtocolVersion::KNOWN_VERSIONS.contains(&version);
    if !known
        || version.as_str() < ProtocolVersion::STANDARD_HEADERS.as_str()
        || !meta
            .missing_required_keys(&ProtocolVersion::V_2026_07_28)
            .is_empty()
        || headers.contains_key(&SESSION_HEADER)
        || only_value(headers, &PROTOCOL_VERSION_HEADER) != Some(version.as_str())
        || only_value(headers, &METHOD_HEADER) != Some(method)
        || !accepts_json_and_sse(headers)
        || !host_is_readable(parts)
    {
        return false;
    }
    let Some(name) = name else {
        return true;
    };
    match only_value(headers, &NAME_HEADER) {
        Some(header) if header == name && !header.starts_with(BASE64_HEADER_PREFIX) => {}
        _ => return false,
    }
    !server
        .with_input_schema(name, mentions_param_header)
        .unwrap_or(false)
}

/// The one value of header `name` as text; `None` when absent, repeated or
/// not text.
fn only_value<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// Whether an `x-mcp-header` key appears anywhere in `schema`.
fn mentions_param_header(schema: &Value) -> bool {
    match schema {
        Value::Object(object) => {
            object.contains_key(crate::definition::X_MCP_HEADER)
                || object.values().any(mentions_param_header)
        }
        Value::Array(items) => items.iter().any(mentions_param_header),
        _ => false,
    }
}

/// Serves a request [`is_stateless`] or [`is_sessionless_2025`] took, with
/// rmcp's checks and answers (`Service::handle_request`, as rmcp's serve
/// loop calls it) but without the loop: the handler runs in this request's
/// own task. rmcp would spawn a serve loop on a one-shot transport, spawn
/// the handler from it, and spawn again to send the answer — three tasks
/// and their cross-thread wake-ups for one call. Here the call's
/// notifications go straight into the answer ([`AnswerStream`]); the peer
/// its context holds is the server's detached one for the request's
/// protocol version ([`DetachedPeers`]): its `peer_info` is the one rmcp's
/// per-request session would have, and nothing sent on it is delivered,
/// as no answer to a server → client request could come back to a request
/// without a session.
///
/// The answer is plain JSON when it is the first thing the call sends
/// (rmcp's `json_response`), else an SSE stream of the notifications and
/// then the answer. The request's token is cancelled when the answer is
/// complete or dropped: a client that goes away drops the handler with it.
pub(crate) async fn serve_stateless(
    server: &Arc<McpServer>,
    peers: &DetachedPeers,
    message: ClientJsonRpcMessage,
    parts: http::request::Parts,
    keep_alive: Option<Duration>,
    cancel: &CancellationToken,
) -> Response {
    let JsonRpcMessage::Request(JsonRpcRequest { id, request, .. }) = message else {
        // `is_stateless` takes requests only.
        return internal_error("serve a stateless message", "it is not a request");
    };
    let version = request
        .get_meta()
        .protocol_version()
        // A sessionless 2025 request names its version in the header only
        // (rmcp's default when absent: 2025-03-26).
        .or_else(|| {
            let header = only_value(&parts.headers, &PROTOCOL_VERSION_HEADER)?;
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .find(|known| known.as_str() == header)
                .cloned()
        })
        .unwrap_or(ProtocolVersion::V_2025_03_26);
    let Some(peer) = peers.get(server, &version) else {
        return internal_error(
            "serve a stateless message",
            "its protocol version is unknown",
        );
    };
    let here = Here {
        server: Served::Shared(Arc::clone(server)),
        peer,
        cancel: CancellationToken::new(),
    };
    here.serve(id, request, parts, keep_alive, cancel).await
}

/// Whether `message` is a `tools/call`: one of a session kept in
/// [`OpenSessions`](crate::adapters::mcp::server::sessions::OpenSessions)
/// may run in its request.
pub(crate) fn is_call(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::CallToolRequest(_),
            ..
        })
    )
}

/// Serves a `tools/call` ([`is_call`]) of an open 2025 session
/// whose client cannot be asked ([`OpenSession`]) in this request's own
/// task, as [`serve_stateless`] serves a stateless one, with the session's
/// server and peer. rmcp would hand it to the session's worker, which hands
/// it to the session's serve loop, which spawns its handler, whose answer
/// goes back through the worker: four tasks for one call. Its token is
/// kept with the session while it runs, so the client's
/// `notifications/cancelled` still reaches it
/// ([`OpenSessions::cancel`](crate::adapters::mcp::server::sessions::OpenSessions::cancel)).
pub(crate) async fn serve_in_session(
    session: Arc<OpenSession>,
    message: ClientJsonRpcMessage,
    parts: http::request::Parts,
    keep_alive: Option<Duration>,
    cancel: &CancellationToken,
) -> Response {
    let JsonRpcMessage::Request(JsonRpcRequest { id, request, .. }) = message else {
        return internal_error("serve a session's call", "it is not a request");
    };
    let request_cancel = CancellationToken::new();
    let running = session.running(id.clone(), request_cancel.clone());
    let here = Here {
        peer: session.peer.clone(),
        server: Served::Session {
            session,
            _running: running,
        },
        cancel: request_cancel,
    };
    here.serve(id, request, parts, keep_alive, cancel).await
}

/// The server a request served in its own task goes to.
enum Served {
    /// The server itself (a stateless request).
    Shared(Arc<McpServer>),
    /// A 2025 session's server, with its call registered until it ends.
    Session {
        session: Arc<OpenSession>,
        _running: Running,
    },
}

impl Served {
    fn server(&self) -> &McpServer {
        match self {
            Served::Shared(server) => server,
            Served::Session { session, .. } => &session.server,
        }
    }
}

/// A request served in its own task: the server, the peer its context
/// holds, and the request's own token.
struct Here {
    server: Served,
    peer: Peer<RoleServer>,
    cancel: CancellationToken,
}

impl Here {
    /// Runs the handler in this task (rmcp's checks and answers, as rmcp's
    /// serve loop calls `Service::handle_request`) and answers: plain JSON
    /// when the answer is the first thing the call sends, else SSE. The
    /// request's token is cancelled when the answer is complete or dropped.
    async fn serve(
        self,
        id: rmcp::model::RequestId,
        mut request: ClientRequest,
        parts: http::request::Parts,
        keep_alive: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Response {
        let Here {
            server,
            peer,
            cancel: request_cancel,
        } = self;
        let (answers, notes) = tokio::sync::mpsc::channel(ANSWER_STREAM_CAPACITY);
        let mut context = RequestContext::new(id.clone(), peer);
        context.ct = request_cancel.clone();
        // The `_meta` first: it is kept in the extensions (as rmcp's loop does).
        context.meta = std::mem::take(request.get_meta_mut());
        context.extensions = std::mem::take(request.extensions_mut());
        context.extensions.insert(parts);
        context.extensions.insert(AnswerStream {
            sender: answers,
            session: matches!(server, Served::Session { .. }),
        });
        let handled = async move {
            let handled =
                AssertUnwindSafe(Service::handle_request(server.server(), request, context));
            match handled.catch_unwind().await {
                Ok(Ok(result)) => ServerJsonRpcMessage::response(result, id),
                Ok(Err(error)) => ServerJsonRpcMessage::error(error, Some(id)),
                // Our code outside the tool panicked (the tool's own panic
                // is its `INTERNAL` result). rmcp's spawned handler would
                // have died without an answer; this client gets an error.
                Err(_) => ServerJsonRpcMessage::error(
                    ErrorData::internal_error("the request's handler panicked", None),
                    Some(id),
                ),
            }
        };
        let mut answering = Answering {
            notes,
            handled: Some(Box::pin(handled)),
            answer: None,
            _cancel_on_drop: request_cancel.drop_guard(),
        };
        let first = tokio::select! {
            first = futures::StreamExt::next(&mut answering) => first,
            () = cancel.cancelled() => None,
        };
        let Some(first) = first else {
            return internal_error(
                "empty response",
                "no response message received from handler",
            );
        };
        if matches!(
            first,
            ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
        ) {
            // The whole answer: the handler has ended.
            let status = status_of(&first);
            let mut response =
                Response::new(Body::from(serde_json::to_vec(&first).unwrap_or_default()));
            *response.status_mut() = status;
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
            return response;
        }
        use futures::StreamExt as _;
        let messages = futures::stream::iter(Some(first))
            .chain(answering)
            .map(ServerSseMessage::from_message);
        sse_response(messages, keep_alive, cancel.clone())
    }
}

/// A handler running in its request, as a stream: the notifications it
/// sent, then its answer, then the end. Dropped before the end (the client
/// went away, the SSE body was dropped), it drops the handler and cancels
/// the request's token.
struct Answering {
    notes: tokio::sync::mpsc::Receiver<ServerJsonRpcMessage>,
    handled: Option<Pin<Box<dyn Future<Output = ServerJsonRpcMessage> + Send>>>,
    /// The answer, held until the notifications sent before it are out.
    answer: Option<ServerJsonRpcMessage>,
    _cancel_on_drop: tokio_util::sync::DropGuard,
}

impl Stream for Answering {
    type Item = ServerJsonRpcMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(handled) = &mut this.handled {
            if let Poll::Ready(answer) = handled.as_mut().poll(cx) {
                this.handled = None;
                this.answer = Some(answer);
            }
        }
        // What the handler sent comes first; its answer is last.
        match this.notes.try_recv() {
            Ok(note) => Poll::Ready(Some(note)),
            Err(_) if this.handled.is_none() => Poll::Ready(this.answer.take()),
            Err(_) => match this.notes.poll_recv(cx) {
                Poll::Ready(Some(note)) => Poll::Ready(Some(note)),
                _ => Poll::Pending,
            },
        }
    }
}

/// One peer per protocol version for the requests served in their own
/// task (see [`serve_stateless`]): a peer can only be made by rmcp's
/// service, so each is made once, by a service on a transport that is
/// closed from the start, with the `peer_info` rmcp gives a stateless
/// request of that version (default capabilities and client info).
#[derive(Default)]
pub(crate) struct DetachedPeers([std::sync::OnceLock<Peer<RoleServer>>; KNOWN_VERSIONS]);

const KNOWN_VERSIONS: usize = ProtocolVersion::KNOWN_VERSIONS.len();

impl DetachedPeers {
    /// The peer for `version`; `None` for a version rmcp does not know.
    fn get(&self, server: &McpServer, version: &ProtocolVersion) -> Option<Peer<RoleServer>> {
        let index = ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .position(|known| known == version)?;
        let peer = self.0[index].get_or_init(|| {
            let info = InitializeRequestParams::new(
                ClientCapabilities::default(),
                Implementation::default(),
            )
            .with_protocol_version(version.clone());
            serve_directly(server.clone(), Closed, Some(info))
                .peer()
                .clone()
        });
        Some(peer.clone())
    }
}

impl std::fmt::Debug for DetachedPeers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DetachedPeers").finish_non_exhaustive()
    }
}

/// The transport of a detached peer: nothing comes in, nothing goes out.
struct Closed;

impl rmcp::transport::Transport<RoleServer> for Closed {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "a request without a session has no channel back to its client",
        )))
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleServer>> {
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// rmcp's `500` (its words, so a log or a client sees the same).
fn internal_error(context: &str, error: impl std::fmt::Display) -> Response {
    tracing::error!("Internal server error when {context}: {error}");
    let mut response = Response::new(Body::from(format!(
        "Encounter an error when {context}: {error}"
    )));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
}

/// rmcp's HTTP status for a stateless answer (its request `_meta` is
/// complete here, so `-32602` stays in band).
fn status_of(message: &ServerJsonRpcMessage) -> StatusCode {
    let ServerJsonRpcMessage::Error(error) = message else {
        return StatusCode::OK;
    };
    match error.error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// Whether the session is open (rmcp answers `404` for one that is not).
pub(crate) async fn is_open(sessions: &LocalSessionManager, session: &SessionId) -> bool {
    sessions.has_session(session).await.unwrap_or(false)
}

/// Hands `message` (with the request's `parts` in its extensions, as rmcp
/// does) to the open `session` and answers with what the session sends:
/// a final answer that comes first (after rmcp's priming events, which
/// only matter to a stream that can be resumed) as plain JSON, as rmcp's
/// `json_response` answers a stateless request; anything else — progress,
/// logs, a question to the client before the answer — as rmcp's SSE
/// stream. While the first message is awaited the response has not begun,
/// so a client that goes away then is seen by the request's own
/// `disconnected` token being fired here, as the SSE body fires it.
pub(crate) async fn serve(
    sessions: &LocalSessionManager,
    session: &SessionId,
    mut message: ClientJsonRpcMessage,
    parts: http::request::Parts,
    keep_alive: Option<Duration>,
    cancel: &CancellationToken,
) -> Response {
    let disconnected = parts
        .extensions
        .get::<RequestState>()
        .map(|state| state.disconnected.clone());
    if let JsonRpcMessage::Request(request) = &mut message {
        request.request.extensions_mut().insert(parts);
    }
    let stream = match sessions.create_stream(session, message).await {
        Ok(stream) => stream,
        Err(error) => return internal_error("get session", error),
    };
    let mut stream = Box::pin(stream);
    let gone = disconnected.map(CancellationToken::drop_guard);
    let mut primed = Vec::new();
    let first = loop {
        let next = tokio::select! {
            next = futures::StreamExt::next(&mut stream) => next,
            () = cancel.cancelled() => None,
        };
        match next {
            Some(priming) if priming.message.is_none() => primed.push(priming),
            next => break next,
        }
    };
    if let Some(gone) = gone {
        let _ = gone.disarm();
    }
    match first {
        Some(ServerSseMessage {
            message: Some(answer),
            ..
        }) if matches!(
            *answer,
            ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
        ) =>
        {
            let mut response =
                Response::new(Body::from(serde_json::to_vec(&*answer).unwrap_or_default()));
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
            response
        }
        first => {
            use futures::StreamExt as _;
            let messages = futures::stream::iter(primed.into_iter().chain(first)).chain(stream);
            sse_response(messages, keep_alive, cancel.clone())
        }
    }
}

/// The SSE answer rmcp gives a request on a session: each message as a
/// `data:` event (with its event id and retry hint), a keep-alive comment
/// after `keep_alive` without an event, and the end when the server's
/// `cancel` fires.
fn sse_response<S>(messages: S, keep_alive: Option<Duration>, cancel: CancellationToken) -> Response
where
    S: Stream<Item = ServerSseMessage> + Send + 'static,
{
    let mut response = Response::new(Body::new(SseAnswer {
        messages: Box::pin(messages),
        cancel,
        cancelled: None,
        keep_alive,
        idle: None,
        done: false,
    }));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// The body of [`sse_response`]. The cancellation waiter and the
/// keep-alive timer are made the first time the stream has nothing to
/// give, not per response: an answer that is ready at once needs neither.
struct SseAnswer<S> {
    messages: Pin<Box<S>>,
    cancel: CancellationToken,
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
    keep_alive: Option<Duration>,
    idle: Option<Pin<Box<tokio::time::Sleep>>>,
    done: bool,
}

/// One message as rmcp frames it.
fn event(message: ServerSseMessage) -> Bytes {
    let mut sse = match &message.message {
        Some(message) => Sse::default().data(serde_json::to_string(&**message).unwrap_or_default()),
        // A priming event: empty data.
        None => Sse::default().data(""),
    };
    sse.id = message.event_id;
    sse.retry = message.retry.map(|retry| retry.as_millis() as u64);
    sse.into()
}

impl<S> http_body::Body for SseAnswer<S>
where
    S: Stream<Item = ServerSseMessage>,
{
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.done || this.cancel.is_cancelled() {
            this.done = true;
            return Poll::Ready(None);
        }
        match this.messages.as_mut().poll_next(cx) {
            Poll::Ready(Some(message)) => {
                if let (Some(idle), Some(interval)) = (&mut this.idle, this.keep_alive) {
                    idle.as_mut().reset(tokio::time::Instant::now() + interval);
                }
                Poll::Ready(Some(Ok(Frame::data(event(message)))))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => {
                let cancel = &this.cancel;
                let cancelled = this
                    .cancelled
                    .get_or_insert_with(|| Box::pin(cancel.clone().cancelled_owned()));
                if cancelled.as_mut().poll(cx).is_ready() {
                    this.done = true;
                    return Poll::Ready(None);
                }
                let Some(interval) = this.keep_alive else {
                    return Poll::Pending;
                };
                let idle = this
                    .idle
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(interval)));
                if idle.as_mut().poll(cx).is_ready() {
                    idle.as_mut().reset(tokio::time::Instant::now() + interval);
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b":\n\n")))));
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(pairs: &[(&str, &str)]) -> http::request::Parts {
        let mut request = http::Request::post("/mcp");
        for (name, value) in pairs {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn message(text: &str) -> ClientJsonRpcMessage {
        serde_json::from_str(text).unwrap()
    }

    const CALL: &str =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{}}}"#;
    const PLAIN: &[(&str, &str)] = &[
        ("host", "127.0.0.1:8080"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-session-id", "s1"),
    ];

    #[test]
    fn a_plain_session_request_goes_directly() {
        assert_eq!(
            session_of(&parts(PLAIN), &message(CALL)).as_deref(),
            Some("s1")
        );
        let mut with_version = PLAIN.to_vec();
        with_version.push(("mcp-protocol-version", "2025-06-18"));
        assert!(session_of(&parts(&with_version), &message(CALL)).is_some());
    }

    #[test]
    fn anything_rmcp_might_answer_otherwise_goes_to_rmcp() {
        let call = message(CALL);
        let without = |name: &str| -> Vec<(&str, &str)> {
            PLAIN.iter().copied().filter(|(n, _)| *n != name).collect()
        };
        assert!(session_of(&parts(&without("mcp-session-id")), &call).is_none());
        assert!(session_of(&parts(&without("accept")), &call).is_none());
        let mut weighted = without("accept");
        weighted.push(("accept", "application/json;q=0, text/event-stream"));
        assert!(session_of(&parts(&weighted), &call).is_none());
        for version in ["2026-07-28", "1999-01-01", "garbage"] {
            let mut versioned = PLAIN.to_vec();
            versioned.push(("mcp-protocol-version", version));
            assert!(session_of(&parts(&versioned), &call).is_none(), "{version}");
        }
        let mut bad_host = without("host");
        bad_host.push(("host", "a b"));
        assert!(session_of(&parts(&bad_host), &call).is_none());
        for text in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        ] {
            assert!(
                session_of(&parts(PLAIN), &message(text)).is_none(),
                "{text}"
            );
        }
    }

    #[test]
    fn events_are_framed_as_rmcp_frames_them() {
        let message: rmcp::model::ServerJsonRpcMessage =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap();
        assert_eq!(
            event(ServerSseMessage::new("0/1", message)),
            Bytes::from_static(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 0/1\n\n")
        );
        assert_eq!(
            event(ServerSseMessage::priming("0", Duration::from_secs(3))),
            Bytes::from_static(b"data: \nid: 0\nretry: 3000\n\n")
        );
    }
}
