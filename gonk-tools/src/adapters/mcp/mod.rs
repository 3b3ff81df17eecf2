//! The MCP adapter (feature `mcp`): a registry served over the Model
//! Context Protocol, on the official Rust SDK ([`rmcp`]).
//!
//! * [`serve_stdio`] — one session over stdin/stdout (what MCP clients
//!   launch as a subprocess).
//! * [`mcp_router`] — a streamable-HTTP endpoint to mount in an axum app;
//!   [`serve_http`] — the same, standalone, on a bound address. Both take
//!   [`McpHttpOptions`]: the MCP-specific options around the
//!   [`HttpServerOptions`](crate::adapters::http::HttpServerOptions) every
//!   HTTP surface takes (API key, authentication hook, Host and Origin
//!   allow-lists).
//! * [`McpClient`] — the client side: a stdio child process or an HTTP
//!   endpoint, as an event stream per call, for typed clients.
//! * [`McpSource`] — a remote MCP server's tools imported into a registry
//!   as one source catalog (`<serverId>.<name>`), governed like local tools:
//!   untrusted text dropped, approval and authorization applied, input
//!   schemas enforced here, refreshed when the remote's tools change.
//!
//! Every `tools/call` runs through [`ToolRegistry::invoke`](crate::ToolRegistry::invoke) — the same
//! dispatch path as every other surface (schema enforcement, cancellation,
//! panics → `INTERNAL`, one metric per call). rmcp's router is not used:
//! [`McpServer`] implements [`rmcp::ServerHandler`] by hand over the
//! registry.
//!
//! ```no_run
//! use gonk_tools::prelude::*;
//! use gonk_tools::adapters::mcp::{serve_stdio, McpServerOptions};
//!
//! # #[derive(Deserialize, JsonSchema)] struct Echo { text: String }
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! registry.register(
//!     ToolDefinition::builder("echo")
//!         .description("Echo the text back.")
//!         .approval(ApprovalTier::Read)
//!         .handler(|i: Echo, _ctx| async move { Ok::<_, ToolError>(i.text) })
//!         .build(),
//! )?;
//! serve_stdio(registry, McpServerOptions::new("echo-server", "1.0.0")).await?;
//! # Ok(()) }
//! ```
//!
//! ## What a client sees
//!
//! * `tools/list`: name (or the `mcp_name` hint), description (the degraded
//!   one when the capability probe says so), an object input schema (a
//!   non-object schema is wrapped as `{value}` and unwrapped on call), the
//!   output schema when it is an object schema, and annotations from the
//!   `mcp` hints. Duplex tools are never listed. Write tools follow the
//!   [`WriteToolPolicy`].
//! * `tools/call`: display blocks become content, object data becomes
//!   `structuredContent`, errors become `isError` results
//!   (`"Error [CODE]: message"`, the details as a second text item, and
//!   `structuredContent.error`), progress becomes
//!   `notifications/progress` (with a progress token), log lines become
//!   `notifications/message` whose data is `{message}` or `{message,
//!   meta}` (filtered by `logging/setLevel`), and
//!   `notifications/cancelled` or a closed connection cancels the call.
//! * A tool reaches the MCP peer (to request sampling or elicitation) with
//!   `ctx.host::<McpRequestContext>()`.
//!
//! ## Hostile input and bounds
//!
//! Every incoming message passes a JSON-RPC layer of ours before rmcp:
//! malformed JSON, invalid request objects and malformed params of the
//! methods we serve get `-32700` / `-32600` / `-32602` (over HTTP with status
//! `400`; a body over the limit gets `413`, before it is read when its
//! `Content-Length` says so). Running calls are capped server-wide
//! ([`McpServerOptions::max_in_flight_calls`], "Server busy"), HTTP sessions
//! by number and idle time ([`McpHttpOptions::max_sessions`],
//! [`McpHttpOptions::session_idle_timeout`]). A graceful shutdown
//! ([`HttpServer::shutdown`](crate::adapters::http::HttpServer::shutdown),
//! [`serve_stdio_with_shutdown`]) lets running
//! calls finish within [`McpServerOptions::shutdown_grace`] and answers the
//! rest with an `ABORTED` error.
//!
//! Over HTTP, progress notifications travel on the call's own response
//! stream; log notifications travel on the session's standalone stream (the
//! `GET` stream clients open after `initialize`), as rmcp routes them.
//! Errors of a tool that advertises an output schema carry their error
//! object in `_meta["gonk-tools/error"]` instead of `structuredContent`
//! (clients validate any `structuredContent` against the output schema);
//! the text content is the same `"Error [CODE]: message"` either way.

// By concern: the server (the handler over the registry), the two
// transports that carry it and the JSON-RPC layer they share; the client,
// and remote tools imported through it; the spans of both sides.
mod client;
mod http;
mod jsonrpc;
mod server;
mod source;
mod stdio;
mod telemetry;

#[cfg(feature = "oauth")]
pub use client::oauth;
pub use client::{
    ElicitationRequest, McpClient, McpClientBuilder, McpClientError, McpEra, McpHttpClientOptions,
    McpSkillEntry, McpSkillError, McpToolChanges, UrlElicitationRequest,
};
pub use http::{
    mcp_router, serve_http, McpHttpOptions, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
};
#[cfg(feature = "redis")]
pub use server::RedisSingleUseStore;
pub use server::{
    is_write_tool, project_tool, ClaimFuture, InMemorySingleUseStore, McpRequestContext, McpServer,
    McpServerOptions, RequestStateKeys, RequestStateKeysError, SingleUseStore, SingleUseStoreError,
    WriteToolPolicy, DEFAULT_ASK_TIMEOUT, DEFAULT_MAX_IN_FLIGHT_CALLS, DEFAULT_REQUEST_STATE_TTL,
    DEFAULT_SHUTDOWN_GRACE, REQUEST_STATE_KEYS_ENV,
};
pub use source::{McpEndpoint, McpSource, McpSourceBuilder, McpSourceError};
pub use stdio::{
    serve_io, serve_io_with_shutdown, serve_stdio, serve_stdio_with_shutdown, McpServeError,
    DEFAULT_MAX_LINE_BYTES,
};

/// Re-export of the MCP SDK the adapter is built on, for tools that use
/// the peer (sampling, elicitation) and for hosts that mount the service.
pub use rmcp;
