//! [`RedisRateLimiter`]: budgets shared by every process on one Redis — a
//! GCRA in one Lua script, so a call is counted in all its budgets or in
//! none, atomically, whichever process takes it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

use super::local::LocalRateLimiter;
use super::{AcquireFuture, Acquired, BackendError, Budget, RateLimitBackend};

/// GCRA over every budget of a call (KEYS), with Redis's own clock so
/// replicas whose clocks differ still agree. ARGV holds, per key, the
/// interval (one call's share) and the period, in microseconds. A key holds
/// the budget's theoretical arrival time (TAT) and expires when the budget
/// is full again. Answers `{index, wait_us}` of the first budget used up
/// (nothing written), or `{-1, 0}` once every TAT is advanced.
const GCRA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * i - 1])
  local period = tonumber(ARGV[2 * i])
  local stored = redis.call('GET', key)
  local tat = now
  if stored then
    tat = math.max(tonumber(stored), now)
  end
  local next_tat = tat + interval
  local allow_at = next_tat - period
  if allow_at > now then
    return {i - 1, allow_at - now}
  end
  tats[i] = next_tat
end
for i, key in ipairs(KEYS) do
  local ttl_ms = math.ceil((tats[i] - now) / 1000) + 1
  redis.call('SET', key, string.format('%d', tats[i]), 'PX', ttl_ms)
end
return {-1, 0}
";

/// How long a process stops asking an unreachable Redis after a failure:
/// calls meanwhile get the [`RedisUnavailable`] behaviour at once instead
/// of each waiting for a connection attempt.
const COOL_DOWN: Duration = Duration::from_secs(1);

/// The most one check may take (connecting included) before Redis counts
/// as unreachable for this call.
const CHECK_TIMEOUT: Duration = Duration::from_millis(500);

/// What a [`RedisRateLimiter`] does while Redis cannot be reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedisUnavailable {
    /// Count in this process instead (a [`LocalRateLimiter`]), so calls
    /// keep working and each process still enforces the whole budget on
    /// its own: N replicas allow at most N times the budget until Redis is
    /// back. The default.
    #[default]
    CountLocally,
    /// Refuse every call with `RATE_LIMITED` ("the rate-limit store is
    /// unreachable", retry after 1s) until Redis is back.
    Refuse,
}

/// Counts budgets in Redis, so every process that points at the same
/// Redis and key prefix enforces one budget together (replicas behind a
/// load balancer). One GCRA Lua script per call, atomic over all the call's
/// budgets (a refused call is counted nowhere), timed by Redis's clock.
///
/// It connects on the first call (so a server starts while Redis is still
/// coming up) and reconnects by itself. While Redis cannot be reached
/// (no answer within 500 ms), calls get the [`RedisUnavailable`]
/// behaviour — by default a local count — and Redis is tried again a
/// second later. A single Redis (or a primary): keys are not hash-tagged
/// for Redis Cluster.
pub struct RedisRateLimiter {
    client: redis::Client,
    connection: OnceCell<ConnectionManager>,
    prefix: String,
    script: redis::Script,
    unavailable: RedisUnavailable,
    fallback: LocalRateLimiter,
    /// Until when Redis is not asked (after a failure).
    resting_until: Mutex<Option<Instant>>,
    /// Whether the last check failed (logged once per outage).
    degraded: AtomicBool,
}

impl std::fmt::Debug for RedisRateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimiter")
            .field("prefix", &self.prefix)
            .field("unavailable", &self.unavailable)
            .finish_non_exhaustive()
    }
}

impl RedisRateLimiter {
    /// A limiter on the Redis at `url` (`redis://HOST:PORT[/DB]`), its keys
    /// under `prefix` (`PREFIX:rl:principal:alice`, …). Only the URL is
    /// checked here; the connection is made on the first call.
    pub fn new(url: &str, prefix: impl Into<String>) -> Result<Self, redis::RedisError> {
        Ok(RedisRateLimiter {
            client: redis::Client::open(url)?,
            connection: OnceCell::new(),
            prefix: prefix.into(),
            script: redis::Script::new(GCRA),
            unavailable: RedisUnavailable::default(),
            fallback: LocalRateLimiter::new(),
            resting_until: Mutex::new(None),
            degraded: AtomicBool::new(false),
        })
    }

    /// What to do while Redis cannot be reached (default: count locally).
    pub fn when_unavailable(mut self, behaviour: RedisUnavailable) -> Self {
        self.unavailable = behaviour;
        self
    }

    /// The Redis key of one budget.
    fn key(&self, budget: &Budget<'_>) -> String {
        format!(
            "{}:rl:{}:{}",
            self.prefix,
            budget.scope.as_str(),
            budget.subject
        )
    }

    async fn connection(&self) -> Result<ConnectionManager, redis::RedisError> {
        self.connection
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CHECK_TIMEOUT))
                    .set_response_timeout(Some(CHECK_TIMEOUT))
                    .set_number_of_retries(1);
                ConnectionManager::new_lazy_with_config(self.client.clone(), config)
            })
            .await
            .cloned()
    }

    /// One run of the script over `budgets`.
    async fn ask_redis(&self, budgets: &[Budget<'_>]) -> Result<Acquired, String> {
        let mut connection = self.connection().await.map_err(|e| e.to_string())?;
        let mut invocation = self.script.prepare_invoke();
        for budget in budgets {
            invocation.key(self.key(budget));
            invocation
                .arg(micros(budget.rate.interval()).max(1))
                .arg(micros(budget.rate.period()));
        }
        let answer = tokio::time::timeout(
            CHECK_TIMEOUT,
            invocation.invoke_async::<(i64, i64)>(&mut connection),
        )
        .await
        .map_err(|_| format!("no answer within {CHECK_TIMEOUT:?}"))?
        .map_err(|e| e.to_string())?;
        Ok(match answer {
            (index, wait) if index >= 0 => Acquired::Refused {
                budget: usize::try_from(index).unwrap_or(0),
                retry_after: Duration::from_micros(u64::try_from(wait).unwrap_or(0)),
            },
            _ => Acquired::Granted,
        })
    }

    fn resting(&self) -> bool {
        let resting = self.resting_until.lock().unwrap_or_else(|p| p.into_inner());
        resting.is_some_and(|until| Instant::now() < until)
    }

    async fn acquire_shared(&self, budgets: &[Budget<'_>]) -> Result<Acquired, BackendError> {
        let failure = if self.resting() {
            None
        } else {
            match self.ask_redis(budgets).await {
                Ok(acquired) => {
                    if self.degraded.swap(false, Ordering::Relaxed) {
                        tracing::info!(target: "gonk_tools::rate_limit", "Redis is reachable again; rate limits are shared again");
                    }
                    return Ok(acquired);
                }
                Err(error) => {
                    *self.resting_until.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(Instant::now() + COOL_DOWN);
                    Some(error)
                }
            }
        };
        if let Some(error) = failure {
            if !self.degraded.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    target: "gonk_tools::rate_limit",
                    %error,
                    behaviour = ?self.unavailable,
                    "Redis cannot be reached for rate limits",
                );
            }
        }
        match self.unavailable {
            RedisUnavailable::CountLocally => Ok(self.fallback.acquire_now(budgets)),
            RedisUnavailable::Refuse => Err(BackendError(
                "the rate-limit store (Redis) cannot be reached".to_owned(),
            )),
        }
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

impl RateLimitBackend for RedisRateLimiter {
    fn acquire<'a>(&'a self, budgets: &'a [Budget<'a>]) -> AcquireFuture<'a> {
        Box::pin(self.acquire_shared(budgets))
    }
}
