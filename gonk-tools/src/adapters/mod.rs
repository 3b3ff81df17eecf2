//! Surface adapters over the one dispatch path: each surface has one home
//! here, and reaches the core through its public API only (the core never
//! depends on an adapter).
//!
//! * [`providers`] — the tools as OpenAI, Anthropic and Gemini take them,
//!   and their tool calls run through dispatch; `providers::rig` (feature
//!   `rig`) for rig agents.
//! * [`ws`] — the WebSocket projection over any message transport; the
//!   socket server and client behind the `ws` feature.
//! * `cli` (feature `cli`), `mcp` (feature `mcp`), `pi` (feature `pi`).
//! * `openapi` (feature `openapi`) — an HTTP API's OpenAPI document as a
//!   source catalog, each operation a tool.
//! * Shared by the surfaces: [`names`] — the reversible map of tool names
//!   onto surfaces that cannot carry them; [`render`] — results and errors
//!   as plain text; `http` (features `mcp` or `ws`) — what both HTTP
//!   surfaces take and return: the one options piece (Host, Origin and
//!   API-key guard, authentication hook, shutdown token) and the one
//!   server handle, for MCP over HTTP and the WebSocket server.

#[cfg(feature = "cli")]
pub mod cli;
#[cfg(any(feature = "mcp", feature = "ws"))]
pub mod http;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod names;
#[cfg(feature = "openapi")]
pub mod openapi;
#[cfg(feature = "pi")]
pub mod pi;
pub mod providers;
pub mod render;
pub mod ws;
