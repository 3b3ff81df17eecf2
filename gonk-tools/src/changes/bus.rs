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

use std::sync::{Arc, Weak};

use futures::stream::BoxStream;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::registry::{RegistryInner, ToolRegistry};

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
pub struct ChangeBusError(String);

/// A registry's attachment to a [`ChangeBus`], from
/// [`ToolRegistry::share_changes`]: while it is alive the registry
/// publishes its changes and raises the other processes'. Dropping it
/// detaches the registry.
#[must_use = "dropping the attachment detaches the registry from the bus at once"]
pub struct SharedChanges {
    origin: String,
    primitives: Weak<crate::primitives::Primitives>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for SharedChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedChanges")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl SharedChanges {
    /// This attachment's id on the bus: the `origin` of what it publishes.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

impl Drop for SharedChanges {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(primitives) = self.primitives.upgrade() {
            primitives.detach_bus(&self.origin);
        }
    }
}

/// A fresh attachment id: the process id and a random part, so two
/// processes (or two attachments in one) never share one.
fn new_origin() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}-{nanos:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl ToolRegistry {
    /// Shares this registry's change notifications through `bus`: its
    /// resource updates, catalog changes and resource/prompt list changes
    /// are published, and those other processes publish are raised here as
    /// if they were local — so every surface that notifies its clients
    /// (MCP `subscriptions/listen`, 2025 sessions) hears the whole
    /// deployment's changes. Registries derived from this one share it.
    ///
    /// Needs a Tokio runtime (it spawns the receiving task). Keep the
    /// returned attachment alive as long as the server runs.
    pub fn share_changes(&self, bus: Arc<dyn ChangeBus>) -> Result<SharedChanges, ChangeBusError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            ChangeBusError(
                "share_changes needs a Tokio runtime: call it from inside one (e.g. in an async main)"
                    .to_owned(),
            )
        })?;
        let origin = new_origin();
        let primitives = Arc::clone(&self.inner.primitives);
        primitives.attach_bus(origin.clone(), Arc::clone(&bus));
        let mut messages = bus.subscribe();
        let registry: Weak<RegistryInner> = Arc::downgrade(&self.inner);
        let own = origin.clone();
        let task = runtime.spawn(async move {
            while let Some(message) = messages.next().await {
                if message.origin == own {
                    continue;
                }
                let Some(inner) = registry.upgrade() else {
                    return;
                };
                let registry = ToolRegistry { inner };
                match message.change {
                    SharedChange::ResourceUpdated { uri } => {
                        registry.primitives().raise_resource_updated(uri);
                    }
                    SharedChange::ToolsChanged => registry.raise_catalog_changed(),
                    SharedChange::PrimitivesChanged => registry.primitives().raise_list_changed(),
                }
            }
        });
        Ok(SharedChanges {
            origin,
            primitives: Arc::downgrade(&primitives),
            task,
        })
    }
}
