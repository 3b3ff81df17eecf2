//! One open socket: frames in, calls run concurrently, replies, events and
//! broadcasts out, keepalive, and a clean close. When the socket closes,
//! every call still in flight is aborted — its handler is dropped.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::adapters::http::session_table::{Busy, Held};
use crate::adapters::ws::{WsHandler, WsInbound, WsQuestions, WsReply, WsRequest};
use crate::error::{ErrorCode, ToolError};

/// Close codes (RFC 6455 §7.4.1).
const GOING_AWAY: u16 = 1001;
const MESSAGE_TOO_BIG: u16 = 1009;
/// "Try again later": the connection was closed to make room.
const TRY_AGAIN_LATER: u16 = 1013;

/// Queued outgoing messages per connection. Events of streaming calls are
/// dropped when it is full (the client reads too slowly); replies wait.
const OUTGOING_CAPACITY: usize = 256;

/// How long a close frame may take to go out.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// The error code of a request past the connection's in-flight limit.
pub const BUSY: &str = "BUSY";

/// The limits of one connection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) max_in_flight: usize,
    pub(crate) ping_interval: Duration,
}

/// A message a call sends out; `last` for its reply.
struct Outgoing {
    call: u64,
    text: String,
    last: bool,
}

/// A call in flight.
struct Call {
    /// The `reqId` as JSON text, to find the call a cancel names.
    req_key: Option<String>,
    abort: AbortHandle,
}

/// Why the loop ended: the close frame to send, if any.
enum End {
    /// The peer closed or the transport failed: nothing to send.
    Gone,
    /// Close with this code and reason.
    Close(u16, &'static str),
}

fn req_key(req_id: Option<&Value>) -> Option<String> {
    req_id.map(Value::to_string)
}

fn is_too_big(error: axum::Error) -> bool {
    use tokio_tungstenite::tungstenite::Error;
    error
        .into_inner()
        .downcast::<Error>()
        .is_ok_and(|e| matches!(*e, Error::Capacity(_)))
}

struct Connection<C> {
    handler: WsHandler<C>,
    caller: Arc<C>,
    limits: Limits,
    calls: HashMap<u64, Call>,
    tasks: JoinSet<()>,
    next_call: u64,
    out: mpsc::Sender<Outgoing>,
    /// Questions of this socket's calls waiting for answers.
    questions: Arc<WsQuestions>,
}

impl<C: Send + Sync + 'static> Connection<C> {
    /// What a text frame asks for: a reply to send now, or nothing (a call
    /// started, or a cancel of an unknown call).
    fn on_text(&mut self, text: &str) -> Option<WsReply> {
        match WsInbound::parse(text) {
            Err(reply) => Some(reply),
            Ok(WsInbound::Cancel { req_id }) => self.cancel(req_id),
            Ok(WsInbound::Answer { id, answer }) => self.questions.answer(&id, answer).err(),
            Ok(WsInbound::Request(request)) => self.start(request),
        }
    }

    fn cancel(&mut self, req_id: Value) -> Option<WsReply> {
        let key = req_key(Some(&req_id));
        let id = self
            .calls
            .iter()
            .find(|(_, call)| call.req_key == key)
            .map(|(id, _)| *id)?;
        let call = self.calls.remove(&id)?;
        // Its queued events and reply are dropped: it is no longer in `calls`.
        call.abort.abort();
        Some(WsReply::error(Some(req_id), ToolError::aborted()))
    }

    fn start(&mut self, request: WsRequest) -> Option<WsReply> {
        if self.calls.len() >= self.limits.max_in_flight {
            return Some(WsReply::error(
                request.req_id,
                ToolError::new(
                    ErrorCode::custom(BUSY),
                    format!(
                        "Too many calls in flight on this connection (the limit is {}); wait for a reply first",
                        self.limits.max_in_flight
                    ),
                ),
            ));
        }
        let id = self.next_call;
        self.next_call += 1;
        let req_key = req_key(request.req_id.as_ref());
        let handler = self.handler.clone();
        let caller = Arc::clone(&self.caller);
        let out = self.out.clone();
        let questions = Arc::clone(&self.questions);
        let abort = self.tasks.spawn(async move {
            let events = out.clone();
            let asks = out.clone();
            let reply = handler
                .handle_asking(
                    request,
                    &caller,
                    move |event| {
                        let _ = events.try_send(Outgoing {
                            call: id,
                            text: event.to_text(),
                            last: false,
                        });
                    },
                    &questions,
                    // A question that cannot be queued fails at once
                    // rather than waiting for an answer to nothing.
                    move |question| {
                        asks.try_send(Outgoing {
                            call: id,
                            text: question.to_text(),
                            last: false,
                        })
                        .is_ok()
                    },
                )
                .await;
            let _ = out
                .send(Outgoing {
                    call: id,
                    text: reply.to_text(),
                    last: true,
                })
                .await;
        });
        self.calls.insert(id, Call { req_key, abort });
        None
    }
}

/// Serves one socket until it closes, the keepalive gives up, or the
/// server shuts down.
pub(crate) async fn serve<C: Send + Sync + 'static>(
    socket: WebSocket,
    handler: WsHandler<C>,
    caller: C,
    mut broadcasts: broadcast::Receiver<Arc<str>>,
    limits: Limits,
    shutdown: CancellationToken,
    entry: Held<u64>,
) {
    let (mut sink, mut stream) = socket.split();
    let evicted = entry.evicted().clone();
    // Held while a call of this connection runs: then it is not idle.
    let mut busy: Option<Busy<u64>> = None;
    let (out, mut outgoing) = mpsc::channel(OUTGOING_CAPACITY);
    let mut connection = Connection {
        handler,
        caller: Arc::new(caller),
        limits,
        calls: HashMap::new(),
        tasks: JoinSet::new(),
        next_call: 0,
        out,
        questions: Arc::new(WsQuestions::new()),
    };
    let mut ping =
        tokio::time::interval_at(Instant::now() + limits.ping_interval, limits.ping_interval);
    let mut last_seen = Instant::now();
    let mut hub_open = true;

    let end = loop {
        let send = tokio::select! {
            _ = shutdown.cancelled() => break End::Close(GOING_AWAY, "server shutting down"),
            _ = evicted.cancelled() => break End::Close(
                TRY_AGAIN_LATER,
                "closed to make room: idle while the server was at its connection limit; reconnect",
            ),
            frame = stream.next() => {
                last_seen = Instant::now();
                if matches!(frame, Some(Ok(Message::Text(_)))) {
                    entry.touch();
                }
                match frame {
                    None => break End::Gone,
                    Some(Err(error)) => {
                        break if is_too_big(error) {
                            End::Close(MESSAGE_TOO_BIG, "message too big")
                        } else {
                            End::Gone
                        };
                    }
                    Some(Ok(Message::Text(text))) => connection.on_text(text.as_str()).map(|r| r.to_text()),
                    Some(Ok(Message::Binary(_))) => Some(
                        WsReply::invalid_request(None, "Binary frames are not supported; send JSON text frames").to_text(),
                    ),
                    // Pings are answered by the socket library; a close is echoed by it.
                    Some(Ok(Message::Close(_))) => break End::Gone,
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => None,
                }
            }
            Some(message) = outgoing.recv() => {
                // A cancelled call's messages are dropped.
                let live = if message.last {
                    connection.calls.remove(&message.call).is_some()
                } else {
                    connection.calls.contains_key(&message.call)
                };
                live.then_some(message.text)
            }
            broadcast = broadcasts.recv(), if hub_open => match broadcast {
                Ok(text) => Some(text.to_string()),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(target: "gonk_tools::adapters::ws", missed, "a slow WebSocket client missed broadcasts");
                    None
                }
                Err(broadcast::error::RecvError::Closed) => {
                    hub_open = false;
                    None
                }
            },
            _ = ping.tick() => {
                if last_seen.elapsed() > limits.ping_interval * 2 {
                    break End::Close(GOING_AWAY, "keepalive timeout");
                }
                if sink.send(Message::Ping(Default::default())).await.is_err() {
                    break End::Gone;
                }
                None
            }
        };
        // Reap finished call tasks.
        while connection.tasks.try_join_next().is_some() {}
        match (connection.calls.is_empty(), busy.is_some()) {
            (false, false) => busy = entry.busy(),
            (true, true) => busy = None,
            _ => {}
        }
        if let Some(text) = send {
            if sink
                .send(Message::Text(Utf8Bytes::from(text)))
                .await
                .is_err()
            {
                break End::Gone;
            }
        }
    };
    // Fail every question still waiting, then abort every call still in
    // flight: their handlers are dropped now.
    connection.questions.close();
    connection.tasks.abort_all();
    if let End::Close(code, reason) = end {
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        };
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(Message::Close(Some(frame)))).await;
    }
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.close()).await;
    drop(busy);
    drop(entry);
}
