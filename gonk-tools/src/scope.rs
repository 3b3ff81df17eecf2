//! The five-tier scope store: configuration and memory looked up from the
//! most specific tier (session) to the least (global).

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A scope tier, most specific first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeTier {
    /// This conversation.
    Session,
    /// The current directory.
    Directory,
    /// The current project.
    Project,
    /// The active persona.
    Persona,
    /// Everywhere.
    Global,
}

impl ScopeTier {
    /// Every tier, most specific first (the order `get` walks).
    pub const ALL: [ScopeTier; 5] = [
        ScopeTier::Session,
        ScopeTier::Directory,
        ScopeTier::Project,
        ScopeTier::Persona,
        ScopeTier::Global,
    ];
}

/// A store of JSON values keyed by tier and key. Adapters that support
/// scope bind one to the context; composed calls see the same store.
pub trait ScopeStore: Send + Sync {
    /// The value at exactly `tier`.
    fn get_at(&self, tier: ScopeTier, key: &str) -> Option<Value>;
    /// Sets the value at `tier`.
    fn set(&self, tier: ScopeTier, key: &str, value: Value);
    /// Removes the value at `tier`, returning it.
    fn remove(&self, tier: ScopeTier, key: &str) -> Option<Value>;
    /// The most specific value: walks session → directory → project →
    /// persona → global and returns the first hit.
    fn get(&self, key: &str) -> Option<Value> {
        ScopeTier::ALL
            .into_iter()
            .find_map(|tier| self.get_at(tier, key))
    }
}

/// An in-memory [`ScopeStore`].
#[derive(Debug, Default)]
pub struct InMemoryScopeStore {
    values: Mutex<HashMap<(ScopeTier, String), Value>>,
}

impl InMemoryScopeStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn values(&self) -> std::sync::MutexGuard<'_, HashMap<(ScopeTier, String), Value>> {
        self.values
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ScopeStore for InMemoryScopeStore {
    fn get_at(&self, tier: ScopeTier, key: &str) -> Option<Value> {
        self.values().get(&(tier, key.to_owned())).cloned()
    }

    fn set(&self, tier: ScopeTier, key: &str, value: Value) {
        self.values().insert((tier, key.to_owned()), value);
    }

    fn remove(&self, tier: ScopeTier, key: &str) -> Option<Value> {
        self.values().remove(&(tier, key.to_owned()))
    }
}
