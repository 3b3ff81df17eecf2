//! What a host hook's failure becomes: an error (for the entry gate and the
//! context factory, an error reply; for the broadcast hooks, a warning).
//! A panicking hook is a failure like any other — it never unwinds out of
//! the handler.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;

/// The error a host hook returns: anything that converts into a boxed
/// error (`String`, `&str`, any `std::error::Error`).
pub type HookError = Box<dyn std::error::Error + Send + Sync>;

/// Why a hook did not answer.
pub(crate) struct HookFailure {
    /// The hook's own message, or that it panicked.
    pub(crate) message: String,
}

fn panicked(hook: &str, payload: &(dyn Any + Send)) -> HookFailure {
    let detail = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload");
    HookFailure {
        message: format!("The {hook} hook panicked: {detail}"),
    }
}

/// Runs a synchronous hook, turning an `Err` or a panic into a failure.
pub(crate) fn call<T>(
    hook: &str,
    run: impl FnOnce() -> Result<T, HookError>,
) -> Result<T, HookFailure> {
    match std::panic::catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(HookFailure {
            message: error.to_string(),
        }),
        Err(payload) => Err(panicked(hook, &*payload)),
    }
}

/// Awaits an asynchronous hook, turning an `Err` or a panic (while it is
/// built or polled) into a failure.
pub(crate) async fn call_async<T, F>(
    hook: &str,
    start: impl FnOnce() -> F,
) -> Result<T, HookFailure>
where
    F: Future<Output = Result<T, HookError>>,
{
    let future = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(future) => future,
        Err(payload) => return Err(panicked(hook, &*payload)),
    };
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(HookFailure {
            message: error.to_string(),
        }),
        Err(payload) => Err(panicked(hook, &*payload)),
    }
}
