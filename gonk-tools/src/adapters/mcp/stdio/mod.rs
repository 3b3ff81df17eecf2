//! MCP over stdio: one session on a pair of byte streams.
//!
//! * [`serve`] — [`serve_stdio`], [`serve_io`] and their graceful-shutdown
//!   forms.
//! * [`lines`] — the wire: newline-delimited JSON-RPC, every line answered
//!   as JSON-RPC owes it.

mod lines;
mod serve;

pub use lines::DEFAULT_MAX_LINE_BYTES;
pub use serve::{
    serve_io, serve_io_with_shutdown, serve_stdio, serve_stdio_with_shutdown, McpServeError,
};
