//! Telemetry: the `tracing` spans that dispatch and the surfaces open,
//! named and attributed with OpenTelemetry's semantic conventions for MCP
//! and for GenAI tool execution; W3C trace context ([`TraceContext`])
//! carried in from callers and out to servers; and, with the `otel`
//! feature, the OTLP export of spans and metrics ([`otel`]).
//!
//! # What is recorded
//!
//! Every call through [`ToolRegistry::invoke`](crate::ToolRegistry::invoke)
//! runs inside one `execute_tool {tool}` span (target `gonk_tools::dispatch`):
//! a composed call's span is a child of its parent's, the authorization and
//! approval gates get child spans of their own, a cancellation or a timeout
//! is an event on the span, and the outcome, the error code and (when the
//! call is authenticated) the principal id are its attributes (the approval tier is on the `authorize tool.invoke` gate
//! span, where it is resolved). The surfaces open the span around it: MCP opens a SERVER
//! span `{mcp.method.name} {target}` per request, parented on the
//! `traceparent` the client sent (in `_meta`, else in the HTTP headers).
//! The attribute names are the constants in [`attributes`].
//!
//! Neither the input, the output, an error message nor any resource is
//! ever an attribute: they may carry what the security layer redacts.
//!
//! # What it costs
//!
//! Without a `tracing` subscriber every span is disabled at its call site
//! and nothing is recorded or allocated (`docs/benchmarks.md` has the
//! figures, with and without the OTLP pipeline).

pub mod attributes;
#[cfg(feature = "otel")]
pub mod otel;
mod trace_context;

use tracing::Span;

pub use self::trace_context::{TraceContext, BAGGAGE, TRACEPARENT, TRACESTATE};
use crate::error::ErrorCode;
use crate::event::{LogLevel, ToolEvent};
use crate::metrics::MetricOutcome;

/// The `tracing` target of the dispatch spans and their events.
pub const DISPATCH_TARGET: &str = "gonk_tools::dispatch";

/// The span of one dispatch of `tool`, a child of the current span (a
/// surface's request span, or the parent call's span for a composed call).
#[inline]
pub(crate) fn call_span(tool: &str) -> Span {
    tracing::info_span!(
        target: "gonk_tools::dispatch",
        "execute_tool",
        "otel.name" = format_args!("execute_tool {tool}"),
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = tool,
        "enduser.id" = tracing::field::Empty,
        "gonk.outcome" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
        "otel.status_code" = tracing::field::Empty,
    )
}

/// The span of one gate (`authorize` or `approve`) of the current call.
#[inline]
pub(crate) fn gate_span(gate: &'static str) -> Span {
    tracing::info_span!(
        target: "gonk_tools::dispatch",
        "gate",
        "otel.name" = gate,
        "gonk.approval.tier" = tracing::field::Empty,
    )
}

/// Records the call's outcome on its span: the outcome, and for an error
/// its code as `error.type` and the span's status; a cancellation and a
/// timeout are events too.
pub(crate) fn record_outcome(span: &Span, outcome: MetricOutcome, code: Option<&ErrorCode>) {
    if span.is_disabled() {
        return;
    }
    span.record(attributes::GONK_OUTCOME, outcome_str(outcome));
    let Some(code) = code else {
        return;
    };
    span.record(attributes::ERROR_TYPE, code.as_str());
    span.record("otel.status_code", "ERROR");
    match code {
        ErrorCode::Aborted => {
            tracing::info!(target: "gonk_tools::dispatch", parent: span, "call cancelled")
        }
        ErrorCode::Timeout => {
            tracing::warn!(target: "gonk_tools::dispatch", parent: span, "call timed out")
        }
        _ => {}
    }
}

/// The wire name of an outcome (`ok`, `error`, `aborted`).
pub fn outcome_str(outcome: MetricOutcome) -> &'static str {
    match outcome {
        MetricOutcome::Ok => "ok",
        MetricOutcome::Error => "error",
        MetricOutcome::Aborted => "aborted",
    }
}

/// Records who the current (authenticated) call runs for: the principal's
/// id, never its identities' claims or metadata.
pub(crate) fn record_principal(id: &str) {
    // The call's span is an INFO span: without a subscriber that takes
    // INFO (one load of the global hint) it records nothing, and finding
    // the current span is skipped.
    if tracing::level_enabled!(tracing::Level::INFO) {
        Span::current().record(attributes::ENDUSER_ID, id);
    }
}

/// Records the approval tier the current call resolved to, on the
/// `authorize tool.invoke` gate span that resolves it.
pub(crate) fn record_approval_tier(tier: &'static str) {
    // As in `record_principal`: the gate's span is an INFO span.
    if tracing::level_enabled!(tracing::Level::INFO) {
        Span::current().record(attributes::GONK_APPROVAL_TIER, tier);
    }
}

/// A `log` event a streaming handler yielded, as a `tracing` event in the
/// call's span (target `gonk_tools::tool`, like
/// `TracingLog`'s lines).
#[inline]
pub(crate) fn passed(event: &ToolEvent) {
    if let ToolEvent::Log { level, message, .. } = event {
        match level {
            LogLevel::Debug => tracing::debug!(target: "gonk_tools::tool", "{message}"),
            LogLevel::Info => tracing::info!(target: "gonk_tools::tool", "{message}"),
            LogLevel::Warn => tracing::warn!(target: "gonk_tools::tool", "{message}"),
            LogLevel::Error => tracing::error!(target: "gonk_tools::tool", "{message}"),
        }
    }
}

/// The span a detached job runs in: a root of its own (the job outlives
/// the request that launched it), linked to the span that launched it.
pub(crate) fn job_span(job: &str, tool: &str) -> Span {
    let span = tracing::info_span!(
        target: "gonk_tools::jobs",
        parent: None,
        "job",
        "otel.name" = format_args!("job {tool}"),
        "gen_ai.tool.name" = tool,
        "gonk.job.id" = job,
    );
    span.follows_from(Span::current());
    span
}

/// Makes `parent` — a caller's trace context — the parent of `span`, so a
/// trace continues across a process boundary.
///
/// Needs the `otel` feature and an OpenTelemetry layer in the subscriber
/// (what [`otel::install`] sets up, or the host's own
/// `tracing-opentelemetry` layer); otherwise it does nothing.
pub fn set_parent(span: &Span, parent: &TraceContext) {
    #[cfg(feature = "otel")]
    otel::set_parent(span, parent);
    #[cfg(not(feature = "otel"))]
    let _ = (span, parent);
}

/// One MCP server operation, as `mcp.server.operation.duration` records it
/// ([`record_mcp_operation`]). An MCP server, ours or one written outside
/// this crate, describes each request it answered with one.
#[derive(Clone, Copy, Debug)]
pub struct McpOperation<'a> {
    /// `tools/call`, `tools/list`, …
    pub method: &'a str,
    /// The tool of a `tools/call`.
    pub tool: Option<&'a str>,
    /// The protocol version the request speaks.
    pub protocol_version: Option<&'a str>,
    /// `pipe` or `tcp`.
    pub transport: &'static str,
    /// Why it failed (`tool_error`, a JSON-RPC error code).
    pub error_type: Option<&'a str>,
}

/// When an MCP operation started, if its duration is recorded (an OTLP
/// pipeline is built, feature `otel`): no clock read otherwise. Pass it to
/// [`record_mcp_operation`] when the operation ends.
pub fn mcp_operation_start() -> Option<std::time::Instant> {
    #[cfg(feature = "otel")]
    if otel::mcp_operation_enabled() {
        return Some(std::time::Instant::now());
    }
    None
}

/// Records one point of `mcp.server.operation.duration`: the time since
/// `started` ([`mcp_operation_start`]), attributed with `operation`.
/// Without the `otel` feature it does nothing.
pub fn record_mcp_operation(started: std::time::Instant, operation: &McpOperation<'_>) {
    #[cfg(feature = "otel")]
    otel::record_mcp_operation(started.elapsed(), operation);
    #[cfg(not(feature = "otel"))]
    let _ = (started, operation);
}
