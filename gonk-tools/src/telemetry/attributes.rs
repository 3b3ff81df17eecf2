//! The attribute names the spans and metrics carry: OpenTelemetry's
//! semantic conventions for MCP and GenAI where they name one, and
//! `gonk.*` where they do not.

/// The JSON-RPC method of an MCP request (`tools/call`).
pub const MCP_METHOD_NAME: &str = "mcp.method.name";
/// The MCP protocol version the request speaks (`2025-11-25`, `2026-07-28`).
pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// The MCP session id (2025-era HTTP sessions).
pub const MCP_SESSION_ID: &str = "mcp.session.id";
/// The JSON-RPC request id, as a string.
pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
/// The GenAI operation: `execute_tool` for a tool call.
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// The tool's name.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// Why an operation failed: on a dispatch span the error code
/// (`INVALID_INPUT`); on an MCP span `tool_error` for an `isError` result,
/// else the JSON-RPC error code.
pub const ERROR_TYPE: &str = "error.type";
/// `pipe` (stdio) or `tcp` (HTTP).
pub const NETWORK_TRANSPORT: &str = "network.transport";
/// The authenticated principal's id (authenticated calls only).
pub const ENDUSER_ID: &str = "enduser.id";
/// How a call ended: `ok`, `error` or `aborted`.
pub const GONK_OUTCOME: &str = "gonk.outcome";
/// The approval tier an authenticated call resolved to (`read`, `write`, `exec`).
pub const GONK_APPROVAL_TIER: &str = "gonk.approval.tier";
/// The surface a request came in on (`mcp`, …).
pub const GONK_SURFACE: &str = "gonk.surface";

/// The MCP server metric: one point per request, in seconds.
pub const MCP_SERVER_OPERATION_DURATION: &str = "mcp.server.operation.duration";
/// The tool-call metric fed by the registry's [`MetricsSink`](crate::metrics::MetricsSink):
/// one point per dispatch, in seconds, by tool, outcome and error code.
pub const GONK_TOOL_CALL_DURATION: &str = "gonk.tool.call.duration";
