//! Where a non-streaming handler's progress and log reports go
//! ([`ToolContext::notify`](super::ToolContext::notify)).

use crate::event::ToolEvent;

/// A callback that receives progress and log events from a non-streaming
/// handler (see [`ToolContext::notify`](super::ToolContext::notify)).
pub type NotifyFn = dyn Fn(&ToolEvent) + Send + Sync;

/// Where a call's notifications go: a [`NotifyFn`] callback, or a
/// surface's own queue shared as it is, with no closure allocated around
/// it ([`ToolContext::with_notify_sink`](super::ToolContext::with_notify_sink)).
///
/// Called on the handler's task, as the handler reports: it must not
/// block (push to a queue or a channel).
pub trait NotifySink: Send + Sync {
    /// Receives one progress or log event.
    fn notify(&self, event: &ToolEvent);
}

impl<F: Fn(&ToolEvent) + Send + Sync> NotifySink for F {
    fn notify(&self, event: &ToolEvent) {
        self(event)
    }
}
