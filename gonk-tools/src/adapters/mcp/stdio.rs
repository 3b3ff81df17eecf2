//! The stdio transport: one MCP session over stdin/stdout (or any pair of
//! byte streams).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::service::ServerInitializeError;
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::CancellationToken;

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

/// A reader that cancels a token when it reaches end of input: the client
/// closed the connection, so the session's running calls are cancelled at
/// once (rmcp itself waits for in-flight calls before it gives up on them).
struct EofSignal<R> {
    inner: R,
    closed: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &poll {
            Poll::Ready(Ok(())) if buf.filled().len() == before => self.closed.cancel(),
            Poll::Ready(Err(_)) => self.closed.cancel(),
            _ => {}
        }
        poll
    }
}

/// Serves `registry` as one MCP session over `read`/`write` until the
/// client disconnects. End of input cancels the running calls.
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
    let server = McpServer::new(registry, options, WriteToolPolicy::Warn);
    let read = EofSignal {
        inner: read,
        closed: server.closed_token().clone(),
    };
    let running = server.serve((read, write)).await?;
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
