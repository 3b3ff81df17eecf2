//! `--otel`: the notes server's traces and metrics over OTLP, on when the
//! flag is given or `OTEL_EXPORTER_OTLP_ENDPOINT` is set (see
//! `gonk_tools::telemetry::otel` for the environment it reads).

use std::sync::Arc;

use gonk_tools::metrics::MetricsSink;
use gonk_tools::telemetry::otel::{self, OtelMetrics, OtelPipeline};

/// The id (and long name) of the global `--otel` flag.
pub const FLAG: &str = "otel";

/// The pipeline and the registry's metrics sink, when export is asked for
/// by `--otel` (`flagged`: the registry is built before the command line
/// is parsed, so the caller looks for the flag) or the environment.
pub fn start(flagged: bool) -> Option<(OtelPipeline, Arc<dyn MetricsSink>)> {
    if !flagged && !otel::enabled_by_env() {
        return None;
    }
    match otel::install("notes") {
        Ok(pipeline) => {
            let metrics: Arc<dyn MetricsSink> = Arc::new(OtelMetrics::global());
            Some((pipeline, metrics))
        }
        Err(error) => {
            // Telemetry is not worth refusing to serve for: say so, go on.
            eprintln!("notes: OpenTelemetry export is off: {error}");
            None
        }
    }
}

/// Flushes the last spans and points at exit.
pub fn stop(pipeline: OtelPipeline) {
    if let Err(error) = pipeline.shutdown() {
        eprintln!("notes: {error}");
    }
}
