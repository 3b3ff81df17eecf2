//! Change events: every succeeded call a registry runs — whichever surface
//! made it (MCP, the command line, WebSocket, Pi, a model provider, a
//! background job, another tool's `ctx.invoke`) — reported to the
//! registry's listeners, the one source that the WebSocket broadcast reads
//! (and that change notifications on other surfaces can read).
//!
//! A listener is called on the calling task, just before the call's result
//! is handed to its caller, so it must not block: send the change to a
//! channel or a bus. A listener that panics is logged and the call keeps
//! its result. With no listener, a call pays one atomic load.

pub mod bus;
#[cfg(feature = "redis")]
mod redis_bus;

pub use bus::{
    BusMessage, ChangeBus, ChangeBusError, InMemoryChangeBus, SharedChange, SharedChanges,
};
#[cfg(feature = "redis")]
pub use redis_bus::RedisChangeBus;

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak};

use serde_json::Value;

use crate::definition::ToolDefinition;

/// A succeeded call, as its listeners see it: the tool (as registered)
/// and its result's data. Reads are reported too; [`is_write`](Self::is_write)
/// tells the calls that may have changed something.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ToolChange<'a> {
    /// The tool that ran.
    pub tool: &'a ToolDefinition,
    /// Its result's data.
    pub data: &'a Value,
}

impl ToolChange<'_> {
    /// Whether the tool may change something: its MCP `read_only`
    /// annotation is explicitly `false`, or it counts as a write tool
    /// ([`is_write_tool`](crate::definition::ToolMetadata::is_write_tool)).
    /// A tool annotated read-only never does.
    pub fn is_write(&self) -> bool {
        match self.tool.hints.mcp.annotations.read_only {
            Some(read_only) => !read_only,
            None => self.tool.is_write_tool(),
        }
    }
}

type Listener = dyn Fn(&ToolChange<'_>) + Send + Sync;

/// The listeners of a registry (shared by the registries derived from it).
#[derive(Default)]
pub(crate) struct ChangeListeners {
    /// How many are subscribed: the only thing a call reads when none is.
    count: AtomicUsize,
    next_id: AtomicU64,
    list: RwLock<Vec<(u64, Arc<Listener>)>>,
}

impl ChangeListeners {
    pub(crate) fn subscribe(self: &Arc<Self>, listener: Arc<Listener>) -> ChangeSubscription {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut list = self.list.write().unwrap_or_else(|p| p.into_inner());
        list.push((id, listener));
        self.count.store(list.len(), Ordering::Release);
        ChangeSubscription {
            listeners: Arc::downgrade(self),
            id,
        }
    }

    fn unsubscribe(&self, id: u64) {
        let mut list = self.list.write().unwrap_or_else(|p| p.into_inner());
        list.retain(|(listener, _)| *listener != id);
        self.count.store(list.len(), Ordering::Release);
    }

    /// Tells every listener about a succeeded call of `tool`.
    pub(crate) fn publish(&self, tool: &ToolDefinition, data: &Value) {
        if self.count.load(Ordering::Acquire) == 0 {
            return;
        }
        // Called outside the lock: a listener may subscribe or unsubscribe.
        let listeners: Vec<Arc<Listener>> = self
            .list
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(_, listener)| Arc::clone(listener))
            .collect();
        let change = ToolChange { tool, data };
        for listener in listeners {
            if std::panic::catch_unwind(AssertUnwindSafe(|| listener(&change))).is_err() {
                tracing::warn!(target: "gonk_tools::changes", tool = %tool.name, "a change listener panicked");
            }
        }
    }
}

/// A listener's subscription, from
/// [`ToolRegistry::on_change`](crate::ToolRegistry::on_change): dropping
/// it unsubscribes the listener.
#[must_use = "dropping the subscription unsubscribes the listener at once"]
pub struct ChangeSubscription {
    listeners: Weak<ChangeListeners>,
    id: u64,
}

impl std::fmt::Debug for ChangeSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeSubscription")
            .field("id", &self.id)
            .finish()
    }
}

impl Drop for ChangeSubscription {
    fn drop(&mut self) {
        if let Some(listeners) = self.listeners.upgrade() {
            listeners.unsubscribe(self.id);
        }
    }
}
