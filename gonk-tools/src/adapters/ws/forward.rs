//! A streaming request hears everything its call reports: events the
//! handler streams, and also lines written to `ctx.log()` and events sent
//! with `ctx.notify` / `ctx.progress` (by the tool or any tool it
//! composes). The host's own logger and notify callback keep receiving
//! them too.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use crate::context::{LogRecord, LogSink, ToolContext};
use crate::event::ToolEvent;

/// Forwards each log line as a `log` event, then to the host's sink.
struct ForwardLog {
    events: UnboundedSender<ToolEvent>,
    host: Option<Arc<dyn LogSink>>,
}

impl LogSink for ForwardLog {
    fn log(&self, record: &LogRecord<'_>) {
        let _ = self.events.send(ToolEvent::Log {
            level: record.level,
            message: record.message.to_owned(),
            meta: record.meta.cloned(),
        });
        if let Some(host) = &self.host {
            host.log(record);
        }
    }
}

/// `ctx` with its logger and notify callback also sending to `events`.
pub(crate) fn forwarding(ctx: ToolContext, events: UnboundedSender<ToolEvent>) -> ToolContext {
    let host = ctx.log_sink().cloned();
    let notify_events = events.clone();
    ctx.with_logger(ForwardLog { events, host })
        .also_notify(move |event: &ToolEvent| {
            let _ = notify_events.send(event.clone());
        })
}
