//! MCP over streamable HTTP: the endpoint and the layers a request passes,
//! in the order it passes them.
//!
//! * [`endpoint`] — [`McpHttpOptions`], [`mcp_router`] and [`serve_http`]:
//!   the options around the shared
//!   [`HttpServerOptions`](crate::adapters::http::HttpServerOptions), the
//!   router and the standalone server.
//! * [`host`] — the shared guard (Host, Origin, API key) and the
//!   endpoint's refusals.
//! * [`security`] — the authentication hook, session pinning, and the
//!   guard that cancels a call whose client went away.
//! * [`admission`] — the body limit, the JSON-RPC checks, the session cap.
//! * [`direct`] — the plain requests, served without a second parse.
//! * [`body`] — the response bodies the layers share.

mod admission;
mod body;
mod direct;
mod endpoint;
mod host;
pub(super) mod security;

pub use endpoint::{
    mcp_router, serve_http, McpHttpOptions, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
};
