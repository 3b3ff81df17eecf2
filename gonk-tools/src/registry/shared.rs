//! [`ToolRegistry::share_changes`]: a registry attached to a
//! [`ChangeBus`], so replicas of one server hear each other's changes.

use std::sync::{Arc, Weak};

use futures::StreamExt;

use super::{RegistryInner, ToolRegistry};
use crate::changes::{ChangeBus, ChangeBusError, SharedChange, SharedChanges};

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
        let primitives = Arc::downgrade(&primitives);
        Ok(SharedChanges::new(origin, task, move |origin| {
            if let Some(primitives) = primitives.upgrade() {
                primitives.detach_bus(origin);
            }
        }))
    }
}
