//! [`WsClient`]: a [`Transport`](crate::client::Transport) over one
//! WebSocket connection (tokio-tungstenite), so a generated typed client
//! works over a socket; it also receives the server's broadcasts.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_util::sync::CancellationToken;

use crate::adapters::ws::{WsBroadcast, WsOutbound, WsReply, WsRequest};
use crate::client::Transport;
use crate::error::ToolError;
use crate::event::ToolEvent;
use crate::event::ToolEventStream;

/// Broadcasts a slow subscriber may fall behind by.
const BROADCAST_CAPACITY: usize = 256;

/// How a [`WsClient`] connects.
#[derive(Clone, Default)]
pub struct WsClientOptions {
    api_key: Option<String>,
    origin: Option<String>,
    headers: Vec<(String, String)>,
    max_message_bytes: Option<usize>,
}

impl fmt::Debug for WsClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WsClientOptions")
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("origin", &self.origin)
            .field("headers", &self.headers.len())
            .field("max_message_bytes", &self.max_message_bytes)
            .finish()
    }
}

impl WsClientOptions {
    /// Default options: no key, no Origin header.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `Authorization: Bearer <key>` with the upgrade request.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sends an `Origin` header, as a browser page would.
    pub fn origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }

    /// Sends another header with the upgrade request (a session cookie).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The limit of one incoming message (default: tungstenite's, 64 MiB).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = Some(bytes);
        self
    }
}

/// Why [`WsClient::connect`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WsClientError {
    /// The URL or a header is not valid.
    #[error("invalid WebSocket request: {0}")]
    Request(String),
    /// The server answered the upgrade with an HTTP error (`401` for a
    /// missing or wrong key, `403` for a foreign Origin or Host).
    #[error("the server refused the WebSocket upgrade: {status} {body}")]
    Rejected {
        /// The HTTP status.
        status: u16,
        /// The response body.
        body: String,
    },
    /// The connection failed.
    #[error("could not connect the WebSocket: {0}")]
    Connect(#[source] tungstenite::Error),
}

/// The calls waiting for their reply, by `reqId`.
type Pending = Mutex<HashMap<String, mpsc::UnboundedSender<ToolEvent>>>;

struct Shared {
    outgoing: mpsc::UnboundedSender<Message>,
    pending: Pending,
    broadcasts: broadcast::Sender<WsBroadcast>,
    next_id: AtomicU64,
    closed: CancellationToken,
    close_reason: Mutex<Option<String>>,
}

impl Shared {
    fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<ToolEvent>>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn closed_error(&self) -> ToolError {
        let reason = self
            .close_reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| "the connection is closed".to_owned());
        ToolError::internal(format!("WebSocket transport failed: {reason}"))
    }

    fn on_message(&self, text: &str) {
        match WsOutbound::parse(text) {
            Ok(WsOutbound::Reply(reply)) => {
                let Some(id) = reply.req_id().and_then(Value::as_str) else {
                    tracing::debug!(target: "gonk_tools::adapters::ws", %text, "a WebSocket reply without a reqId of this client");
                    return;
                };
                if let Some(call) = self.pending().remove(id) {
                    let _ = call.send(reply_event(reply));
                }
            }
            Ok(WsOutbound::Event(event)) => {
                let id = event.req_id.as_ref().and_then(Value::as_str);
                if let Some(call) = id.and_then(|id| self.pending().get(id).cloned()) {
                    let _ = call.send(event.event);
                }
            }
            Ok(WsOutbound::Broadcast(message)) => {
                let _ = self.broadcasts.send(message);
            }
            // This client never says it can answer, so no server asks it.
            Ok(WsOutbound::Question(question)) => {
                tracing::debug!(target: "gonk_tools::adapters::ws", id = %question.id, "a question this client did not ask for; the call goes on without an answer");
            }
            Err(error) => {
                tracing::warn!(target: "gonk_tools::adapters::ws", %error, "the WebSocket server sent a message this client cannot read");
            }
        }
    }

    /// The connection ended: every waiting call gets an error.
    fn end(&self, reason: String) {
        *self.close_reason.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason);
        self.closed.cancel();
        let waiting: Vec<_> = self.pending().drain().collect();
        let error = self.closed_error();
        for (_, call) in waiting {
            let _ = call.send(ToolEvent::error(error.clone()));
        }
    }
}

fn reply_event(reply: WsReply) -> ToolEvent {
    match reply.into_result() {
        Ok(data) => ToolEvent::result(data),
        Err(error) => ToolEvent::error(error),
    }
}

/// Cancels a call whose stream is dropped before its reply.
struct CallGuard {
    shared: Arc<Shared>,
    id: String,
    done: bool,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if self.done || self.shared.pending().remove(&self.id).is_none() {
            return;
        }
        let cancel = serde_json::json!({"type": "cancel", "reqId": self.id});
        let _ = self.shared.outgoing.send(Message::text(cancel.to_string()));
    }
}

/// A client of the WebSocket projection: one connection, any number of
/// concurrent calls, and the server's broadcasts.
///
/// As a [`Transport`], each call is a streaming request (`"stream":
/// true`): progress, log and data events arrive before the `result` or
/// `error`. Dropping a call's stream before its reply sends a `cancel`
/// (the server drops the handler). When the connection ends, every
/// waiting call gets an `INTERNAL` error naming why.
///
/// ```no_run
/// use gonk_tools::adapters::ws::{WsClient, WsClientOptions};
/// use gonk_tools::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = WsClient::connect("ws://127.0.0.1:8808/ws", WsClientOptions::new()).await?;
/// let mut broadcasts = client.broadcasts();
/// let events = gonk_tools::client::Transport::invoke(&client, "notes.get", json!({"id": 1}));
/// let note = collect_tool_outcome(events, |_| {}).await?;
/// # let _ = (note, broadcasts.recv().await); Ok(()) }
/// ```
#[derive(Clone)]
pub struct WsClient {
    shared: Arc<Shared>,
}

impl fmt::Debug for WsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WsClient")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl WsClient {
    /// Connects to `url` (`ws://HOST:PORT/ws`).
    pub async fn connect(url: &str, options: WsClientOptions) -> Result<WsClient, WsClientError> {
        let mut request = url
            .into_client_request()
            .map_err(|e| WsClientError::Request(e.to_string()))?;
        let mut headers: Vec<(String, String)> = options.headers.clone();
        if let Some(key) = &options.api_key {
            headers.push(("authorization".into(), format!("Bearer {key}")));
        }
        if let Some(origin) = &options.origin {
            headers.push(("origin".into(), origin.clone()));
        }
        for (name, value) in headers {
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| WsClientError::Request(e.to_string()))?;
            let value = http::HeaderValue::from_str(&value)
                .map_err(|e| WsClientError::Request(e.to_string()))?;
            request.headers_mut().append(name, value);
        }
        let mut config = WebSocketConfig::default();
        if let Some(limit) = options.max_message_bytes {
            config = config
                .max_message_size(Some(limit))
                .max_frame_size(Some(limit));
        }
        let (socket, _) = tokio_tungstenite::connect_async_with_config(request, Some(config), true)
            .await
            .map_err(|error| match error {
                tungstenite::Error::Http(response) => WsClientError::Rejected {
                    status: response.status().as_u16(),
                    body: response
                        .body()
                        .as_deref()
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                        .unwrap_or_default(),
                },
                other => WsClientError::Connect(other),
            })?;
        let (outgoing, mut to_send) = mpsc::unbounded_channel::<Message>();
        let shared = Arc::new(Shared {
            outgoing,
            pending: Mutex::new(HashMap::new()),
            broadcasts: broadcast::channel(BROADCAST_CAPACITY).0,
            next_id: AtomicU64::new(1),
            closed: CancellationToken::new(),
            close_reason: Mutex::new(None),
        });
        let io = Arc::clone(&shared);
        tokio::spawn(async move {
            let (mut sink, mut stream) = socket.split();
            let reason = loop {
                tokio::select! {
                    frame = stream.next() => match frame {
                        Some(Ok(Message::Text(text))) => io.on_message(text.as_str()),
                        Some(Ok(Message::Close(frame))) => {
                            break match frame {
                                Some(frame) => format!("the server closed the connection ({} {})", u16::from(frame.code), frame.reason),
                                None => "the server closed the connection".to_owned(),
                            };
                        }
                        Some(Ok(_)) => {}
                        Some(Err(error)) => break format!("the connection failed: {error}"),
                        None => break "the connection ended".to_owned(),
                    },
                    message = to_send.recv() => match message {
                        Some(message) => {
                            let closing = matches!(message, Message::Close(_));
                            if let Err(error) = sink.send(message).await {
                                break format!("sending failed: {error}");
                            }
                            if closing {
                                // Wait (briefly) for the server's close; the socket ends anyway.
                                let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
                                    while let Some(Ok(frame)) = stream.next().await {
                                        if matches!(frame, Message::Close(_)) { break; }
                                    }
                                }).await;
                                break "the client closed the connection".to_owned();
                            }
                        }
                        None => break "the client was dropped".to_owned(),
                    },
                }
            };
            io.end(reason);
        });
        Ok(WsClient { shared })
    }

    /// The server's broadcasts from now on. A subscriber that falls more
    /// than 256 behind misses the oldest (`RecvError::Lagged`).
    pub fn broadcasts(&self) -> broadcast::Receiver<WsBroadcast> {
        self.shared.broadcasts.subscribe()
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Closes the connection (normal closure) and waits until it has
    /// ended. Calls still waiting get an error.
    pub async fn close(&self) {
        let _ = self.shared.outgoing.send(Message::Close(None));
        self.shared.closed.cancelled().await;
    }
}

impl Transport for WsClient {
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        let shared = Arc::clone(&self.shared);
        let id = format!("c{}", shared.next_id.fetch_add(1, Ordering::Relaxed));
        let (events, mut receive) = mpsc::unbounded_channel();
        let request = WsRequest::new(name, input)
            .with_req_id(id.clone())
            .streaming();
        shared.pending().insert(id.clone(), events);
        let sent = shared
            .outgoing
            .send(Message::text(request.to_json().to_string()))
            .is_ok();
        // Closed before the insert: `end` did not see this call.
        let orphaned =
            (!sent || shared.closed.is_cancelled()) && shared.pending().remove(&id).is_some();
        // The request is already on its way: the guard exists from here, so
        // a stream dropped before its first poll still cancels the call.
        let guard = CallGuard {
            shared,
            id,
            done: orphaned,
        };
        Box::pin(async_stream::stream! {
            let mut guard = guard;
            if orphaned {
                yield ToolEvent::error(guard.shared.closed_error());
                return;
            }
            while let Some(event) = receive.recv().await {
                let last = matches!(event, ToolEvent::Result { .. } | ToolEvent::Error { .. });
                yield event;
                if last {
                    guard.done = true;
                    return;
                }
            }
            guard.done = true;
            yield ToolEvent::error(guard.shared.closed_error());
        })
    }
}
