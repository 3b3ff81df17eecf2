//! Sharing change notifications between processes: replicas of one server
//! behind a load balancer. A change one replica makes — a resource updated,
//! the tool catalog or the resources and prompts changed — is published on
//! a [`ChangeBus`], and every other replica attached to it raises the same
//! change locally, so a `subscriptions/listen` stream (MCP 2026) or a 2025
//! session held by replica B hears about a write replica A ran.
//!
//! Delivery is best effort, as notifications are in MCP: a change published
//! while the bus cannot be reached, or while a replica is reconnecting to
//! it, is lost for the other replicas (this replica's own listeners always
//! hear it). A client that must not miss one re-reads when its stream
//! reconnects. Nothing on the call path waits for the bus.

use futures::stream::BoxStream;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

/// A change that crosses processes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SharedChange {
    /// The resource at `uri` changed (MCP's `notifications/resources/updated`).
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
    /// The tool catalog changed (`notifications/tools/list_changed`).
    ToolsChanged,
    /// Resources or prompts were registered or removed (their
    /// `list_changed` notifications).
    PrimitivesChanged,
}

/// One change on the bus, with the process it came from (a replica skips
/// its own).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusMessage {
    /// The publishing attachment's id ([`SharedChanges::origin`]).
    pub origin: String,
    /// What changed.
    pub change: SharedChange,
}

/// Carries [`BusMessage`]s between processes.
///
/// [`InMemoryChangeBus`] connects registries of one process (tests, or
/// several servers in one binary); `RedisChangeBus` (feature `redis`)
/// connects replicas through Redis pub/sub.
pub trait ChangeBus: Send + Sync + 'static {
    /// Sends `message` to every subscriber, without waiting: a bus that
    /// cannot send drops it (and says so in its log).
    fn publish(&self, message: BusMessage);

    /// Every message published from now on, this process's own included.
    /// The stream ends only when the bus is gone; a bus that loses its
    /// connection reconnects behind it.
    fn subscribe(&self) -> BoxStream<'static, BusMessage>;
}

/// A bus inside one process: a broadcast channel.
#[derive(Clone, Debug)]
pub struct InMemoryChangeBus {
    sender: broadcast::Sender<BusMessage>,
}

impl Default for InMemoryChangeBus {
    fn default() -> Self {
        InMemoryChangeBus {
            sender: broadcast::channel(256).0,
        }
    }
}

impl InMemoryChangeBus {
    /// A bus with no subscriber yet.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ChangeBus for InMemoryChangeBus {
    fn publish(&self, message: BusMessage) {
        // No subscriber is not an error.
        let _ = self.sender.send(message);
    }

    fn subscribe(&self) -> BoxStream<'static, BusMessage> {
        let receiver = self.sender.subscribe();
        futures::stream::unfold(receiver, |mut receiver| async move {
            loop {
                match receiver.recv().await {
                    Ok(message) => return Some((message, receiver)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }
}

/// Why a registry could not be attached to a bus.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChangeBusError(pub(crate) String);

/// A registry's attachment to a [`ChangeBus`], from
/// [`ToolRegistry::share_changes`](crate::ToolRegistry::share_changes): while it is alive the registry
/// publishes its changes and raises the other processes'. Dropping it
/// detaches the registry.
#[must_use = "dropping the attachment detaches the registry from the bus at once"]
pub struct SharedChanges {
    origin: String,
    task: tokio::task::JoinHandle<()>,
    /// Detaches the registry from the bus (it stops publishing).
    detach: Option<Detach>,
}

/// What detaches a registry from its bus, given the attachment's origin.
type Detach = Box<dyn FnOnce(&str) + Send + Sync>;

impl std::fmt::Debug for SharedChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedChanges")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl SharedChanges {
    /// The attachment `origin` of the registry whose receiving task is
    /// `task`; `detach` runs once, when it is dropped.
    pub(crate) fn new(
        origin: String,
        task: tokio::task::JoinHandle<()>,
        detach: impl FnOnce(&str) + Send + Sync + 'static,
    ) -> Self {
        SharedChanges {
            origin,
            task,
            detach: Some(Box::new(detach)),
        }
    }

    /// This attachment's id on the bus: the `origin` of what it publishes.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

impl Drop for SharedChanges {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(detach) = self.detach.take() {
            detach(&self.origin);
        }
    }
}
