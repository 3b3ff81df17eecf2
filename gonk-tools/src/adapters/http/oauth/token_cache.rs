//! Verified tokens remembered for a while, so a client that sends the same
//! token with every request pays for one signature check (or one
//! introspection), not one per request. Keyed by a SHA-256 of the audience
//! and the token — the token itself is never stored —, bounded in size,
//! each entry gone at the deadline its verifier gives (never later than
//! the token's `exp`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// The entries a verifier keeps unless told otherwise.
pub(crate) const DEFAULT_CAPACITY: usize = 10_000;

/// A token's place in the cache: SHA-256 over the audience's length, the
/// audience and the token (a token verified for one resource is not
/// verified for another).
pub(crate) type CacheKey = [u8; 32];

pub(crate) fn cache_key(token: &str, audience: &str) -> CacheKey {
    let mut hash = Sha256::new();
    hash.update((audience.len() as u64).to_le_bytes());
    hash.update(audience.as_bytes());
    hash.update(token.as_bytes());
    hash.finalize().into()
}

struct Entry<T> {
    value: T,
    /// Unix seconds; the entry serves while `now < expires_at`.
    expires_at: u64,
}

/// At most `capacity` verified results of type `T`, each until its
/// deadline.
pub(crate) struct TokenCache<T> {
    entries: Mutex<HashMap<CacheKey, Entry<T>>>,
    capacity: usize,
    hits: AtomicU64,
}

impl<T: Clone> TokenCache<T> {
    /// A cache of at most `capacity` entries (0: nothing is kept).
    pub(crate) fn new(capacity: usize) -> Self {
        TokenCache {
            entries: Mutex::new(HashMap::new()),
            capacity,
            hits: AtomicU64::new(0),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Entry<T>>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value under `key` if its deadline is after `now` (unix
    /// seconds) and it still `holds` (its signing key is still the
    /// issuer's); an entry that fails either is dropped.
    pub(crate) fn get(&self, key: &CacheKey, now: u64, holds: impl Fn(&T) -> bool) -> Option<T> {
        let mut entries = self.entries();
        let entry = entries.get(key)?;
        if now < entry.expires_at && holds(&entry.value) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Some(entry.value.clone());
        }
        entries.remove(key);
        None
    }

    /// Keeps `value` under `key` until `expires_at` (unix seconds). When
    /// full, expired entries go first, then arbitrary ones: the bound
    /// holds whatever the traffic.
    pub(crate) fn insert(&self, key: CacheKey, value: T, expires_at: u64, now: u64) {
        if self.capacity == 0 || expires_at <= now {
            return;
        }
        let mut entries = self.entries();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, entry| now < entry.expires_at);
            while entries.len() >= self.capacity {
                let Some(victim) = entries.keys().next().copied() else {
                    break;
                };
                entries.remove(&victim);
            }
        }
        entries.insert(key, Entry { value, expires_at });
    }

    /// How many entries are kept (expired ones included until they are
    /// next looked at or pushed out).
    pub(crate) fn len(&self) -> usize {
        self.entries().len()
    }

    /// How many look-ups were answered from the cache.
    pub(crate) fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_serves_until_its_deadline_and_not_at_it() {
        let cache = TokenCache::new(10);
        let key = cache_key("token", "https://notes.example/mcp");
        cache.insert(key, "alice", 1_000, 900);
        assert_eq!(cache.get(&key, 999, |_| true), Some("alice"));
        assert_eq!(
            cache.get(&key, 1_000, |_| true),
            None,
            "gone at the deadline"
        );
        assert_eq!(cache.len(), 0, "and dropped");
        assert_eq!(cache.hits(), 1);
    }

    #[test]
    fn an_entry_that_no_longer_holds_is_dropped() {
        let cache = TokenCache::new(10);
        let key = cache_key("token", "a");
        cache.insert(key, "alice", 1_000, 0);
        assert_eq!(cache.get(&key, 1, |_| false), None);
        assert_eq!(
            cache.get(&key, 1, |_| true),
            None,
            "dropped, not kept aside"
        );
        assert_eq!(cache.hits(), 0);
    }

    #[test]
    fn the_audience_is_part_of_the_key() {
        let cache = TokenCache::new(10);
        cache.insert(cache_key("token", "https://a.example"), 1, 1_000, 0);
        assert_eq!(
            cache.get(&cache_key("token", "https://b.example"), 1, |_| true),
            None
        );
        // A boundary between audience and token cannot be moved.
        assert_ne!(cache_key("ab", "c"), cache_key("b", "ca"));
    }

    #[test]
    fn the_size_stays_bounded_and_expired_entries_go_first() {
        let cache = TokenCache::new(3);
        cache.insert(cache_key("old", "a"), 0, 10, 0);
        cache.insert(cache_key("t1", "a"), 1, 1_000, 0);
        cache.insert(cache_key("t2", "a"), 2, 1_000, 0);
        cache.insert(cache_key("t3", "a"), 3, 1_000, 20);
        assert_eq!(cache.len(), 3);
        assert_eq!(
            cache.get(&cache_key("t1", "a"), 20, |_| true),
            Some(1),
            "the expired one went"
        );
        for n in 0..100 {
            cache.insert(cache_key(&format!("flood-{n}"), "a"), n, 1_000, 20);
            assert!(cache.len() <= 3);
        }
    }

    #[test]
    fn nothing_past_its_deadline_or_in_a_zero_cache_is_kept() {
        let cache = TokenCache::new(3);
        cache.insert(cache_key("expired", "a"), 1, 10, 10);
        assert_eq!(cache.len(), 0);
        let off = TokenCache::new(0);
        off.insert(cache_key("t", "a"), 1, 1_000, 0);
        assert_eq!(off.get(&cache_key("t", "a"), 1, |_| true), None);
    }
}
