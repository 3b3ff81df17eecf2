//! Rate limits: per-principal, per-tool and global call budgets, checked
//! by dispatch as a gate (`docs/contract.md#rate-limits`, and
//! `docs/rate-limits.md` for the backends and deployment).
//!
//! A [`RateLimits`] policy names the budgets — each a [`Rate`], "N calls
//! per period" — and the [`RateLimitBackend`] that keeps their counters:
//! [`LocalRateLimiter`] (feature `rate-limit`, in this process, on
//! governor's GCRA) or [`RedisRateLimiter`] (feature `redis`: one budget
//! shared by every process on one Redis). Install it with
//! `ToolRegistryBuilder::rate_limits`.
//!
//! ```
//! # #[cfg(feature = "rate-limit")] {
//! use std::sync::Arc;
//! use gonk_tools::prelude::*;
//! use gonk_tools::rate_limit::{LocalRateLimiter, RateLimits};
//!
//! # #[derive(Deserialize, JsonSchema)] struct Ping {}
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let limits = RateLimits::new(Arc::new(LocalRateLimiter::new()))
//!     .per_principal("2/1m".parse().unwrap());
//! let registry = ToolRegistry::builder().rate_limits(limits).build();
//! registry.register(
//!     ToolDefinition::builder("ping")
//!         .description("Answer pong.")
//!         .handler(|_: Ping, _| async { Ok::<_, ToolError>("pong") })
//!         .build(),
//! ).unwrap();
//! let call = || collect_tool_outcome(registry.invoke("ping", json!({}), ToolContext::new()), |_| {});
//! assert!(call().await.is_ok());
//! assert!(call().await.is_ok());
//! let refused = call().await.unwrap_err();
//! assert_eq!(refused.code, ErrorCode::RateLimited);
//! assert!(refused.retry_after().is_some());
//! # }
//! # main(); }
//! ```
//!
//! # What counts
//!
//! Root calls only: a tool's composed `ctx.invoke` calls are part of the
//! call that was counted, and so is the run of a detached job (its launch
//! was counted; the runner marks the job's context with
//! [`ToolContext::with_rate_limit_charged`](crate::ToolContext::with_rate_limit_charged)).
//! Unauthenticated calls share the principal [`ANONYMOUS`].

#[cfg(feature = "rate-limit")]
mod local;
#[cfg(feature = "redis")]
mod shared;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::error::ToolError;

#[cfg(feature = "rate-limit")]
pub use self::local::LocalRateLimiter;
#[cfg(feature = "redis")]
pub use self::shared::{RedisRateLimiter, RedisUnavailable};

/// The principal of an unauthenticated call: all such calls share one
/// per-principal budget.
pub const ANONYMOUS: &str = "anonymous";

/// A budget's size: `calls` per `period`, as a GCRA (a token bucket) — up
/// to `calls` at once, then one every `period / calls`.
///
/// Written `N/PERIOD`: `5/1m`, `100/s`, `10/30s`, `1000/1h` (a period is a
/// [humantime](https://docs.rs/humantime) duration; a bare unit means one
/// of it).
///
/// ```
/// use std::time::Duration;
/// use gonk_tools::rate_limit::Rate;
///
/// let rate: Rate = "5/1m".parse().unwrap();
/// assert_eq!(rate.calls().get(), 5);
/// assert_eq!(rate.period(), Duration::from_secs(60));
/// assert_eq!("100/s".parse::<Rate>().unwrap().period(), Duration::from_secs(1));
/// assert!("5".parse::<Rate>().is_err());
/// assert!("0/1m".parse::<Rate>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rate {
    calls: NonZeroU32,
    period: Duration,
}

impl Rate {
    /// `calls` per `period`; `None` for a zero period.
    pub fn new(calls: NonZeroU32, period: Duration) -> Option<Rate> {
        (!period.is_zero()).then_some(Rate { calls, period })
    }

    /// How many calls fit in one period.
    pub fn calls(&self) -> NonZeroU32 {
        self.calls
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The time one call takes back from the budget: `period / calls`
    /// (at least a nanosecond).
    pub fn interval(&self) -> Duration {
        (self.period / self.calls.get()).max(Duration::from_nanos(1))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}",
            self.calls,
            humantime::format_duration(self.period)
        )
    }
}

/// Why a `N/PERIOD` rate did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid rate {text:?}: {reason}; write N/PERIOD with N > 0, e.g. 5/1m, 100/s, 10/30s")]
pub struct RateParseError {
    text: String,
    reason: String,
}

impl FromStr for Rate {
    type Err = RateParseError;

    fn from_str(text: &str) -> Result<Rate, RateParseError> {
        let error = |reason: &str| RateParseError {
            text: text.to_owned(),
            reason: reason.to_owned(),
        };
        let (calls, period) = text
            .trim()
            .split_once('/')
            .ok_or_else(|| error("no `/` between the number of calls and the period"))?;
        let calls: u32 = calls
            .trim()
            .parse()
            .map_err(|_| error("the number of calls is not a whole number"))?;
        let calls = NonZeroU32::new(calls).ok_or_else(|| error("the number of calls is 0"))?;
        let period = period.trim();
        // A bare unit (`s`, `m`, `h`) is one of it.
        let spelled = if period.starts_with(|c: char| c.is_ascii_digit()) {
            Cow::Borrowed(period)
        } else {
            Cow::Owned(format!("1{period}"))
        };
        let period = humantime::parse_duration(&spelled)
            .map_err(|e| error(&format!("the period is not a duration ({e})")))?;
        Rate::new(calls, period).ok_or_else(|| error("the period is 0"))
    }
}

/// Which budget a [`Budget`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BudgetScope {
    /// One principal's calls, of any tool.
    Principal,
    /// Every call of one tool, from anyone.
    Tool,
    /// Every call the registry runs.
    Global,
}

impl BudgetScope {
    /// The scope's wire name (`details.budget` of a `RATE_LIMITED` error).
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetScope::Principal => "principal",
            BudgetScope::Tool => "tool",
            BudgetScope::Global => "global",
        }
    }
}

/// One budget a call must fit in: its scope, whose it is (the principal,
/// the tool; empty for the global one) and its rate. A backend keys its
/// counter by scope and subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget<'a> {
    /// Which budget.
    pub scope: BudgetScope,
    /// Whose: the principal id, the tool name, or `""` (global).
    pub subject: &'a str,
    /// Its size.
    pub rate: Rate,
}

/// What a backend answers for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// Every budget had room; the call was counted in each.
    Granted,
    /// Budget number `budget` (an index into the list asked about) is used
    /// up; a retry after `retry_after` may pass.
    Refused {
        /// The index of the refusing budget.
        budget: usize,
        /// When it has room again.
        retry_after: Duration,
    },
}

/// A backend that could not decide (its store is unreachable). The gate
/// refuses the call (fails closed); [`RedisRateLimiter`] decides first
/// whether to fall back to a local count instead.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BackendError(pub String);

/// The future a [`RateLimitBackend`] answers with.
pub type AcquireFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Acquired, BackendError>> + Send + 'a>>;

/// Keeps the counters of the budgets: takes one call from every budget of
/// a call, or says which one is used up.
///
/// Budgets come narrowest first (principal, tool, global). A backend that
/// can take from all of them at once or from none does so
/// ([`RedisRateLimiter`]); one that cannot ([`LocalRateLimiter`]) checks
/// them in order, so a refused call may have used room in the budgets
/// before the refusing one — a caller over its own budget never reaches
/// the shared ones.
pub trait RateLimitBackend: Send + Sync + 'static {
    /// Counts one call against each of `budgets`.
    fn acquire<'a>(&'a self, budgets: &'a [Budget<'a>]) -> AcquireFuture<'a>;
}

/// The registry's rate-limit policy: which budgets a call must fit in, and
/// the backend that counts. See the [module docs](self).
#[derive(Clone)]
pub struct RateLimits {
    backend: Arc<dyn RateLimitBackend>,
    per_principal: Option<Rate>,
    per_tool: HashMap<String, Rate>,
    global: Option<Rate>,
}

impl fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimits")
            .field("per_principal", &self.per_principal)
            .field("per_tool", &self.per_tool)
            .field("global", &self.global)
            .finish_non_exhaustive()
    }
}

impl RateLimits {
    /// No budgets yet, counted by `backend`.
    pub fn new(backend: Arc<dyn RateLimitBackend>) -> Self {
        RateLimits {
            backend,
            per_principal: None,
            per_tool: HashMap::new(),
            global: None,
        }
    }

    /// Each principal (unauthenticated callers share [`ANONYMOUS`]) may
    /// make `rate` calls, of any tools.
    pub fn per_principal(mut self, rate: Rate) -> Self {
        self.per_principal = Some(rate);
        self
    }

    /// Tool `name` may be called `rate` times, by all callers together.
    pub fn per_tool(mut self, name: impl Into<String>, rate: Rate) -> Self {
        self.per_tool.insert(name.into(), rate);
        self
    }

    /// The registry runs at most `rate` calls, of any tools by anyone.
    pub fn global(mut self, rate: Rate) -> Self {
        self.global = Some(rate);
        self
    }

    /// The per-principal budget, if set.
    pub fn principal_rate(&self) -> Option<Rate> {
        self.per_principal
    }

    /// Tool `name`'s budget, if set.
    pub fn tool_rate(&self, name: &str) -> Option<Rate> {
        self.per_tool.get(name).copied()
    }

    /// The global budget, if set.
    pub fn global_rate(&self) -> Option<Rate> {
        self.global
    }

    /// The gate: counts a call of `tool` by `principal` against every
    /// budget that applies. `RATE_LIMITED` when one is used up (its
    /// details name it and say when to retry) or when the backend cannot
    /// decide (fail closed).
    pub async fn admit(&self, principal: &str, tool: &str) -> Result<(), ToolError> {
        let mut budgets: Vec<Budget<'_>> = Vec::with_capacity(3);
        if let Some(rate) = self.per_principal {
            budgets.push(Budget {
                scope: BudgetScope::Principal,
                subject: principal,
                rate,
            });
        }
        if let Some(rate) = self.per_tool.get(tool) {
            budgets.push(Budget {
                scope: BudgetScope::Tool,
                subject: tool,
                rate: *rate,
            });
        }
        if let Some(rate) = self.global {
            budgets.push(Budget {
                scope: BudgetScope::Global,
                subject: "",
                rate,
            });
        }
        if budgets.is_empty() {
            return Ok(());
        }
        match self.backend.acquire(&budgets).await {
            Ok(Acquired::Granted) => Ok(()),
            Ok(Acquired::Refused {
                budget,
                retry_after,
            }) => {
                let budget = budgets.get(budget).unwrap_or(&budgets[0]);
                Err(refused(budget, retry_after))
            }
            Err(error) => {
                tracing::warn!(target: "gonk_tools::rate_limit", tool, %error, "rate-limit backend failed; the call is refused");
                Err(ToolError::rate_limited(
                    "Rate limit could not be checked (the rate-limit store is unreachable); \
                     retry later",
                    UNAVAILABLE_RETRY,
                    Some(json!({ "budget": "unavailable" })),
                ))
            }
        }
    }
}

/// What a call refused because its backend could not decide is told to
/// wait.
const UNAVAILABLE_RETRY: Duration = Duration::from_secs(1);

/// The `RATE_LIMITED` error for a call refused by `budget`.
fn refused(budget: &Budget<'_>, retry_after: Duration) -> ToolError {
    let whose = match budget.scope {
        BudgetScope::Principal => format!("for {}", budget.subject),
        BudgetScope::Tool => format!("for tool {}", budget.subject),
        BudgetScope::Global => "for this server".to_owned(),
    };
    // Whole seconds up, as HTTP's Retry-After says it.
    let wait = Duration::from_secs(retry_after.as_millis().div_ceil(1000).max(1) as u64);
    let message = format!(
        "Rate limit reached {whose}: {} calls per {}; retry in {}",
        budget.rate.calls,
        humantime::format_duration(budget.rate.period),
        humantime::format_duration(wait),
    );
    let mut details = json!({
        "budget": budget.scope.as_str(),
        "limit": budget.rate.calls.get(),
        "periodMs": u64::try_from(budget.rate.period.as_millis()).unwrap_or(u64::MAX),
    });
    if budget.scope == BudgetScope::Tool {
        details["tool"] = json!(budget.subject);
    }
    ToolError::rate_limited(message, retry_after, Some(details))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_units_and_refuse_nonsense() {
        let rate: Rate = "10/30s".parse().unwrap();
        assert_eq!(rate.calls().get(), 10);
        assert_eq!(rate.period(), Duration::from_secs(30));
        assert_eq!(rate.interval(), Duration::from_secs(3));
        assert_eq!(
            "5/m".parse::<Rate>().unwrap().period(),
            Duration::from_secs(60)
        );
        assert_eq!(
            " 1000 / 1h ".parse::<Rate>().unwrap().period(),
            Duration::from_secs(3600)
        );
        for bad in ["", "5", "x/1m", "-1/1m", "0/1m", "5/0s", "5/soon"] {
            let error = bad.parse::<Rate>().unwrap_err().to_string();
            assert!(error.contains("write N/PERIOD"), "{bad}: {error}");
        }
        assert_eq!(rate.to_string(), "10/30s");
    }

    #[test]
    fn a_refusal_names_its_budget_and_when_to_retry() {
        let budget = Budget {
            scope: BudgetScope::Tool,
            subject: "notes.export",
            rate: "5/1m".parse().unwrap(),
        };
        let error = refused(&budget, Duration::from_millis(11_200));
        assert_eq!(error.code, crate::ErrorCode::RateLimited);
        assert_eq!(
            error.message,
            "Rate limit reached for tool notes.export: 5 calls per 1m; retry in 12s"
        );
        let details = error.details.clone().unwrap();
        assert_eq!(details["retryAfterMs"], 11_200);
        assert_eq!(details["budget"], "tool");
        assert_eq!(details["tool"], "notes.export");
        assert_eq!(details["limit"], 5);
        assert_eq!(details["periodMs"], 60_000);
        assert_eq!(error.retry_after(), Some(Duration::from_millis(11_200)));
    }
}
