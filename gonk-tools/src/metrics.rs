//! Metrics: one [`MetricRecord`] per invocation, to a [`MetricsSink`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;

/// How an invocation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricOutcome {
    /// A result and no error.
    Ok,
    /// An error event.
    Error,
    /// Cancelled, or the consumer dropped the stream before the end.
    Aborted,
}

/// One invocation's measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricRecord {
    /// The tool name as requested.
    pub tool: String,
    /// Wall time from invoke to the outcome. On the wire `durationMs`, in
    /// milliseconds (a number with a fraction).
    #[serde(rename = "durationMs", with = "milliseconds")]
    pub duration: Duration,
    /// How it ended.
    pub outcome: MetricOutcome,
    /// The error code, for `Error` and `Aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
}

/// `Duration` as a number of milliseconds.
mod milliseconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        duration: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(duration.as_nanos() as f64 / 1e6)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(deserializer)?;
        if !ms.is_finite() || ms < 0.0 {
            return Err(serde::de::Error::custom(format!(
                "durationMs must be a finite, non-negative number, not {ms}"
            )));
        }
        Ok(Duration::from_nanos((ms * 1e6).round() as u64))
    }
}

/// Receives metric records. Must be cheap: it runs on the dispatch path.
pub trait MetricsSink: Send + Sync {
    /// Records one invocation.
    fn record(&self, record: &MetricRecord);

    /// Whether this sink wants records. Asked once, when the registry is
    /// built: dispatch skips timing entirely for a sink that returns
    /// `false` (like [`NoopMetrics`]).
    fn enabled(&self) -> bool {
        true
    }
}

/// Discards records (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopMetrics;

impl MetricsSink for NoopMetrics {
    fn record(&self, _record: &MetricRecord) {}

    fn enabled(&self) -> bool {
        false
    }
}

/// Writes one line per record to stderr.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConsoleMetrics;

impl MetricsSink for ConsoleMetrics {
    fn record(&self, record: &MetricRecord) {
        let code = record
            .error_code
            .as_ref()
            .map(|c| format!(" code={c}"))
            .unwrap_or_default();
        eprintln!(
            "[gonk-tools] tool={} outcome={:?} duration_ms={:.3}{code}",
            record.tool,
            record.outcome,
            record.duration.as_secs_f64() * 1000.0
        );
    }
}

/// Keeps records in memory: for tests and dashboards.
#[derive(Debug, Default)]
pub struct InMemoryMetrics {
    records: Mutex<Vec<MetricRecord>>,
}

impl InMemoryMetrics {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the records so far, oldest first.
    pub fn snapshot(&self) -> Vec<MetricRecord> {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Forgets every record.
    pub fn clear(&self) {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

impl MetricsSink for InMemoryMetrics {
    fn record(&self, record: &MetricRecord) {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record.clone());
    }
}

impl<T: MetricsSink + ?Sized> MetricsSink for Arc<T> {
    fn record(&self, record: &MetricRecord) {
        (**self).record(record);
    }

    fn enabled(&self) -> bool {
        (**self).enabled()
    }
}

/// Sends every record to each of several sinks.
#[derive(Clone, Default)]
pub struct CompositeMetrics {
    sinks: Vec<Arc<dyn MetricsSink>>,
}

impl CompositeMetrics {
    /// No sinks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a sink.
    pub fn with(mut self, sink: Arc<dyn MetricsSink>) -> Self {
        self.sinks.push(sink);
        self
    }
}

impl MetricsSink for CompositeMetrics {
    fn record(&self, record: &MetricRecord) {
        for sink in &self.sinks {
            sink.record(record);
        }
    }

    fn enabled(&self) -> bool {
        self.sinks.iter().any(|s| s.enabled())
    }
}
