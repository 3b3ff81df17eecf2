//! The WebSocket adapter (feature `ws`): the [`ws`](crate::ws) projection
//! on a real socket (axum's WebSocket support, tokio-tungstenite), and a
//! client.
//!
//! * [`ws_router`] — the endpoint as an axum router, to mount next to
//!   other routes (the notes example serves `/mcp`, `/ws` and a page on one
//!   port); [`serve_ws`] — the same, standalone, on a bound address.
//! * [`WsClient`] — a [`Transport`](crate::client::Transport) over one
//!   connection, so a generated typed client works over a socket; it also
//!   receives broadcasts.
//!
//! ```no_run
//! use gonk_tools::prelude::*;
//! use gonk_tools::adapters::ws::{serve_ws, WsServerOptions};
//! use gonk_tools::ws::WsHandler;
//!
//! # async fn run(registry: ToolRegistry) -> Result<(), Box<dyn std::error::Error>> {
//! let server = serve_ws(
//!     "127.0.0.1:8809".parse()?,
//!     WsHandler::builder(&registry),
//!     WsServerOptions::new(),
//! )
//! .await?;
//! println!("serving at {}", server.url()); // ws://127.0.0.1:8809/ws
//! server.wait().await?;
//! # Ok(()) }
//! ```
//!
//! ## On the wire
//!
//! JSON text frames, as in [`crate::ws`]: a request `{"reqId"?, "op",
//! "input"?, "stream"?}` gets exactly one reply — `{"type": "result",
//! "reqId", "result"}` or `{"type": "error", "reqId", "message", "code"}`
//! — preceded, for `"stream": true`, by `{"type": "event", "reqId",
//! "event"}` messages; `{"type": "cancel", "reqId"}` cancels a call in
//! flight (it replies `ABORTED`); a succeeded op the broadcast policy
//! selects reaches every open socket as `{"type": "broadcast", "op",
//! "payload"}`. Calls on one socket run concurrently; match replies by
//! `reqId`.
//!
//! ## Defaults (as for MCP over HTTP)
//!
//! * Loopback bind, unless an API key, an identify hook or
//!   [`allow_insecure_remote`](WsServerOptions::allow_insecure_remote).
//! * API key as `Authorization: Bearer <key>` or `?access_token=<key>`
//!   (browsers cannot set headers on a WebSocket); `401` otherwise.
//! * Host allow-list (DNS rebinding) and Origin allow-list (cross-site
//!   WebSocket hijacking): loopback names and origins, the page's own
//!   origin, and what you add; `403` otherwise. No `Origin` — not a
//!   browser — is not checked.
//! * Hostile frames: invalid JSON, wrong field types and binary frames get
//!   an `INVALID_REQUEST` error reply; a message over the size limit
//!   (1 MiB) closes the socket with 1009; past 32 calls in flight a
//!   request gets `BUSY` at once. The server keeps serving.
//! * Keepalive: a ping every 20 s; a socket silent for two intervals is
//!   closed. Shutdown closes every socket with 1001.
//! * A socket that closes aborts its calls in flight: their handlers are
//!   dropped.

mod client;
mod connection;
mod guard;
mod options;
mod rejection;
mod server;

pub use client::{WsClient, WsClientError, WsClientOptions};
pub use connection::BUSY;
pub use options::{
    WsIdentify, WsServerOptions, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_PING_INTERVAL,
};
pub use rejection::WsRejection;
pub use server::{serve_ws, ws_router, WsServeError, WsServer};
