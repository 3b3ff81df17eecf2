//! The MCP server: rmcp's [`ServerHandler`](rmcp::ServerHandler) over a
//! registry, whatever transport carries it.
//!
//! * [`handler`] — [`McpServer`], the handler, and [`McpRequestContext`],
//!   what a tool sees of the request it serves.
//! * [`tools`] and [`listing`] — the MCP projection of a definition and
//!   the `tools/list` result, cached per registry change.
//! * [`content`] — a call's outcome as a `tools/call` result, and back.
//! * [`notify`] — progress and log events as notifications.
//! * [`asking`] and [`request_state`] — asking the client: on a 2025
//!   session, or by a sealed `requestState` in the stateless era.
//! * [`tasks`] — detached tools as MCP tasks.
//! * [`resources`] — resources, prompts and completion on the wire.
//! * [`inflight`] — the server-wide count of running calls: the busy cap
//!   and the drain of a graceful shutdown.

pub(super) mod asking;
pub(super) mod content;
mod handler;
pub(super) mod inflight;
mod listing;
pub(super) mod notify;
mod request_state;
mod resources;
mod tasks;
pub(super) mod tools;

pub use asking::DEFAULT_ASK_TIMEOUT;
pub use handler::{McpRequestContext, McpServer};
pub use inflight::DEFAULT_MAX_IN_FLIGHT_CALLS;
#[cfg(feature = "redis")]
pub use request_state::RedisSingleUseStore;
pub use request_state::{
    ClaimFuture, InMemorySingleUseStore, RequestStateKeys, RequestStateKeysError, SingleUseStore,
    SingleUseStoreError, DEFAULT_REQUEST_STATE_TTL, REQUEST_STATE_KEYS_ENV,
};
pub use tools::{is_write_tool, project_tool};
