//! The stdio transport: one MCP session over stdin/stdout (or any pair of
//! byte streams).

use rmcp::service::ServerInitializeError;
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

use super::lines::LineTransport;
use super::server::McpServer;
use super::{McpServerOptions, WriteToolPolicy};
use crate::registry::ToolRegistry;

/// Why an MCP session could not be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServeError {
    /// The client closed the connection or sent something other than
    /// `initialize` first.
    #[error("the MCP client did not complete the initialize handshake: {0}")]
    Handshake(Box<ServerInitializeError>),
    /// The session task failed.
    #[error("the MCP session task failed: {0}")]
    Session(#[from] tokio::task::JoinError),
}

impl From<ServerInitializeError> for McpServeError {
    fn from(error: ServerInitializeError) -> Self {
        McpServeError::Handshake(Box::new(error))
    }
}

/// Serves `registry` as one MCP session over `read`/`write` (newline-
/// delimited JSON-RPC) until the client disconnects. End of input cancels
/// the running calls. A line that is not a valid message gets its JSON-RPC
/// error (`-32700`, `-32600`, `-32602`); a line over
/// [`McpServerOptions::max_line_bytes`] gets `-32600` and is skipped.
pub async fn serve_io<R, W>(
    registry: ToolRegistry,
    options: McpServerOptions,
    read: R,
    write: W,
) -> Result<(), McpServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let max_line = options.max_line_bytes;
    let server = McpServer::new(registry, options, WriteToolPolicy::Warn);
    let transport = LineTransport::new(read, write, max_line, server.closed_token().clone());
    let running = server.serve(transport).await?;
    running.waiting().await?;
    Ok(())
}

/// Serves `registry` over stdin/stdout until the client disconnects — what
/// an MCP client runs when the server is configured as a command. The
/// write-tool policy defaults to [`WriteToolPolicy::Warn`].
///
/// Nothing else may write to stdout while it runs: log to stderr (the ctx
/// logger goes to `tracing` and to the client).
pub async fn serve_stdio(
    registry: ToolRegistry,
    options: McpServerOptions,
) -> Result<(), McpServeError> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    serve_io(registry, options, read, write).await
}
