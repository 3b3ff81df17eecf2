//! The server-wide count of running `tools/call`s: the cap that answers
//! "busy" past a limit, and the drain of a graceful shutdown (stop taking
//! calls, let the running ones finish within a grace period, then cancel
//! the rest — each still gets its terminal error).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::ErrorCode as JsonRpcCode;
use rmcp::ErrorData;
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The default cap on calls running at once, server-wide.
pub const DEFAULT_MAX_IN_FLIGHT_CALLS: usize = 256;

/// The JSON-RPC code of a call refused by the server (busy, shutting down):
/// the implementation-defined server-error range of JSON-RPC 2.0.
pub(crate) const SERVER_REFUSED: JsonRpcCode = JsonRpcCode(-32000);

/// How long a drain waits, after cancelling the calls still running, for
/// them to end (a handler that blocks its thread cannot be dropped).
const ABORT_BOUND: Duration = Duration::from_secs(5);

/// Resolves once `count` is zero; whoever brings it to zero wakes `woken`
/// (with `notify_waiters`).
pub(crate) async fn until_zero(count: &AtomicUsize, woken: &Notify) {
    loop {
        let notified = woken.notified();
        let mut notified = std::pin::pin!(notified);
        // Registered before the check: a release in between still wakes it.
        notified.as_mut().enable();
        if count.load(Ordering::SeqCst) == 0 {
            return;
        }
        notified.await;
    }
}

/// Running calls and the shutdown state of one server.
#[derive(Debug)]
pub(crate) struct InFlight {
    max: usize,
    running: AtomicUsize,
    /// Woken when the last running call ends during a drain (only then:
    /// a call's own admission and release touch nothing but the counter).
    idle: Notify,
    /// Set when the server stops taking calls.
    draining: AtomicBool,
    /// Set, then cancelled, when the calls still running must stop.
    aborted: AtomicBool,
    abort: CancellationToken,
}

/// One admitted call; dropping it ends the call's count.
#[derive(Debug)]
pub(crate) struct CallPermit<'a> {
    inflight: &'a InFlight,
}

impl Drop for CallPermit<'_> {
    fn drop(&mut self) {
        let inflight = self.inflight;
        // SeqCst, with `drain`'s store and its wait's load of the count:
        // either the drain sees this release, or this sees the drain.
        let was = inflight.running.fetch_sub(1, Ordering::SeqCst);
        if was == 1 && inflight.draining.load(Ordering::SeqCst) {
            inflight.idle.notify_waiters();
        }
    }
}

impl InFlight {
    pub(crate) fn new(max: usize) -> Self {
        InFlight {
            max: max.max(1),
            running: AtomicUsize::new(0),
            idle: Notify::new(),
            draining: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
            abort: CancellationToken::new(),
        }
    }

    /// Admits a call, or says why not (a JSON-RPC error for the client).
    ///
    /// Every call on every thread reads the shutdown state here and when
    /// it ends: a flag, one load, where a token's `is_cancelled` takes the
    /// token's lock (a lock shared by the whole server).
    pub(crate) fn admit(&self) -> Result<CallPermit<'_>, ErrorData> {
        if self.is_draining() {
            return Err(ErrorData::new(
                SERVER_REFUSED,
                "The server is shutting down and takes no new calls",
                Some(json!({ "code": "SHUTTING_DOWN" })),
            ));
        }
        let admitted = self
            .running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |running| {
                (running < self.max).then_some(running + 1)
            });
        if admitted.is_err() {
            return Err(ErrorData::new(
                SERVER_REFUSED,
                format!(
                    "Server busy: {} tool calls are already running (the server's limit); retry later",
                    self.max
                ),
                Some(json!({ "code": "BUSY", "limit": self.max })),
            ));
        }
        Ok(CallPermit { inflight: self })
    }

    /// How many calls are running.
    pub(crate) fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }

    /// Cancelled when running calls must stop (the grace period is over).
    pub(crate) fn abort_token(&self) -> &CancellationToken {
        &self.abort
    }

    /// Whether running calls must stop ([`abort_token`](Self::abort_token)
    /// is cancelled): a load, not the token's lock.
    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Whether a drain has begun.
    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Resolves once no call runs. Called only after `draining` is set,
    /// so the permit that ends the last call wakes it.
    async fn idle(&self) {
        until_zero(&self.running, &self.idle).await;
    }

    /// Stops taking calls, waits up to `grace` for the running ones, then
    /// cancels the rest and waits (bounded) for them to end.
    pub(crate) async fn drain(&self, grace: Duration) {
        self.draining.store(true, Ordering::SeqCst);
        if tokio::time::timeout(grace, self.idle()).await.is_ok() {
            return;
        }
        tracing::info!(
            target: "gonk_tools::mcp",
            running = self.running(),
            "shutdown grace period over; cancelling the calls still running"
        );
        self.aborted.store(true, Ordering::Release);
        self.abort.cancel();
        if tokio::time::timeout(ABORT_BOUND, self.idle())
            .await
            .is_err()
        {
            tracing::warn!(
                target: "gonk_tools::mcp",
                running = self.running(),
                "calls still running after cancellation (a handler blocks its thread)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_limit_a_call_is_refused_as_busy_until_one_ends() {
        let inflight = InFlight::new(2);
        let first = inflight.admit().unwrap();
        let _second = inflight.admit().unwrap();
        let refused = inflight.admit().unwrap_err();
        assert_eq!(refused.code, SERVER_REFUSED);
        assert_eq!(refused.data.as_ref().unwrap()["code"], "BUSY");
        assert!(
            refused.message.contains("Server busy"),
            "{}",
            refused.message
        );
        drop(first);
        assert_eq!(inflight.running(), 1);
        let _third = inflight.admit().unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_drain_refuses_new_calls_and_cancels_the_late_ones_after_the_grace() {
        let inflight = std::sync::Arc::new(InFlight::new(8));
        let running = std::sync::Arc::clone(&inflight);
        let call = tokio::spawn(async move {
            let _permit = running.admit().unwrap();
            running.abort_token().cancelled().await;
        });
        tokio::task::yield_now().await;
        assert_eq!(inflight.running(), 1);
        inflight.drain(Duration::from_secs(10)).await;
        assert!(inflight.abort_token().is_cancelled());
        assert!(inflight.is_aborted());
        call.await.unwrap();
        assert_eq!(inflight.running(), 0);
        let refused = inflight.admit().unwrap_err();
        assert_eq!(refused.data.unwrap()["code"], "SHUTTING_DOWN");
    }

    #[tokio::test(start_paused = true)]
    async fn a_drain_with_nothing_running_cancels_nothing() {
        let inflight = InFlight::new(8);
        inflight.drain(Duration::from_secs(10)).await;
        assert!(!inflight.abort_token().is_cancelled());
        assert!(!inflight.is_aborted());
    }
}
