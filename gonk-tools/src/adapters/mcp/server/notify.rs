//! Progress and logging: a call's `progress` and `log` events (streamed,
//! sent with `ctx.notify`, or written to the ctx logger) as
//! `notifications/progress` and `notifications/message`.
#![allow(deprecated)] // rmcp marks logging as deprecated by SEP-2577; 2025-era clients use it.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    LoggingLevel, LoggingMessageNotification, LoggingMessageNotificationParam, MetaObject,
    NotificationMetaObject, ProgressNotification, ProgressNotificationParam, ProgressToken,
    ServerJsonRpcMessage, ServerNotification,
};
use rmcp::service::{Peer, ServiceError};
use rmcp::RoleServer;
use serde_json::{json, Map, Value};
use tokio::sync::Notify;

use crate::context::{LogRecord, LogSink, NotifySink, TracingLog};
use crate::event::{LogLevel, ToolEvent};

/// `_meta` key of a log notification naming the progress token of the call
/// that logged, so a client can attribute the line to its request.
pub(crate) const PROGRESS_TOKEN_META_KEY: &str = "gonk-tools/progressToken";

/// The severity rank of an MCP level (debug = 0 … emergency = 7).
pub(crate) fn mcp_rank(level: &LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Our level as an MCP level.
pub(crate) fn to_mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

/// An MCP level as ours (notice → info; critical and above → error).
pub(crate) fn from_mcp_level(level: &LoggingLevel) -> LogLevel {
    match mcp_rank(level) {
        0 => LogLevel::Debug,
        1 | 2 => LogLevel::Info,
        3 => LogLevel::Warn,
        _ => LogLevel::Error,
    }
}

/// The minimum level of one session (`logging/setLevel`).
#[derive(Debug)]
pub(crate) struct LevelFilter(AtomicU8);

impl LevelFilter {
    pub(crate) fn new(level: LogLevel) -> Self {
        LevelFilter(AtomicU8::new(mcp_rank(&to_mcp_level(level))))
    }

    /// A filter at `level`, or one that lets nothing through (`None`: a
    /// stateless-era request that asked for no logs).
    pub(crate) fn at(level: Option<&LoggingLevel>) -> Self {
        LevelFilter(AtomicU8::new(level.map_or(u8::MAX, mcp_rank)))
    }

    /// The one filter that lets nothing through, shared by every
    /// stateless-era call that asked for no logs (it is never `set`).
    pub(crate) fn silent() -> Arc<Self> {
        static SILENT: std::sync::OnceLock<Arc<LevelFilter>> = std::sync::OnceLock::new();
        Arc::clone(SILENT.get_or_init(|| Arc::new(LevelFilter::at(None))))
    }

    /// Whether it lets nothing through. A session's filter never is: any
    /// level a client sets lets something through.
    pub(crate) fn is_silent(&self) -> bool {
        self.0.load(Ordering::Relaxed) == u8::MAX
    }

    pub(crate) fn set(&self, level: &LoggingLevel) {
        self.0.store(mcp_rank(level), Ordering::Relaxed);
    }

    pub(crate) fn allows(&self, level: LogLevel) -> bool {
        mcp_rank(&to_mcp_level(level)) >= self.0.load(Ordering::Relaxed)
    }
}

/// The ctx logger of an MCP call none of whose lines can reach the client:
/// `tracing` only, one shared sink for every such call.
pub(crate) fn tracing_log() -> Arc<dyn LogSink> {
    static SINK: std::sync::OnceLock<Arc<dyn LogSink>> = std::sync::OnceLock::new();
    Arc::clone(SINK.get_or_init(|| Arc::new(TracingLog)))
}

/// An event bound for the client, with the tool that produced it.
pub(crate) struct Outbound {
    pub(crate) tool: Option<String>,
    pub(crate) event: ToolEvent,
}

/// One call's queue of notifications sent from the tool (its logger and
/// `ctx.notify`), read by the call's relay. Unbounded and in order, like
/// an unbounded channel, but made without allocating until something is
/// queued: most calls queue nothing.
#[derive(Default)]
pub(crate) struct OutboundQueue {
    items: Mutex<VecDeque<Outbound>>,
    /// How many items are queued, written under the lock: the relay reads
    /// it before every poll of the call, and an empty queue (the usual
    /// case) is then one load instead of a lock.
    queued: AtomicUsize,
    ready: Notify,
}

thread_local! {
    /// The queue of the last call on this thread to end with it empty and
    /// unshared, for the next call to use.
    static SPARE: Cell<Option<Arc<OutboundQueue>>> = const { Cell::new(None) };
}

/// A spare whose buffer grew past this many items is let go, not kept.
const SPARE_CAPACITY: usize = 64;

impl OutboundQueue {
    /// An empty queue for one call: the one the last call on this thread
    /// left, else a new one. Every call of a 2025 session has a queue (its
    /// level may let log lines through), and few queue anything:
    /// allocating and freeing the queue cost more than the rest of its
    /// life.
    pub(crate) fn for_call() -> Arc<Self> {
        SPARE
            .try_with(Cell::take)
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Leaves a call's queue for the next call on this thread, when
    /// nothing else holds it (the tool's context is gone, and no job kept
    /// it) and it is empty.
    pub(crate) fn recycle(mut queue: Arc<Self>) {
        let Some(spare) = Arc::get_mut(&mut queue) else {
            return;
        };
        let Ok(items) = spare.items.get_mut() else {
            return;
        };
        if !items.is_empty() || items.capacity() > SPARE_CAPACITY {
            return;
        }
        // A fresh `Notify`: no permit stored by this call's sends is left
        // for the next call's relay.
        spare.ready = Notify::new();
        let _ = SPARE.try_with(|slot| slot.set(Some(queue)));
    }

    pub(crate) fn send(&self, out: Outbound) {
        let mut items = self.items.lock().unwrap_or_else(|p| p.into_inner());
        items.push_back(out);
        self.queued.store(items.len(), Ordering::Release);
        drop(items);
        // Stores a permit when nobody waits, so no wake-up is lost.
        self.ready.notify_one();
    }

    pub(crate) fn try_recv(&self) -> Option<Outbound> {
        // An item queued before this load (on this thread, or before the
        // permit `recv` waits on) is seen; an empty queue takes no lock.
        if self.queued.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut items = self.items.lock().unwrap_or_else(|p| p.into_inner());
        let out = items.pop_front();
        self.queued.store(items.len(), Ordering::Release);
        out
    }

    /// The next item, waiting for one. Cancel-safe: an item is taken only
    /// when this returns it.
    pub(crate) async fn recv(&self) -> Outbound {
        loop {
            if let Some(out) = self.try_recv() {
                return out;
            }
            self.ready.notified().await;
        }
    }
}

/// The ctx logger of an MCP call: every line goes to `tracing` and, as a
/// log event, to the call's notification queue.
/// The call's queue is its logger too: one shared allocation for both.
impl LogSink for OutboundQueue {
    fn log(&self, record: &LogRecord<'_>) {
        TracingLog.log(record);
        self.send(Outbound {
            tool: record.tool.map(str::to_owned),
            event: ToolEvent::Log {
                level: record.level,
                message: record.message.to_owned(),
                meta: record.meta.cloned(),
            },
        });
    }
}

/// The call's queue takes what the tool sends with `ctx.notify` too
/// (progress and log events; anything else is not a notification).
impl NotifySink for OutboundQueue {
    fn notify(&self, event: &ToolEvent) {
        if matches!(event, ToolEvent::Progress { .. } | ToolEvent::Log { .. }) {
            self.send(Outbound {
                tool: None,
                event: event.clone(),
            });
        }
    }
}

/// The answer stream of an HTTP request its handler runs in
/// (`direct::serve_stateless`, `direct::serve_in_session`): what the call
/// sends goes straight into the response, before its answer. Put in the
/// request's extensions. Bounded, as rmcp's sink is: a call that streams
/// faster than its client reads waits for it.
#[derive(Clone, Debug)]
pub(crate) struct AnswerStream {
    pub(crate) sender: tokio::sync::mpsc::Sender<ServerJsonRpcMessage>,
    /// A 2025 session's call: only its progress goes into the answer; its
    /// logs go through the session (to its `GET` stream), as when rmcp's
    /// worker routes them.
    pub(crate) session: bool,
}

/// How many notifications an answer holds before the call waits (rmcp's
/// sink holds as many).
pub(crate) const ANSWER_STREAM_CAPACITY: usize = 64;

/// Where a call's notifications go.
pub(crate) enum Delivery {
    /// Through the session's serve loop.
    Peer(Peer<RoleServer>),
    /// Into the answer of the request the call runs in.
    Answer(AnswerStream),
    /// A 2025 session's call run in its request: progress into the answer,
    /// the rest through the session.
    Session(AnswerStream, Peer<RoleServer>),
}

impl Delivery {
    /// Where a call's notifications go: `answer` when it runs in its
    /// request, else the session's `peer`.
    pub(crate) fn of(answer: Option<&AnswerStream>, peer: &Peer<RoleServer>) -> Delivery {
        match answer {
            Some(answer) if answer.session => Delivery::Session(answer.clone(), peer.clone()),
            Some(answer) => Delivery::Answer(answer.clone()),
            None => Delivery::Peer(peer.clone()),
        }
    }

    async fn send(&self, notification: ServerNotification) -> Result<(), ServiceError> {
        let answer = match self {
            Delivery::Peer(peer) => return peer.send_notification(notification).await,
            Delivery::Session(answer, peer) => {
                if !matches!(notification, ServerNotification::ProgressNotification(_)) {
                    return peer.send_notification(notification).await;
                }
                answer
            }
            Delivery::Answer(answer) => answer,
        };
        answer
            .sender
            .send(ServerJsonRpcMessage::notification(notification))
            .await
            .map_err(|_| ServiceError::TransportClosed)
    }
}

/// Sends one call's progress and log notifications to its client.
pub(crate) struct Notifier {
    pub(crate) to: Delivery,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) level: Arc<LevelFilter>,
    pub(crate) tool: Arc<str>,
    last_progress: f64,
}

impl Notifier {
    pub(crate) fn new(
        to: Delivery,
        progress_token: Option<ProgressToken>,
        level: Arc<LevelFilter>,
        tool: Arc<str>,
    ) -> Self {
        Notifier {
            to,
            progress_token,
            level,
            tool,
            last_progress: 0.0,
        }
    }

    /// Forwards a `progress` or `log` event; other events are ignored.
    pub(crate) async fn send(&mut self, tool: Option<&str>, event: &ToolEvent) {
        match event {
            ToolEvent::Progress { percent, message } => self.progress(*percent, message).await,
            ToolEvent::Log {
                level,
                message,
                meta,
            } => self.log(tool, *level, message, meta.as_ref()).await,
            _ => {}
        }
    }

    async fn progress(&mut self, percent: Option<f64>, message: &Option<String>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        // Progress must never go backwards; a percentage is out of 100.
        let progress = match percent {
            Some(p) if p.is_finite() => p.clamp(0.0, 100.0).max(self.last_progress),
            _ => self.last_progress,
        };
        self.last_progress = progress;
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        if percent.is_some() {
            param.total = Some(100.0);
        }
        param.message = message.clone();
        let notification =
            ServerNotification::ProgressNotification(ProgressNotification::new(param));
        if let Err(error) = self.to.send(notification).await {
            tracing::debug!(target: "gonk_tools::mcp", %error, "progress notification not sent");
        }
    }

    async fn log(&self, tool: Option<&str>, level: LogLevel, message: &str, meta: Option<&Value>) {
        if !self.level.allows(level) {
            return;
        }
        // Always an object, so a client parses every log line the same way.
        let data = match meta {
            None => json!({ "message": message }),
            Some(meta) => json!({ "message": message, "meta": meta }),
        };
        let mut param = LoggingMessageNotificationParam::new(to_mcp_level(level), data)
            .with_logger(tool.unwrap_or(&*self.tool));
        if let Some(token) = &self.progress_token {
            let mut meta = Map::new();
            meta.insert(
                PROGRESS_TOKEN_META_KEY.to_owned(),
                serde_json::to_value(token).unwrap_or(Value::Null),
            );
            param.meta = Some(NotificationMetaObject(MetaObject(meta)));
        }
        let notification =
            ServerNotification::LoggingMessageNotification(LoggingMessageNotification::new(param));
        if let Err(error) = self.to.send(notification).await {
            tracing::debug!(target: "gonk_tools::mcp", %error, "log notification not sent");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> Outbound {
        Outbound {
            tool: None,
            event: ToolEvent::progress(50.0, None),
        }
    }

    #[test]
    fn an_empty_unshared_queue_is_the_next_calls_queue() {
        let first = OutboundQueue::for_call();
        let address = Arc::as_ptr(&first);
        first.send(line());
        assert!(first.try_recv().is_some());
        OutboundQueue::recycle(first);
        let next = OutboundQueue::for_call();
        assert_eq!(Arc::as_ptr(&next), address, "the spare is reused");
        assert!(next.try_recv().is_none(), "and is empty");
        // Taken: the slot is empty until the next recycle.
        assert_ne!(Arc::as_ptr(&OutboundQueue::for_call()), address);
    }

    #[test]
    fn a_queue_still_held_or_holding_items_is_not_reused() {
        let held = OutboundQueue::for_call();
        let kept = Arc::clone(&held);
        OutboundQueue::recycle(held);
        assert!(!has_spare(), "a queue a context still holds is not kept");
        drop(kept);

        let full = OutboundQueue::for_call();
        full.send(line());
        OutboundQueue::recycle(full);
        assert!(!has_spare(), "a queue with items is dropped, not kept");
    }

    fn has_spare() -> bool {
        SPARE.with(|slot| {
            let spare = slot.take();
            let some = spare.is_some();
            slot.set(spare);
            some
        })
    }
}
