//! The MCP server span of one request (`{mcp.method.name} {target}`, kind
//! SERVER, with OpenTelemetry's MCP attributes), parented on the client's
//! trace context, and its `mcp.server.operation.duration` point.

use std::time::Instant;

use rmcp::model::{CallToolResult, ErrorData};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use tracing::Span;

use crate::telemetry::{self, attributes as attr, McpOperation, TraceContext};

/// The span and the clock of one MCP request on the server.
pub(crate) struct ServerSpan {
    span: Span,
    started: Option<Instant>,
    method: &'static str,
    tool: Option<String>,
    protocol_version: Option<String>,
    transport: &'static str,
}

impl ServerSpan {
    /// Opens the span of `method` (on `tool`, for `tools/call`), parented
    /// on the trace context in the request's `_meta` — both eras carry it
    /// there — else in its HTTP headers.
    pub(crate) fn start(
        method: &'static str,
        tool: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Self {
        let http = context.extensions.get::<http::request::Parts>();
        let transport = if http.is_some() { "tcp" } else { "pipe" };
        let started = telemetry::mcp_operation_start();
        let span = match tool {
            Some(tool) => tracing::info_span!(
                target: "gonk_tools::mcp",
                "mcp.server",
                "otel.name" = format_args!("{method} {tool}"),
                "otel.kind" = "server",
                "mcp.method.name" = method,
                "gen_ai.operation.name" = "execute_tool",
                "gen_ai.tool.name" = tool,
                "jsonrpc.request.id" = %context.id,
                "mcp.protocol.version" = tracing::field::Empty,
                "mcp.session.id" = tracing::field::Empty,
                "network.transport" = transport,
                "gonk.surface" = "mcp",
                "error.type" = tracing::field::Empty,
                "otel.status_code" = tracing::field::Empty,
            ),
            None => tracing::info_span!(
                target: "gonk_tools::mcp",
                "mcp.server",
                "otel.name" = method,
                "otel.kind" = "server",
                "mcp.method.name" = method,
                "jsonrpc.request.id" = %context.id,
                "mcp.protocol.version" = tracing::field::Empty,
                "mcp.session.id" = tracing::field::Empty,
                "network.transport" = transport,
                "gonk.surface" = "mcp",
                "error.type" = tracing::field::Empty,
                "otel.status_code" = tracing::field::Empty,
            ),
        };
        if span.is_disabled() && started.is_none() {
            return ServerSpan {
                span,
                started,
                method,
                tool: None,
                protocol_version: None,
                transport,
            };
        }
        // A stateless-era request names its version in `_meta`; a 2025
        // session negotiated it at `initialize`.
        let protocol_version = context
            .meta
            .protocol_version()
            .or_else(|| {
                context
                    .peer
                    .peer_info()
                    .map(|info| info.protocol_version.clone())
            })
            .map(|version| version.to_string());
        if let Some(version) = &protocol_version {
            span.record(attr::MCP_PROTOCOL_VERSION, version.as_str());
        }
        if let Some(session) = http
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|value| value.to_str().ok())
        {
            span.record(attr::MCP_SESSION_ID, session);
        }
        let parent = TraceContext::from_meta(&context.meta).or_else(|| {
            let headers = &http?.headers;
            TraceContext::from_lookup(|key| headers.get(key).and_then(|v| v.to_str().ok()))
        });
        if let Some(parent) = parent {
            telemetry::set_parent(&span, &parent);
        }
        ServerSpan {
            span,
            started,
            method,
            tool: tool.map(str::to_owned),
            protocol_version,
            transport,
        }
    }

    /// The span, to run the request in.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Ends the request: `error_type` (`tool_error` for an `isError`
    /// result, else a JSON-RPC error code) on the span and the metric.
    pub(crate) fn finish(self, error_type: Option<&str>) {
        if let Some(error_type) = error_type {
            self.span.record(attr::ERROR_TYPE, error_type);
            self.span.record("otel.status_code", "ERROR");
        }
        if let Some(started) = self.started {
            telemetry::record_mcp_operation(
                started,
                &McpOperation {
                    method: self.method,
                    tool: self.tool.as_deref(),
                    protocol_version: self.protocol_version.as_deref(),
                    transport: self.transport,
                    error_type,
                },
            );
        }
    }

    /// [`finish`](Self::finish) with what a `tools/call` answered.
    /// Ends the span of a `tools/call` answered with questions for the
    /// client (`input_required`): no error.
    pub(crate) fn finish_input_required(self) {
        self.finish(None);
    }

    pub(crate) fn finish_call(self, answer: &Result<CallToolResult, ErrorData>) {
        let code;
        let error_type = match answer {
            Ok(result) if result.is_error == Some(true) => Some("tool_error"),
            Ok(_) => None,
            Err(error) => {
                code = error.code.0.to_string();
                Some(code.as_str())
            }
        };
        self.finish(error_type);
    }
}

/// The CLIENT span of an outgoing `tools/call` of `tool` (a child of the
/// current span); its trace context is what the request carries.
pub(crate) fn client_span(tool: &str) -> Span {
    tracing::info_span!(
        target: "gonk_tools::mcp",
        "mcp.client",
        "otel.name" = format_args!("tools/call {tool}"),
        "otel.kind" = "client",
        "mcp.method.name" = "tools/call",
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = tool,
    )
}
