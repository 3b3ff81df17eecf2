//! The HTTP client under a streamable-HTTP connection: reqwest's, watched
//! so that a connection to a 2025-revision session is listening on the
//! session's standalone stream (its `GET`) before it is handed out, and so
//! that a server that went away (its port refuses connections) or forgot
//! the session (it answers `404` to the session id, as after a restart) is
//! noticed, even between calls: rmcp's transport keeps running either way.
//!
//! rmcp opens that stream in the background once the handshake is done. A
//! server that asks the client something outside a request's own response
//! stream (the TypeScript SDK's `server.request(…)` inside a tool does)
//! sends the question there, and a question sent before the stream is
//! open is lost: the call then waits for an answer that never comes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::sync::watch;

/// How long a new session waits for its standalone stream at most (a
/// server that never answers the `GET` gets a connection without it, as
/// before).
const LISTEN_WAIT: Duration = Duration::from_secs(5);

/// reqwest's client, noting whether the connection has a session and
/// whether the session's standalone stream has been answered.
#[derive(Clone)]
pub(super) struct WatchedHttp {
    inner: reqwest::Client,
    watch: Arc<Watch>,
}

struct Watch {
    /// A request carried a session id: rmcp opens the standalone stream.
    session: AtomicBool,
    /// The server answered the standalone stream's `GET` (either way).
    listening: watch::Sender<bool>,
    /// A request could not reach the server, or the server no longer knew
    /// the session: the connection is no good any more.
    failed: AtomicBool,
    /// The cause chain of the last request that failed in reqwest (rmcp's
    /// error keeps only its first line: not why, e.g. an untrusted
    /// certificate).
    last_cause: std::sync::Mutex<Option<String>>,
}

impl WatchedHttp {
    pub(super) fn new(inner: reqwest::Client) -> Self {
        WatchedHttp {
            inner,
            watch: Arc::new(Watch {
                session: AtomicBool::new(false),
                listening: watch::channel(false).0,
                failed: AtomicBool::new(false),
                last_cause: std::sync::Mutex::new(None),
            }),
        }
    }

    /// Waits, within [`LISTEN_WAIT`], until the session's standalone stream
    /// is answered; at once when the connection has no session.
    pub(super) async fn until_listening(&self) {
        if !self.watch.session.load(Ordering::Acquire) {
            return;
        }
        let mut listening = self.watch.listening.subscribe();
        let _ = tokio::time::timeout(LISTEN_WAIT, listening.wait_for(|yes| *yes)).await;
    }

    fn saw(&self, session_id: &Option<Arc<str>>) {
        if session_id.is_some() {
            self.watch.session.store(true, Ordering::Release);
        }
    }

    /// Why the last request that failed in reqwest failed, cause included.
    pub(super) fn last_cause(&self) -> Option<String> {
        self.watch
            .last_cause
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether a request found the server gone or the session forgotten.
    pub(super) fn has_failed(&self) -> bool {
        self.watch.failed.load(Ordering::Acquire)
    }

    /// Notes `result` when it says the server is gone (the connection was
    /// refused) or no longer knows the session (`404` to a session id).
    fn judge<T>(
        &self,
        result: Result<T, StreamableHttpError<reqwest::Error>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        if let Err(StreamableHttpError::Client(error)) = &result {
            *self
                .watch
                .last_cause
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(
                std::error::Error::source(error)
                    .map_or_else(|| error.to_string(), crate::adapters::http::error_chain),
            );
        }
        let failed = match &result {
            Err(StreamableHttpError::SessionExpired) => true,
            Err(StreamableHttpError::Client(error)) => {
                error.is_connect()
                    || (error.status() == Some(reqwest::StatusCode::NOT_FOUND)
                        && self.watch.session.load(Ordering::Acquire))
            }
            _ => false,
        };
        if failed {
            self.watch.failed.store(true, Ordering::Release);
        }
        result
    }
}

impl StreamableHttpClient for WatchedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.saw(&session_id);
        self.judge(
            self.inner
                .post_message(uri, message, session_id, auth_header, custom_headers)
                .await,
        )
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.saw(&session_id);
        self.judge(
            self.inner
                .post_message_with_max_sse_event_size(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await,
        )
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.saw(&session_id);
        self.judge(
            self.inner
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await,
        )
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let opening = session_id.is_some() && last_event_id.is_none();
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        if opening {
            self.watch.listening.send_replace(true);
        }
        self.judge(stream)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let opening = session_id.is_some() && last_event_id.is_none();
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        if opening {
            self.watch.listening.send_replace(true);
        }
        self.judge(stream)
    }
}
