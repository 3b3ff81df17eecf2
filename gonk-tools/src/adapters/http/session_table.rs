//! The table of what a surface keeps open for its clients under a cap —
//! MCP 2025 sessions, WebSocket connections, `subscriptions/listen`
//! streams — and the one rule for making room when it is full.
//!
//! Each entry belongs to a principal (the caller's security context key;
//! `None` for an unauthenticated or API-key-only caller, all one
//! principal), is *busy* while something of it runs (a call, an open
//! stream — the surface says which) and remembers when it was last used.
//! Opening one more:
//!
//! * once more than one principal holds entries (or asks for one), each
//!   principal gets a share of the cap (by default an eighth): a principal
//!   at its share makes room among its own entries only — its least
//!   recently used idle one is closed — or is refused when all of its own
//!   are busy; it never closes another principal's;
//! * at the cap, the least recently used idle entry is closed, taken first
//!   from the principals at or over their share, then from anyone;
//! * refused only when every candidate is busy.
//!
//! Closing is the surface's: the table hands back the evicted key and
//! cancels the entry's token (a surface that runs the entry in a task of
//! its own watches it).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

/// The share of the cap each principal gets by default, once there is
/// more than one: an eighth.
const DEFAULT_SHARE_DIVISOR: usize = 8;

/// A cap and the per-principal share of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SessionLimits {
    /// Entries open at once, across principals (at least 1).
    pub(crate) cap: usize,
    /// Entries one principal may hold once there is more than one
    /// principal; `None` for the default (an eighth of the cap, at least 1).
    pub(crate) per_principal: Option<usize>,
}

impl SessionLimits {
    /// A cap with the default share.
    pub(crate) fn new(cap: usize) -> Self {
        SessionLimits {
            cap: cap.max(1),
            per_principal: None,
        }
    }

    /// The share one principal may hold when others hold entries too.
    pub(crate) fn share(&self) -> usize {
        self.per_principal
            .unwrap_or(self.cap / DEFAULT_SHARE_DIVISOR)
            .clamp(1, self.cap)
    }
}

/// Why an entry could not be opened: every entry that could have made
/// room is busy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The table is at its cap and every entry is busy.
    Full { open: usize, cap: usize },
    /// The principal holds its whole share and every one of them is busy.
    ShareFull { held: usize, share: usize },
}

impl Refusal {
    /// What the refused client is told, naming `what` (e.g. "sessions").
    pub(crate) fn message(&self, what: &str) -> String {
        match self {
            Refusal::Full { open, cap } => format!(
                "Server busy: {open} {what} are open (the server's limit is {cap}) and every one \
                 is in use; close one or retry later"
            ),
            Refusal::ShareFull { held, share } => format!(
                "Server busy: you hold {held} {what} (each caller's share is {share}) and every \
                 one is in use; close one of yours or retry later"
            ),
        }
    }
}

struct Entry {
    principal: Option<String>,
    busy: usize,
    last_used: u64,
    evicted: CancellationToken,
}

struct State<K> {
    entries: HashMap<K, Entry>,
    held: HashMap<Option<String>, usize>,
    /// A logical clock: each use takes the next tick, so "least recently
    /// used" needs no wall clock.
    clock: u64,
}

impl<K: Hash + Eq> State<K> {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn remove(&mut self, key: &K) -> Option<Entry> {
        let entry = self.entries.remove(key)?;
        if let Some(count) = self.held.get_mut(&entry.principal) {
            *count -= 1;
            if *count == 0 {
                self.held.remove(&entry.principal);
            }
        }
        Some(entry)
    }
}

/// Open entries of one surface, under [`SessionLimits`]. Shared (`Arc`):
/// a [`Busy`] mark holds it.
pub(crate) struct SessionTable<K> {
    limits: SessionLimits,
    /// What the log lines call an entry ("session", "connection", …).
    noun: &'static str,
    state: Mutex<State<K>>,
}

impl<K> std::fmt::Debug for SessionTable<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTable")
            .field("limits", &self.limits)
            .field("noun", &self.noun)
            .finish_non_exhaustive()
    }
}

impl<K: Hash + Eq + Clone + std::fmt::Display> SessionTable<K> {
    /// An empty table; `noun` names an entry in log lines.
    pub(crate) fn new(limits: SessionLimits, noun: &'static str) -> Arc<Self> {
        Arc::new(SessionTable {
            limits,
            noun,
            state: Mutex::new(State {
                entries: HashMap::new(),
                held: HashMap::new(),
                clock: 0,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Entries open now.
    #[cfg(all(test, feature = "mcp"))]
    pub(crate) fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Makes room for one more entry of `principal`: closes (removes and
    /// cancels) the entry the rule picks, if one must go, and returns its key.
    /// The caller then [`insert`](Self::insert)s the new entry; a surface
    /// that may open two at once serialises the two steps, or uses
    /// [`open`](Self::open).
    #[cfg(feature = "mcp")]
    pub(crate) fn make_room(&self, principal: &Option<String>) -> Result<Option<K>, Refusal> {
        let mut state = self.lock();
        self.make_room_in(&mut state, principal)
    }

    fn make_room_in(
        &self,
        state: &mut State<K>,
        principal: &Option<String>,
    ) -> Result<Option<K>, Refusal> {
        let open = state.entries.len();
        let held = state.held.get(principal).copied().unwrap_or(0);
        let principals = state.held.len() + usize::from(held == 0);
        let share = self.limits.share();
        let shared = principals > 1;
        let victim = if shared && held >= share {
            // At its share: only one of its own may go.
            Some(
                lru_idle(state, |entry| &entry.principal == principal)
                    .ok_or(Refusal::ShareFull { held, share })?,
            )
        } else if open >= self.limits.cap {
            let over_share = |entry: &Entry| {
                !shared || state.held.get(&entry.principal).copied().unwrap_or(0) >= share
            };
            let chosen = lru_idle(state, over_share).or_else(|| lru_idle(state, |_| true));
            Some(chosen.ok_or(Refusal::Full {
                open,
                cap: self.limits.cap,
            })?)
        } else {
            None
        };
        let Some(key) = victim else {
            return Ok(None);
        };
        let entry = state.remove(&key).expect("the victim is in the table");
        entry.evicted.cancel();
        tracing::info!(
            target: "gonk_tools::adapters::http",
            evicted = %key,
            owner = entry.principal.as_deref().unwrap_or("-"),
            for_principal = principal.as_deref().unwrap_or("-"),
            open,
            cap = self.limits.cap,
            share,
            "closed the least recently used idle {} to make room for a new one",
            self.noun
        );
        Ok(Some(key))
    }

    /// Adds an entry (after [`make_room`](Self::make_room)); its token is
    /// cancelled if it is evicted later. A key already present is replaced.
    #[cfg(feature = "mcp")]
    pub(crate) fn insert(&self, key: K, principal: Option<String>) -> CancellationToken {
        let mut state = self.lock();
        Self::insert_in(&mut state, key, principal)
    }

    fn insert_in(state: &mut State<K>, key: K, principal: Option<String>) -> CancellationToken {
        state.remove(&key);
        let evicted = CancellationToken::new();
        let last_used = state.tick();
        *state.held.entry(principal.clone()).or_insert(0) += 1;
        state.entries.insert(
            key,
            Entry {
                principal,
                busy: 0,
                last_used,
                evicted: evicted.clone(),
            },
        );
        evicted
    }

    /// [`make_room`](Self::make_room) and [`insert`](Self::insert) as one
    /// step: the new entry's eviction token, and the entry it displaced.
    pub(crate) fn open(
        &self,
        key: K,
        principal: Option<String>,
    ) -> Result<(CancellationToken, Option<K>), Refusal> {
        let mut state = self.lock();
        let evicted = self.make_room_in(&mut state, &principal)?;
        Ok((Self::insert_in(&mut state, key, principal), evicted))
    }

    /// [`open`](Self::open), with the entry held by the returned value:
    /// it leaves the table when that is dropped (for an entry that lives
    /// as long as a task of the surface, e.g. a socket's loop).
    pub(crate) fn hold(
        self: &Arc<Self>,
        key: K,
        principal: Option<String>,
    ) -> Result<Held<K>, Refusal> {
        let (evicted, _) = self.open(key.clone(), principal)?;
        Ok(Held {
            table: Arc::clone(self),
            key,
            evicted,
        })
    }

    /// Forgets an entry that closed on its own (or by its client).
    pub(crate) fn remove(&self, key: &K) {
        self.lock().remove(key);
    }

    /// Keeps only the entries `alive` says are still open (a surface whose
    /// entries can also end without telling the table, e.g. rmcp's idle
    /// timeout).
    #[cfg(feature = "mcp")]
    pub(crate) fn retain(&self, mut alive: impl FnMut(&K) -> bool) {
        let mut state = self.lock();
        let gone: Vec<K> = state
            .entries
            .keys()
            .filter(|key| !alive(key))
            .cloned()
            .collect();
        for key in gone {
            state.remove(&key);
        }
    }

    /// Records a use of `key` now (a message in or out).
    pub(crate) fn touch(&self, key: &K) {
        let mut state = self.lock();
        let now = state.tick();
        if let Some(entry) = state.entries.get_mut(key) {
            entry.last_used = now;
        }
    }

    /// Marks `key` busy until the mark is dropped (then it counts as used
    /// at that moment); `None` when the table does not hold `key`.
    pub(crate) fn busy(self: &Arc<Self>, key: &K) -> Option<Busy<K>> {
        let mut state = self.lock();
        let now = state.tick();
        let entry = state.entries.get_mut(key)?;
        entry.busy += 1;
        entry.last_used = now;
        Some(Busy {
            table: Arc::clone(self),
            key: key.clone(),
        })
    }
}

/// An entry held open (see [`SessionTable::hold`]); dropping it removes
/// the entry.
pub(crate) struct Held<K: Hash + Eq + Clone + std::fmt::Display> {
    table: Arc<SessionTable<K>>,
    key: K,
    evicted: CancellationToken,
}

impl<K: Hash + Eq + Clone + std::fmt::Display> Held<K> {
    /// Fires when the entry is evicted to make room.
    pub(crate) fn evicted(&self) -> &CancellationToken {
        &self.evicted
    }

    /// Records a use now.
    pub(crate) fn touch(&self) {
        self.table.touch(&self.key);
    }

    /// Marks the entry busy until the mark is dropped.
    #[cfg(feature = "ws")]
    pub(crate) fn busy(&self) -> Option<Busy<K>> {
        self.table.busy(&self.key)
    }
}

impl<K: Hash + Eq + Clone + std::fmt::Display> std::fmt::Debug for Held<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held")
            .field("key", &self.key.to_string())
            .finish()
    }
}

impl<K: Hash + Eq + Clone + std::fmt::Display> Drop for Held<K> {
    fn drop(&mut self) {
        self.table.remove(&self.key);
    }
}

/// The least recently used idle entry among those `candidate` accepts.
fn lru_idle<K: Clone>(state: &State<K>, candidate: impl Fn(&Entry) -> bool) -> Option<K> {
    state
        .entries
        .iter()
        .filter(|(_, entry)| entry.busy == 0 && candidate(entry))
        .min_by_key(|(_, entry)| entry.last_used)
        .map(|(key, _)| key.clone())
}

/// An entry marked busy (see [`SessionTable::busy`]).
pub(crate) struct Busy<K: Hash + Eq> {
    table: Arc<SessionTable<K>>,
    key: K,
}

impl<K: Hash + Eq> std::fmt::Debug for Busy<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Busy").finish_non_exhaustive()
    }
}

impl<K: Hash + Eq> Drop for Busy<K> {
    fn drop(&mut self) {
        let mut state = self.table.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = state.tick();
        if let Some(entry) = state.entries.get_mut(&self.key) {
            entry.busy = entry.busy.saturating_sub(1);
            entry.last_used = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(name: &str) -> Option<String> {
        Some(name.to_owned())
    }

    #[test]
    #[cfg(feature = "mcp")] // make_room and insert are the MCP endpoint's
    fn at_the_cap_the_least_recently_used_idle_entry_goes() {
        let table = SessionTable::new(SessionLimits::new(3), "session");
        for key in 1..=3 {
            table.make_room(&None).unwrap();
            table.insert(key, None);
        }
        table.touch(&1);
        let _busy = table.busy(&2).unwrap();
        let evicted = table.make_room(&None).unwrap().expect("one goes");
        assert_eq!(evicted, 3, "2 is busy, 1 was used after 3");
        table.insert(4, None);
        assert_eq!(table.len(), 3);
    }

    #[test]
    #[cfg(feature = "mcp")] // make_room and insert are the MCP endpoint's
    fn refused_only_when_every_entry_is_busy() {
        let table = SessionTable::new(SessionLimits::new(2), "session");
        let (a, _) = table.open(1, None).unwrap();
        table.open(2, None).unwrap();
        let one = table.busy(&1).unwrap();
        let _two = table.busy(&2).unwrap();
        assert_eq!(
            table.make_room(&None).unwrap_err(),
            Refusal::Full { open: 2, cap: 2 }
        );
        drop(one);
        let evicted = table.make_room(&None).unwrap().unwrap();
        assert_eq!(evicted, 1);
        assert!(a.is_cancelled(), "the evicted entry's token fires");
    }

    #[test]
    fn a_principal_at_its_share_evicts_only_its_own() {
        let table = SessionTable::new(
            SessionLimits {
                cap: 8,
                per_principal: Some(2),
            },
            "session",
        );
        table.open(1, who("b")).unwrap();
        table.open(2, who("a")).unwrap();
        table.open(3, who("a")).unwrap();
        // `a` holds its share: its third goes at its own oldest, not b's.
        let (_, evicted) = table.open(4, who("a")).unwrap();
        assert_eq!(evicted.unwrap(), 2);
        let _three = table.busy(&3).unwrap();
        let _four = table.busy(&4).unwrap();
        assert_eq!(
            table.open(5, who("a")).unwrap_err(),
            Refusal::ShareFull { held: 2, share: 2 }
        );
        // `b` is under its share: it opens without closing anything.
        assert!(table.open(6, who("b")).unwrap().1.is_none());
    }

    #[test]
    fn one_principal_alone_may_use_the_whole_cap_until_another_comes() {
        let table = SessionTable::new(SessionLimits::new(16), "session");
        for key in 0..16 {
            assert!(table.open(key, who("a")).unwrap().1.is_none());
        }
        // A second principal: `a` is far over its share (2), so its
        // oldest idle entry makes room.
        let (_, evicted) = table.open(100, who("b")).unwrap();
        assert!(evicted.unwrap() < 16, "one of a's");
        let (_, evicted) = table.open(101, who("a")).unwrap();
        assert!(evicted.unwrap() < 16, "one of a's");
    }
}
