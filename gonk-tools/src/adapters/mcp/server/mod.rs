//! The MCP server: rmcp's [`ServerHandler`](rmcp::ServerHandler) over a
//! registry, whatever transport carries it.
//!
//! * [`options`] — [`McpServerOptions`] and [`WriteToolPolicy`].
//! * [`mcp_server`] — [`McpServer`]: what its sessions share, what each
//!   keeps, and what every request starts from (listing, base context).
//! * [`handler`] — rmcp's `ServerHandler` for it: each MCP request.
//! * [`call`] — one `tools/call`, from the tool's context to the result.
//! * [`primitives`] — resource, prompt and completion requests.
//! * [`request_context`] — [`McpRequestContext`], what a tool sees of the
//!   request it serves.
//! * [`tools`] and [`listing`] — the MCP projection of a definition and
//!   the `tools/list` result, cached per registry change.
//! * [`content`] — a call's outcome as a `tools/call` result, and back.
//! * [`notify`] — progress and log events as notifications.
//! * [`asking`] and [`request_state`] — asking the client: on a 2025
//!   session, or by a sealed `requestState` in the stateless era.
//! * [`tasks`] — detached tools as MCP tasks.
//! * [`resources`] — resources, prompts and completion on the wire.
//! * [`apps`] — the MCP Apps extension: its declaration, and what a
//!   client declared of it.
//! * [`skills`] — the skills extension: `skills/list`, `skills/get`,
//!   `resources/directory/read` and the `skill://` files.
//! * [`inflight`] — the server-wide count of running calls: the busy cap
//!   and the drain of a graceful shutdown.
//! * [`sessions`] — the 2025 sessions over HTTP whose calls may run in
//!   their own requests.

mod apps;
pub(super) mod asking;
mod call;
pub(super) mod content;
mod handler;
pub(super) mod inflight;
mod listing;
mod mcp_server;
pub(super) mod notify;
mod options;
mod primitives;
mod request_context;
mod request_state;
mod resources;
pub(super) mod sessions;
mod skills;
mod tasks;
pub(super) mod tools;

pub use asking::DEFAULT_ASK_TIMEOUT;
pub use inflight::DEFAULT_MAX_IN_FLIGHT_CALLS;
pub use mcp_server::McpServer;
pub use options::{McpServerOptions, WriteToolPolicy, DEFAULT_SHUTDOWN_GRACE};
pub use request_context::McpRequestContext;
#[cfg(feature = "redis")]
pub use request_state::RedisSingleUseStore;
pub use request_state::{
    ClaimFuture, InMemorySingleUseStore, RequestStateKeys, RequestStateKeysError, SingleUseStore,
    SingleUseStoreError, DEFAULT_REQUEST_STATE_TTL, REQUEST_STATE_KEYS_ENV,
};
pub use tools::{is_write_tool, project_tool};

#[cfg(test)]
mod tests;
