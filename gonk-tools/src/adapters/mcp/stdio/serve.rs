//! The stdio transport: one MCP session over stdin/stdout (or any pair of
//! byte streams).

use std::future::Future;

use rmcp::service::ServerInitializeError;
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

use super::lines::LineTransport;
use crate::adapters::mcp::server::McpServer;
use crate::adapters::mcp::{McpServerOptions, WriteToolPolicy};
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
    serve_io_with_shutdown(registry, options, read, write, std::future::pending()).await
}

/// [`serve_io`] that also ends gracefully when `signal` resolves (e.g. on
/// SIGTERM): new calls are refused, running calls get
/// [`McpServerOptions::shutdown_grace`] to finish, the rest are cancelled
/// and answered with an `ABORTED` error, and the session ends.
pub async fn serve_io_with_shutdown<R, W>(
    registry: ToolRegistry,
    options: McpServerOptions,
    read: R,
    write: W,
    signal: impl Future<Output = ()> + Send,
) -> Result<(), McpServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let max_line = options.max_line_bytes;
    let grace = options.shutdown_grace;
    let server = McpServer::new(registry, options, WriteToolPolicy::Warn);
    let handle = server.clone();
    let transport = LineTransport::new(read, write, max_line, server.closed_token().clone());
    tokio::pin!(signal);
    let running = tokio::select! {
        running = server.serve(transport) => running?,
        // Shut down before the handshake: nothing is running.
        () = &mut signal => return Ok(()),
    };
    let stop = running.cancellation_token();
    let session = running.waiting();
    tokio::pin!(session);
    tokio::select! {
        ended = &mut session => {
            ended?;
            return Ok(());
        }
        () = &mut signal => {}
    }
    handle.inflight().drain(grace).await;
    // Every call has answered (or is stuck in a blocked thread): end the
    // session; rmcp writes the answers still queued before it closes.
    stop.cancel();
    session.await?;
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
    serve_stdio_with_shutdown(registry, options, std::future::pending()).await
}

/// [`serve_stdio`] that also ends gracefully when `signal` resolves (see
/// [`serve_io_with_shutdown`]).
///
/// ```no_run
/// # use gonk_tools::prelude::*;
/// use gonk_tools::adapters::mcp::{serve_stdio_with_shutdown, McpServerOptions};
///
/// # async fn run(registry: ToolRegistry) -> Result<(), Box<dyn std::error::Error>> {
/// # #[cfg(unix)] {
/// use tokio::signal::unix::{signal, SignalKind};
/// let mut term = signal(SignalKind::terminate())?;
/// serve_stdio_with_shutdown(registry, McpServerOptions::new("app", "1.0.0"), async move {
///     term.recv().await;
/// })
/// .await?;
/// # }
/// # Ok(()) }
/// ```
pub async fn serve_stdio_with_shutdown(
    registry: ToolRegistry,
    options: McpServerOptions,
    signal: impl Future<Output = ()> + Send,
) -> Result<(), McpServeError> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    serve_io_with_shutdown(registry, options, read, write, signal).await
}
