//! [`LocalRateLimiter`]: budgets counted in this process, on governor's
//! GCRA.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use super::{AcquireFuture, Acquired, Budget, Rate, RateLimitBackend};

/// How many calls pass between two sweeps of counters that are full again
/// (so a stream of one-off principals does not grow the maps for ever).
const SWEEP_EVERY: u64 = 4096;

/// Counts budgets in this process's memory (governor's keyed GCRA). Each
/// process has its own counts: behind a load balancer, N processes allow N
/// times the budget — share one with
/// [`RedisRateLimiter`](super::RedisRateLimiter) instead.
///
/// Budgets are checked in order (principal, tool, global); governor has no
/// look-ahead, so a call refused by a later budget has used its room in the
/// earlier ones.
pub struct LocalRateLimiter {
    /// One keyed limiter per rate, keyed by budget scope and subject.
    limiters: Mutex<HashMap<Rate, Arc<DefaultKeyedRateLimiter<String>>>>,
    clock: DefaultClock,
    calls: AtomicU64,
}

impl Default for LocalRateLimiter {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LocalRateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRateLimiter").finish_non_exhaustive()
    }
}

impl LocalRateLimiter {
    /// A limiter with no counts yet.
    pub fn new() -> Self {
        LocalRateLimiter {
            limiters: Mutex::new(HashMap::new()),
            clock: DefaultClock::default(),
            calls: AtomicU64::new(0),
        }
    }

    fn limiter(&self, rate: Rate) -> Arc<DefaultKeyedRateLimiter<String>> {
        let mut limiters = self.limiters.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(limiters.entry(rate).or_insert_with(|| {
            let quota = Quota::with_period(rate.interval())
                .expect("a rate's interval is never zero")
                .allow_burst(rate.calls());
            Arc::new(DefaultKeyedRateLimiter::dashmap_with_clock(
                quota,
                self.clock.clone(),
            ))
        }))
    }

    /// Drops the counters that are full again (they hold nothing a fresh
    /// one would not).
    fn sweep(&self) {
        let limiters: Vec<_> = self
            .limiters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for limiter in limiters {
            limiter.retain_recent();
        }
    }

    /// The synchronous check [`acquire`](RateLimitBackend::acquire) makes.
    pub(crate) fn acquire_now(&self, budgets: &[Budget<'_>]) -> Acquired {
        if self.calls.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.sweep();
        }
        for (index, budget) in budgets.iter().enumerate() {
            let key = format!("{}:{}", budget.scope.as_str(), budget.subject);
            if let Err(not_until) = self.limiter(budget.rate).check_key(&key) {
                return Acquired::Refused {
                    budget: index,
                    retry_after: not_until.wait_time_from(self.clock.now()),
                };
            }
        }
        Acquired::Granted
    }
}

impl RateLimitBackend for LocalRateLimiter {
    fn acquire<'a>(&'a self, budgets: &'a [Budget<'a>]) -> AcquireFuture<'a> {
        let acquired = self.acquire_now(budgets);
        Box::pin(std::future::ready(Ok(acquired)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate_limit::BudgetScope;

    fn budget<'a>(scope: BudgetScope, subject: &'a str, rate: &str) -> Budget<'a> {
        Budget {
            scope,
            subject,
            rate: rate.parse().unwrap(),
        }
    }

    #[test]
    fn a_budget_allows_its_calls_then_refuses_with_a_wait() {
        let limiter = LocalRateLimiter::new();
        let alice = [budget(BudgetScope::Principal, "alice", "3/1m")];
        for _ in 0..3 {
            assert_eq!(limiter.acquire_now(&alice), Acquired::Granted);
        }
        match limiter.acquire_now(&alice) {
            Acquired::Refused {
                budget,
                retry_after,
            } => {
                assert_eq!(budget, 0);
                // One call comes back every 20s.
                assert!(
                    retry_after > std::time::Duration::from_secs(19)
                        && retry_after <= std::time::Duration::from_secs(20),
                    "{retry_after:?}"
                );
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        let bob = [budget(BudgetScope::Principal, "bob", "3/1m")];
        assert_eq!(
            limiter.acquire_now(&bob),
            Acquired::Granted,
            "another principal has its own budget"
        );
    }

    #[test]
    fn the_first_used_up_budget_is_the_one_named() {
        let limiter = LocalRateLimiter::new();
        let call = |who| {
            [
                budget(BudgetScope::Principal, who, "10/1m"),
                budget(BudgetScope::Global, "", "2/1m"),
            ]
        };
        assert_eq!(limiter.acquire_now(&call("a")), Acquired::Granted);
        assert_eq!(limiter.acquire_now(&call("b")), Acquired::Granted);
        assert!(matches!(
            limiter.acquire_now(&call("c")),
            Acquired::Refused { budget: 1, .. }
        ));
    }
}
