//! OpenTelemetry export (feature `otel`): the OTLP pipeline that sends the
//! `tracing` spans and the metrics to a collector, configured by the
//! standard `OTEL_*` environment variables; [`OtelMetrics`], the
//! [`MetricsSink`] that turns the registry's metric records into the
//! tool-call histogram; and the W3C propagation [`set_parent`](super::set_parent)
//! and [`TraceContext::current`] use.
//!
//! ```no_run
//! use std::sync::Arc;
//! use gonk_tools::prelude::*;
//! use gonk_tools::telemetry::otel::{self, OtelMetrics};
//!
//! // OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318, OTEL_SERVICE_NAME, …
//! let pipeline = otel::install("my-tools").expect("the OTLP pipeline");
//! let registry = ToolRegistry::builder()
//!     .metrics(Arc::new(OtelMetrics::global()))
//!     .build();
//! // … serve …
//! pipeline.shutdown().expect("the last spans and points flushed");
//! ```
//!
//! # Environment
//!
//! * `OTEL_EXPORTER_OTLP_ENDPOINT` (and the per-signal `…_TRACES_ENDPOINT`,
//!   `…_METRICS_ENDPOINT`), `OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`: read
//!   by the exporter.
//! * `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (the default) or `grpc`
//!   (with the `otel-grpc` feature).
//! * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`: the resource;
//!   without a service name the one given to [`install`] is used.
//! * `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, `OTEL_METRIC_EXPORT_INTERVAL`:
//!   read by the SDK.
//! * `OTEL_SDK_DISABLED=true`: [`enabled_by_env`] says no.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::metrics::{Histogram, Meter, MeterProvider as _};
use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use tracing::Span;
use tracing_opentelemetry::{OpenTelemetryLayer, OpenTelemetrySpanExt};
use tracing_subscriber::layer::SubscriberExt;

use super::attributes as attr;
use super::TraceContext;
use crate::metrics::{MetricRecord, MetricsSink};

/// The instrumentation scope of every span and instrument.
pub const SCOPE: &str = "gonk-tools";

/// Why the pipeline could not be built or shut down.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// An exporter could not be built (a bad endpoint, …).
    #[error("the OTLP {signal} exporter could not be built: {reason}")]
    Exporter {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// The exporter's message.
        reason: String,
    },
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` names a protocol this build does not speak.
    #[error("OTEL_EXPORTER_OTLP_PROTOCOL={0} is not supported by this build (use http/protobuf{grpc})", grpc = if cfg!(feature = "otel-grpc") { " or grpc" } else { "; grpc needs the otel-grpc feature" })]
    Protocol(String),
    /// A global `tracing` subscriber was already installed: add
    /// [`OtelPipeline::layer`] to it instead of calling [`install`].
    #[error("a global tracing subscriber is already set; add OtelPipeline::layer() to it instead")]
    SubscriberAlreadySet,
    /// Flushing or shutting down a provider failed.
    #[error("the OpenTelemetry pipeline did not shut down cleanly: {0}")]
    Shutdown(String),
}

/// Whether the environment asks for export: an OTLP endpoint is set
/// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
/// and the SDK is not disabled (`OTEL_SDK_DISABLED=true`).
pub fn enabled_by_env() -> bool {
    let set = |key: &str| std::env::var(key).is_ok_and(|v| !v.trim().is_empty());
    let disabled =
        std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
    !disabled && (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
}

/// The OTLP trace and metric pipeline. Keep it for the life of the
/// process and [`shutdown`](Self::shutdown) it at exit, so the last spans
/// and points are sent.
#[derive(Debug)]
pub struct OtelPipeline {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
}

impl OtelPipeline {
    /// Builds the exporters and providers from the environment, makes the
    /// meter provider global (so [`OtelMetrics::global`] and the MCP
    /// operation metric record into it), and sets W3C trace context +
    /// baggage as the global propagator. Installs no `tracing`
    /// subscriber: add [`layer`](Self::layer) to yours, or call
    /// [`install`] instead.
    pub fn from_env(default_service_name: &str) -> Result<Self, OtelError> {
        let protocol = std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL")
            .unwrap_or_else(|_| "http/protobuf".to_owned());
        let resource = resource(default_service_name);
        let (spans, metrics) = exporters(protocol.trim())?;
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_meter_provider(meter_provider.clone());
        opentelemetry::global::set_text_map_propagator(propagator());
        let _ = MCP_OPERATION.set(mcp_operation_histogram(&meter_provider.meter(SCOPE)));
        Ok(OtelPipeline {
            tracer_provider,
            meter_provider,
        })
    }

    /// The `tracing` layer that turns spans into OpenTelemetry spans and
    /// sends them through this pipeline.
    pub fn layer<S>(&self) -> OpenTelemetryLayer<S, SdkTracer>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        // The conventions' attributes only: no source location, thread or
        // busy/idle times on every span (they cost per span, and say
        // nothing an operator asks).
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer_provider.tracer(SCOPE))
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
    }

    /// The pipeline's meter, for instruments of the host's own.
    pub fn meter(&self) -> Meter {
        self.meter_provider.meter(SCOPE)
    }

    /// Sends what is buffered now.
    pub fn flush(&self) -> Result<(), OtelError> {
        let spans = self.tracer_provider.force_flush();
        let points = self.meter_provider.force_flush();
        spans
            .and(points)
            .map_err(|e| OtelError::Shutdown(e.to_string()))
    }

    /// Flushes and stops both providers (at most a few seconds each).
    pub fn shutdown(self) -> Result<(), OtelError> {
        let spans = self
            .tracer_provider
            .shutdown_with_timeout(Duration::from_secs(5));
        let points = self
            .meter_provider
            .shutdown_with_timeout(Duration::from_secs(5));
        spans
            .and(points)
            .map_err(|e| OtelError::Shutdown(e.to_string()))
    }
}

/// [`OtelPipeline::from_env`], with a global `tracing` subscriber that
/// sends the spans of gonk-tools and of the host (at `INFO` and above)
/// through it.
pub fn install(default_service_name: &str) -> Result<OtelPipeline, OtelError> {
    let pipeline = OtelPipeline::from_env(default_service_name)?;
    let subscriber = tracing_subscriber::registry()
        .with(pipeline.layer())
        .with(tracing_subscriber::filter::LevelFilter::INFO);
    tracing::subscriber::set_global_default(subscriber)
        .map_err(|_| OtelError::SubscriberAlreadySet)?;
    Ok(pipeline)
}

fn resource(default_service_name: &str) -> Resource {
    let builder = Resource::builder();
    // The SDK reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; without
    // either naming the service it would be `unknown_service`.
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|v| !v.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| v.contains("service.name="));
    if named {
        builder.build()
    } else {
        builder
            .with_service_name(default_service_name.to_owned())
            .build()
    }
}

type Exporters = (
    opentelemetry_otlp::SpanExporter,
    opentelemetry_otlp::MetricExporter,
);

fn exporters(protocol: &str) -> Result<Exporters, OtelError> {
    let failed = |signal| {
        move |e: opentelemetry_otlp::ExporterBuildError| OtelError::Exporter {
            signal,
            reason: e.to_string(),
        }
    };
    // The exporter builds its reqwest client naming no TLS provider; with
    // `mcp` or `oauth` that reqwest has rustls without a built-in one (see
    // `adapters::http::OutboundHttp`), so give it `ring` unless the
    // application chose already.
    #[cfg(any(feature = "mcp", feature = "oauth"))]
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    match protocol {
        "http/protobuf" | "" => Ok((
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .build()
                .map_err(failed("traces"))?,
            opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .build()
                .map_err(failed("metrics"))?,
        )),
        #[cfg(feature = "otel-grpc")]
        "grpc" => Ok((
            opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .build()
                .map_err(failed("traces"))?,
            opentelemetry_otlp::MetricExporter::builder()
                .with_tonic()
                .build()
                .map_err(failed("metrics"))?,
        )),
        other => Err(OtelError::Protocol(other.to_owned())),
    }
}

/// W3C trace context and baggage: what `_meta` and HTTP headers carry.
fn propagator() -> TextMapCompositePropagator {
    TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
}

pub(super) fn set_parent(span: &Span, parent: &TraceContext) {
    if span.is_disabled() {
        return;
    }
    let mut carrier = HashMap::with_capacity(3);
    carrier.insert(
        super::trace_context::TRACEPARENT.to_owned(),
        parent.traceparent().to_owned(),
    );
    if let Some(state) = parent.tracestate() {
        carrier.insert(
            super::trace_context::TRACESTATE.to_owned(),
            state.to_owned(),
        );
    }
    if let Some(baggage) = parent.baggage() {
        carrier.insert(super::trace_context::BAGGAGE.to_owned(), baggage.to_owned());
    }
    let cx = propagator().extract(&carrier);
    // Without an OpenTelemetry layer there is nothing to parent.
    let _ = span.set_parent(cx);
}

pub(super) fn current_context() -> Option<TraceContext> {
    let span = Span::current();
    if span.is_disabled() {
        return None;
    }
    let cx = span.context();
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut carrier: HashMap<String, String> = HashMap::with_capacity(3);
    propagator().inject_context(&cx, &mut carrier);
    TraceContext::from_lookup(|key| carrier.get(key).map(String::as_str))
}

/// The [`MetricsSink`] of the OTLP pipeline: each record is one point of
/// the `gonk.tool.call.duration` histogram (seconds), by tool
/// (`gen_ai.tool.name`), outcome (`gonk.outcome`) and error code
/// (`error.type`). The registry's one metric path, exported.
#[derive(Clone, Debug)]
pub struct OtelMetrics {
    duration: Histogram<f64>,
}

impl OtelMetrics {
    /// Records into `meter`.
    pub fn new(meter: &Meter) -> Self {
        OtelMetrics {
            duration: meter
                .f64_histogram(attr::GONK_TOOL_CALL_DURATION)
                .with_unit("s")
                .with_description("Duration of one tool call through dispatch")
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build(),
        }
    }

    /// Records into the global meter provider (the one
    /// [`OtelPipeline::from_env`] sets). Make it after the pipeline.
    pub fn global() -> Self {
        Self::new(&opentelemetry::global::meter(SCOPE))
    }
}

impl MetricsSink for OtelMetrics {
    fn record(&self, record: &MetricRecord) {
        let mut attributes = Vec::with_capacity(3);
        attributes.push(KeyValue::new(attr::GEN_AI_TOOL_NAME, record.tool.clone()));
        attributes.push(KeyValue::new(
            attr::GONK_OUTCOME,
            super::outcome_str(record.outcome),
        ));
        if let Some(code) = &record.error_code {
            attributes.push(KeyValue::new(attr::ERROR_TYPE, code.as_str().to_owned()));
        }
        self.duration
            .record(record.duration.as_secs_f64(), &attributes);
    }
}

/// The buckets the semantic conventions advise for MCP durations (seconds).
const DURATION_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// `mcp.server.operation.duration`, once a pipeline is built.
static MCP_OPERATION: OnceLock<Histogram<f64>> = OnceLock::new();

fn mcp_operation_histogram(meter: &Meter) -> Histogram<f64> {
    meter
        .f64_histogram(attr::MCP_SERVER_OPERATION_DURATION)
        .with_unit("s")
        .with_description("Duration of one MCP request on the server")
        .with_boundaries(DURATION_BOUNDARIES.to_vec())
        .build()
}

/// Whether an MCP operation's duration is recorded (a pipeline is built).
pub(crate) fn mcp_operation_enabled() -> bool {
    MCP_OPERATION.get().is_some()
}

/// Records one point of `mcp.server.operation.duration`.
pub(crate) fn record_mcp_operation(duration: Duration, operation: &super::McpOperation<'_>) {
    let Some(histogram) = MCP_OPERATION.get() else {
        return;
    };
    let mut attributes = Vec::with_capacity(5);
    attributes.push(KeyValue::new(
        attr::MCP_METHOD_NAME,
        operation.method.to_owned(),
    ));
    attributes.push(KeyValue::new(attr::NETWORK_TRANSPORT, operation.transport));
    if let Some(tool) = operation.tool {
        attributes.push(KeyValue::new(attr::GEN_AI_TOOL_NAME, tool.to_owned()));
    }
    if let Some(version) = operation.protocol_version {
        attributes.push(KeyValue::new(
            attr::MCP_PROTOCOL_VERSION,
            version.to_owned(),
        ));
    }
    if let Some(error) = operation.error_type {
        attributes.push(KeyValue::new(attr::ERROR_TYPE, error.to_owned()));
    }
    histogram.record(duration.as_secs_f64(), &attributes);
}
