//! [`CallMetric`]: the one metric record of a call.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use crate::error::ErrorCode;
use crate::event::ToolEvent;
use crate::metrics::{MetricOutcome, MetricRecord, MetricsSink};

/// Records exactly one metric per call: the outcome the consumer is given,
/// recorded just before that last event is yielded — so a consumer that
/// stops reading once it has it leaves the right record — or `aborted`
/// when the stream is dropped before its outcome.
pub(super) struct CallMetric {
    /// `None`: no sink wants records (no clock read, no name kept either).
    sink: Option<Recorder>,
    recorded: bool,
    /// `false` for a call refused before it was anything to time.
    measured: bool,
    /// The call's span: the outcome is recorded on it too (nothing is when
    /// no subscriber wants it).
    span: tracing::Span,
}

/// Where a call's record goes, and what it says besides the outcome.
struct Recorder {
    sink: Arc<dyn MetricsSink>,
    start: Instant,
    tool: Arc<str>,
}

impl CallMetric {
    /// `tool` is asked only when a sink wants records.
    #[inline(always)]
    pub(super) fn start(
        sink: Option<&Arc<dyn MetricsSink>>,
        tool: impl FnOnce() -> Arc<str>,
        span: tracing::Span,
    ) -> Self {
        CallMetric {
            sink: sink.map(|sink| Recorder {
                sink: Arc::clone(sink),
                start: Instant::now(),
                tool: tool(),
            }),
            recorded: false,
            measured: true,
            span,
        }
    }

    /// Records `outcome` with a zero duration: a call refused before it
    /// started (not found, hidden, a cycle) took no time of its own, and
    /// its record is the same however long the look-up took.
    pub(super) fn unmeasured(&mut self, outcome: &ToolEvent) {
        self.measured = false;
        self.outcome(outcome);
    }

    /// The call's span.
    pub(super) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Records `outcome`, the call's last event, before it is yielded.
    pub(super) fn outcome(&mut self, outcome: &ToolEvent) {
        match outcome {
            ToolEvent::Error { code, .. } if *code == ErrorCode::Aborted => {
                self.record(MetricOutcome::Aborted, Some(code))
            }
            ToolEvent::Error { code, .. } => self.record(MetricOutcome::Error, Some(code)),
            _ => self.record(MetricOutcome::Ok, None),
        }
    }

    fn record(&mut self, outcome: MetricOutcome, error_code: Option<&ErrorCode>) {
        self.recorded = true;
        crate::telemetry::record_outcome(&self.span, outcome, error_code);
        let Some(Recorder { sink, start, tool }) = &self.sink else {
            return;
        };
        let record = MetricRecord {
            tool: tool.to_string(),
            duration: if self.measured {
                start.elapsed()
            } else {
                std::time::Duration::ZERO
            },
            outcome,
            error_code: error_code.cloned(),
        };
        // A sink that panics loses its record, never the call: the outcome
        // is already decided (a write may have happened) and stands.
        if std::panic::catch_unwind(AssertUnwindSafe(|| sink.record(&record))).is_err() {
            tracing::error!(target: "gonk_tools::dispatch", tool = %tool, "metrics sink panicked; record dropped");
        }
    }
}

impl Drop for CallMetric {
    fn drop(&mut self) {
        if !self.recorded {
            // Dropped before its outcome: the consumer gave up on the call.
            self.record(MetricOutcome::Aborted, Some(&ErrorCode::Aborted));
        }
    }
}
