//! Cancellation from the terminal: the first Ctrl-C (SIGINT) cancels the
//! running call's token — dispatch then drops the handler and reports
//! `ABORTED` (exit 130) — and a second one exits at once.

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::exit;

/// Listens for Ctrl-C while a call runs; dropping it stops listening.
pub(crate) struct InterruptGuard {
    task: Option<JoinHandle<()>>,
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Starts listening. The handler is registered before this returns, so a
/// Ctrl-C that arrives once the call has started is never lost. `notice`
/// runs after the first Ctrl-C (to tell the user a second one force-quits).
///
/// Needs a Tokio runtime with its I/O driver enabled. When the signal
/// cannot be registered, the call still runs, without Ctrl-C handling.
pub(crate) fn cancel_on_interrupt(
    token: CancellationToken,
    notice: impl Fn() + Send + 'static,
) -> InterruptGuard {
    let task = listen(token, notice);
    InterruptGuard { task }
}

#[cfg(unix)]
fn interrupts() -> std::io::Result<tokio::signal::unix::Signal> {
    use tokio::signal::unix::{signal, SignalKind};
    signal(SignalKind::interrupt())
}

#[cfg(windows)]
fn interrupts() -> std::io::Result<tokio::signal::windows::CtrlC> {
    tokio::signal::windows::ctrl_c()
}

#[cfg(any(unix, windows))]
fn listen(token: CancellationToken, notice: impl Fn() + Send + 'static) -> Option<JoinHandle<()>> {
    let mut interrupts = match interrupts() {
        Ok(stream) => stream,
        Err(error) => {
            tracing::warn!(target: "gonk_tools::cli", %error, "Ctrl-C cannot be handled; it will end the process");
            return None;
        }
    };
    Some(tokio::spawn(async move {
        if interrupts.recv().await.is_none() {
            return;
        }
        token.cancel();
        notice();
        if interrupts.recv().await.is_some() {
            std::process::exit(i32::from(exit::ABORTED));
        }
    }))
}

#[cfg(not(any(unix, windows)))]
fn listen(
    _token: CancellationToken,
    _notice: impl Fn() + Send + 'static,
) -> Option<JoinHandle<()>> {
    None
}
