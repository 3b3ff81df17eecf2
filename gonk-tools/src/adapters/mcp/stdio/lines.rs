//! The stdio wire: newline-delimited JSON-RPC over a byte stream pair, as
//! an rmcp [`Transport`]. Ours rather than rmcp's so that every line gets
//! the answer JSON-RPC owes it (see [`jsonrpc`]): an
//! unparseable line gets `-32700`, a line over the size limit `-32600`
//! (with its id when it comes early in the line) — rmcp drops both without
//! an answer, and the client waits forever. End of input cancels
//! [`closed`](LineTransport::new) at once, so running calls stop.

use std::future::Future;
use std::io;
use std::sync::Arc;

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::adapters::mcp::jsonrpc::{self, Inbound};

/// The default limit of one stdio line: 16 MiB (rmcp's, and what its HTTP
/// client accepts as one event).
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How much of an oversized line is kept to find its id.
const HEAD_BYTES: usize = 4096;

type Writer<W> = Arc<Mutex<Option<W>>>;

/// One line read, or why there is none.
enum Line {
    /// A whole line (without its newline) is in the buffer.
    Complete,
    /// A line went over the limit; this is its head. The rest is skipped.
    Oversized(Vec<u8>),
    /// End of input (or a read error).
    End,
}

/// Newline-delimited JSON-RPC over `R`/`W`, with the JSON-RPC error layer.
pub(crate) struct LineTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    max_line: usize,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    writer: Writer<W>,
    /// Error answers being written: awaited before the next line is read,
    /// and on close, so none is lost or overtaken.
    answers: JoinSet<()>,
    closed: CancellationToken,
    ended: bool,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// `closed` is cancelled when the input ends.
    pub(crate) fn new(read: R, write: W, max_line: usize, closed: CancellationToken) -> Self {
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            max_line: max_line.max(1),
            discarding: false,
            writer: Arc::new(Mutex::new(Some(write))),
            answers: JoinSet::new(),
            closed,
            ended: false,
        }
    }

    /// Reads one line into `self.line`. Cancel-safe: the buffer and the
    /// skipping state live on `self`, and nothing is awaited between
    /// copying bytes out of the reader and consuming them.
    async fn read_line(&mut self) -> Line {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(available) => available,
                Err(error) => {
                    tracing::debug!(target: "gonk_tools::mcp", %error, "stdin read failed");
                    return Line::End;
                }
            };
            if available.is_empty() {
                // A last line without its newline is still a line.
                if self.line.is_empty() || self.discarding {
                    return Line::End;
                }
                return Line::Complete;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let mut oversized = None;
            if self.discarding {
                self.discarding = newline.is_none();
            } else {
                let body = newline.map_or(take, |at| at);
                if self.line.len() + body > self.max_line {
                    let mut head = std::mem::take(&mut self.line);
                    head.truncate(HEAD_BYTES);
                    let room = HEAD_BYTES.saturating_sub(head.len());
                    head.extend_from_slice(&available[..body.min(room)]);
                    oversized = Some(head);
                    self.discarding = newline.is_none();
                } else {
                    self.line.extend_from_slice(&available[..body]);
                }
            }
            self.read.consume(take);
            if let Some(head) = oversized {
                return Line::Oversized(head);
            }
            if newline.is_some() && !self.discarding && !self.line.is_empty() {
                return Line::Complete;
            }
        }
    }

    /// Starts writing an error answer (in a task, so a cancelled
    /// `receive` cannot cut a line in half).
    fn answer(&mut self, rejection: jsonrpc::Rejection) {
        tracing::debug!(target: "gonk_tools::mcp", code = rejection.code, message = %rejection.message, "answering a malformed message");
        let mut bytes = rejection.to_bytes();
        bytes.push(b'\n');
        let writer = Arc::clone(&self.writer);
        self.answers.spawn(async move {
            let _ = write_line(&writer, &bytes).await;
        });
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    writer: &Mutex<Option<W>>,
    bytes: &[u8],
) -> io::Result<()> {
    let mut writer = writer.lock().await;
    let Some(writer) = writer.as_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    writer.write_all(bytes).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            let mut bytes = serde_json::to_vec(&item)?;
            bytes.push(b'\n');
            write_line(&writer, &bytes).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        while !self.ended {
            // An error answer goes out before anything read after it is
            // served (awaiting the task, not the write, keeps this
            // cancel-safe: a cancelled receive leaves the task running).
            while self.answers.join_next().await.is_some() {}
            match self.read_line().await {
                Line::End => self.ended = true,
                Line::Oversized(head) => {
                    let rejection = jsonrpc::too_large(&head, self.max_line);
                    self.answer(rejection);
                }
                Line::Complete => {
                    let line = std::mem::take(&mut self.line);
                    let text = line.strip_suffix(b"\r").unwrap_or(&line);
                    if text.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match jsonrpc::read(text) {
                        Inbound::Message(message) => {
                            // Keep the buffer's capacity for the next line.
                            self.line = line;
                            self.line.clear();
                            return Some(*message);
                        }
                        Inbound::Ignore => {}
                        Inbound::Reject(rejection) => self.answer(rejection),
                    }
                    self.line = line;
                    self.line.clear();
                }
            }
        }
        self.closed.cancel();
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        while self.answers.join_next().await.is_some() {}
        let mut writer = self.writer.lock().await;
        if let Some(mut writer) = writer.take() {
            let _ = writer.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn oversized_lines_are_answered_and_skipped_and_a_last_line_needs_no_newline() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let closed = CancellationToken::new();
        let mut transport = LineTransport::new(server_read, server_write, 64, closed.clone());
        let (mut client_read, mut client_write) = tokio::io::split(client);
        // Over the limit, written in pieces; then a ping without a newline.
        client_write
            .write_all(br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"#)
            .await
            .unwrap();
        client_write.write_all(&[b' '; 100]).await.unwrap();
        client_write
            .write_all(b"}}\n{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"ping\"}")
            .await
            .unwrap();
        client_write.shutdown().await.unwrap();

        let message = Transport::<RoleServer>::receive(&mut transport).await;
        let Some(JsonRpcMessage::Request(request)) = message else {
            panic!("expected the ping, got {message:?}");
        };
        assert_eq!(request.id, RequestId::Number(42));
        assert!(matches!(request.request, ClientRequest::PingRequest(_)));
        assert!(!closed.is_cancelled());
        assert!(Transport::<RoleServer>::receive(&mut transport)
            .await
            .is_none());
        assert!(closed.is_cancelled(), "end of input cancels `closed`");
        Transport::<RoleServer>::close(&mut transport)
            .await
            .unwrap();

        let mut written = String::new();
        client_read.read_to_string(&mut written).await.unwrap();
        let answer: serde_json::Value = serde_json::from_str(written.trim()).unwrap();
        assert_eq!(answer["id"], 41, "{written}");
        assert_eq!(answer["error"]["code"], -32600, "{written}");
    }
}
