//! What the client hears from the server between its answers: progress and
//! log notifications, routed to the call they belong to as the transport
//! receives them, and `notifications/tools/list_changed`, which makes the
//! client's knowledge of the tools stale.
#![allow(deprecated)] // rmcp marks logging (SEP-2577) deprecated; servers still send it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rmcp::model::{GetMeta, JsonRpcMessage, ProgressToken, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde_json::Value;
use tokio::sync::mpsc;

use super::super::server::notify::{from_mcp_level, PROGRESS_TOKEN_META_KEY};
use crate::event::ToolEvent;

/// Notifications for a token that is not registered yet are kept this many
/// at most (they can arrive before the call registers its token).
const EARLY_BUFFER: usize = 64;

pub(super) type CallSender = mpsc::UnboundedSender<ToolEvent>;

/// Shared by the transport (which fills it) and the client (which reads it).
pub(super) struct Inbox {
    calls: Mutex<Routes>,
    tools_changed: AtomicBool,
    /// How many `tools/list_changed` were heard, for watchers.
    tools_announced: tokio::sync::watch::Sender<u64>,
}

impl Default for Inbox {
    fn default() -> Self {
        Inbox {
            calls: Mutex::default(),
            tools_changed: AtomicBool::default(),
            tools_announced: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl Inbox {
    /// Sends a call's notifications (including any that came before) to
    /// `sender` until [`unregister`](Self::unregister).
    pub(super) fn register(&self, token: ProgressToken, sender: CallSender) {
        self.lock().register(token, sender);
    }

    pub(super) fn unregister(&self, token: &ProgressToken) {
        self.lock().calls.remove(token);
    }

    /// Whether the server announced a change of its tools since the last
    /// call (and forgets it).
    pub(super) fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::AcqRel)
    }

    /// A watch on the count of `tools/list_changed` announcements.
    pub(super) fn watch_tools_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.tools_announced.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn hear(&self, notification: &ServerNotification) {
        match notification {
            ServerNotification::ToolListChangedNotification(_) => {
                self.tools_changed.store(true, Ordering::Release);
                self.tools_announced.send_modify(|count| *count += 1);
            }
            _ => self.lock().route(notification),
        }
    }
}

#[derive(Default)]
struct Routes {
    calls: HashMap<ProgressToken, CallSender>,
    early: VecDeque<(ProgressToken, ToolEvent)>,
}

impl Routes {
    fn deliver(&mut self, token: ProgressToken, event: ToolEvent) {
        match self.calls.get(&token) {
            Some(sender) => {
                let _ = sender.send(event);
            }
            None => {
                if self.early.len() == EARLY_BUFFER {
                    self.early.pop_front();
                }
                self.early.push_back((token, event));
            }
        }
    }

    fn register(&mut self, token: ProgressToken, sender: CallSender) {
        let early = std::mem::take(&mut self.early);
        for (t, event) in early {
            if t == token {
                let _ = sender.send(event);
            } else {
                self.early.push_back((t, event));
            }
        }
        self.calls.insert(token, sender);
    }

    /// Routes a progress or log notification to its call, in the order the
    /// transport received it (before the response that follows it).
    fn route(&mut self, notification: &ServerNotification) {
        match notification {
            ServerNotification::ProgressNotification(n) => {
                let params = &n.params;
                let percent = match params.total {
                    Some(total) if total > 0.0 => Some(params.progress / total * 100.0),
                    _ => None,
                };
                self.deliver(
                    params.progress_token.clone(),
                    ToolEvent::Progress {
                        percent,
                        message: params.message.clone(),
                    },
                );
            }
            ServerNotification::LoggingMessageNotification(n) => {
                let params = &n.params;
                // rmcp moves a notification's `_meta` into its extensions.
                let token = notification
                    .get_meta()
                    .0
                     .0
                    .get(PROGRESS_TOKEN_META_KEY)
                    .or_else(|| {
                        params
                            .meta
                            .as_ref()
                            .and_then(|meta| meta.0 .0.get(PROGRESS_TOKEN_META_KEY))
                    })
                    .and_then(|token| serde_json::from_value::<ProgressToken>(token.clone()).ok());
                let (message, meta) = match &params.data {
                    Value::String(message) => (message.clone(), None),
                    Value::Object(object) if object.contains_key("message") => {
                        let message = match object.get("message") {
                            Some(Value::String(message)) => message.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        (message, object.get("meta").cloned())
                    }
                    other => (other.to_string(), None),
                };
                match token {
                    Some(token) => self.deliver(
                        token,
                        ToolEvent::Log {
                            level: from_mcp_level(&params.level),
                            message,
                            meta,
                        },
                    ),
                    None => tracing::info!(
                        target: "gonk_tools::mcp::client",
                        logger = params.logger.as_deref().unwrap_or(""),
                        "{message}"
                    ),
                }
            }
            _ => {}
        }
    }
}

/// A client transport that hands every notification to the [`Inbox`] as it
/// is received, so a call sees its progress and logs before its result.
pub(super) struct RoutingTransport<T> {
    pub(super) inner: T,
    pub(super) inbox: std::sync::Arc<Inbox>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for RoutingTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message {
            self.inbox.hear(&notification.notification);
        }
        Some(message)
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
