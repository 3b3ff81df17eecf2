//! End of input cancels the running call at once, even while the call is
//! sending a notification the transport cannot take yet — with a progress
//! token (a progress notification) and without one (a log notification).
//!
//! The server writes through a gate the test closes, so the notification
//! is stuck mid-send when stdin ends. Time is Tokio's paused clock: the
//! runtime jumps to the next timer whenever every task waits, so "the
//! handler was dropped before 4 s passed" is decided by the order of
//! events, never by the machine's speed. Without the fix, nothing happens
//! until rmcp's own 5 s drain timeout.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use gonk_tools::adapters::mcp::{serve_io, McpServerOptions};
use gonk_tools::prelude::*;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

use crate::support::tools::Dropped;

/// A writer that holds every write while closed, and says when one waits.
struct GatedWriter<W> {
    inner: W,
    gate: Arc<Gate>,
}

#[derive(Default)]
struct Gate {
    closed: AtomicBool,
    waiting: Notify,
    wakers: Mutex<Vec<Waker>>,
}

impl Gate {
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    fn open(&self) {
        self.closed.store(false, Ordering::SeqCst);
        for waker in self.wakers.lock().unwrap().drain(..) {
            waker.wake();
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for GatedWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.gate.closed.load(Ordering::SeqCst) {
            self.gate.wakers.lock().unwrap().push(cx.waker().clone());
            self.gate.waiting.notify_one();
            return Poll::Pending;
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

struct Signals {
    started: Arc<Notify>,
    go: Arc<Notify>,
    dropped: Arc<Notify>,
}

/// `stuck`: starts, waits for `go`, sends one progress event and one log
/// line, then waits forever.
fn registry(signals: &Signals) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let (started, go, dropped) = (
        Arc::clone(&signals.started),
        Arc::clone(&signals.go),
        Arc::clone(&signals.dropped),
    );
    registry
        .register(
            ToolDefinition::builder("stuck")
                .description("Notifies, then waits until it is cancelled.")
                .approval(ApprovalTier::Read)
                .handler(move |_: NoInput, ctx: ToolContext| {
                    let guard = Dropped(Arc::clone(&dropped));
                    let (started, go) = (Arc::clone(&started), Arc::clone(&go));
                    async move {
                        let _guard = guard;
                        started.notify_one();
                        go.notified().await;
                        ctx.progress(10.0, Some("working".to_owned()));
                        ctx.log().info("working");
                        std::future::pending::<()>().await;
                        Ok::<_, ToolError>(())
                    }
                })
                .build(),
        )
        .unwrap();
    registry
}

async fn eof_while_a_notification_is_stuck(progress_token: bool) {
    let signals = Signals {
        started: Arc::new(Notify::new()),
        go: Arc::new(Notify::new()),
        dropped: Arc::new(Notify::new()),
    };
    let gate = Arc::new(Gate::default());
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(serve_io(
        registry(&signals),
        McpServerOptions::new("eof", "1.0.0"),
        server_read,
        GatedWriter {
            inner: server_write,
            gate: Arc::clone(&gate),
        },
    ));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let mut send = async |message: Value| {
        client_write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    let init = lines.next_line().await.unwrap().unwrap();
    assert!(init.contains("\"id\":1"), "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let mut params = json!({"name": "stuck", "arguments": {}});
    if progress_token {
        params["_meta"] = json!({"progressToken": "t"});
    }
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})).await;
    signals.started.notified().await;

    // The next notification cannot be written.
    gate.close();
    let waiting = gate.waiting.notified();
    signals.go.notify_one();
    waiting.await;

    // End of input.
    let dropped = signals.dropped.notified();
    client_write.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(4), dropped)
        .await
        .expect("end of input did not drop the handler while a notification was pending");

    // The client still reads: the session ends without waiting for a timeout.
    gate.open();
    tokio::time::timeout(Duration::from_secs(4), serving)
        .await
        .expect("the session did not end promptly after end of input")
        .unwrap()
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn eof_cancels_a_call_stuck_sending_progress() {
    eof_while_a_notification_is_stuck(true).await;
}

#[tokio::test(start_paused = true)]
async fn eof_cancels_a_call_stuck_sending_a_log_line() {
    eof_while_a_notification_is_stuck(false).await;
}
