//! The WebSocket projection: request/reply and broadcast over any
//! message transport, with no socket library; the real server and client
//! sit beside it behind the `ws` feature.
//!
//! * [`WsHandler`] — built from a registry snapshot: a [`WsRequest`]
//!   `{reqId?, op, input?}` in, one [`WsReply`] out —
//!   `{type: "result", reqId, result}` or `{type: "error", reqId, message,
//!   code}`. When a call's stream yields several results the last one
//!   wins; an error is terminal.
//! * The host's entry gate ([`WsAuthorize`]): `authorize(tool, caller,
//!   input)` before dispatch; `false` → `Not authorized to invoke <op>`
//!   and the tool never runs.
//! * Broadcast: after a *succeeded* call of a served op — made over this
//!   socket or any other surface of the same registry (MCP, the command
//!   line, Pi, a background job, a composed call): the broadcast reads the
//!   registry's change events ([`ToolRegistry::on_change`](crate::ToolRegistry::on_change)) —
//!   a [`WsBroadcast`] `{type: "broadcast", op, payload}` through the
//!   host's emitter, when the [broadcast policy](broadcasts_by_default)
//!   selects it (default: unrestricted writes only).
//! * [`WsInbound`] / [`WsOutbound`] — parsing frames on either side.
//!
//! ## Two authorization models
//!
//! The entry gate checks **the requested op only**, as the original TypeScript
//! `authorize(tool, caller, input)` does: a tool it lets through may
//! compose (`ctx.invoke`) tools it would refuse. For the registry's
//! contract instead — the root **and every composed call** authorized by a
//! policy, with audit receipts and approval tiers — map the caller to an
//! [`AuthContext`](crate::security::AuthContext) in the
//! [context factory](WsHandlerBuilder::context). Both can be combined.
//!
//! Hook failures fail closed: an entry gate or context factory that
//! returns an error (or panics) answers an error reply with its message;
//! a broadcast policy or emitter that fails is logged as a warning and the
//! requester still gets its success reply.
//!
//! ## On a real socket (feature `ws`)
//!
//! The projection on a real socket (axum's WebSocket support,
//! tokio-tungstenite), and a client:
//!
//! * [`ws_router`] — the endpoint as an axum router, to mount next to
//!   other routes (the notes example serves `/mcp`, `/ws` and a page on one
//!   port); [`serve_ws`] — the same, standalone, on a bound address. Both
//!   take [`WsServerOptions`]: the WebSocket-specific options around the
//!   [`HttpServerOptions`](crate::adapters::http::HttpServerOptions) every
//!   HTTP surface takes (API key, authentication hook, Host and Origin
//!   allow-lists), the same as MCP's.
//! * [`WsClient`] — a [`Transport`](crate::client::Transport) over one
//!   connection, so a generated typed client works over a socket; it also
//!   receives broadcasts.
//!
//! ```no_run
//! use gonk_tools::prelude::*;
//! use gonk_tools::adapters::ws::{serve_ws, WsHandler, WsServerOptions};
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
//! JSON text frames, as in the projection above: a request `{"reqId"?, "op",
//! "input"?, "stream"?}` gets exactly one reply — `{"type": "result",
//! "reqId", "result"}` or `{"type": "error", "reqId", "message", "code"}`
//! — preceded, for `"stream": true`, by `{"type": "event", "reqId",
//! "event"}` messages; `{"type": "cancel", "reqId"}` cancels a call in
//! flight (it replies `ABORTED`); a succeeded op the broadcast policy
//! selects reaches every open socket as `{"type": "broadcast", "op",
//! "payload"}`. Calls on one socket run concurrently; match replies by
//! `reqId`.
//!
//! ## Asking the caller
//!
//! A request may say which questions its caller can answer:
//! `"canAnswer": ["elicitation"]` (also `"sampling"`, `"roots"`). Then a
//! tool's `ctx.elicit` — or an approval the provider hands to the caller
//! ([`ApprovalDecision::AskCaller`](crate::security::ApprovalDecision::AskCaller))
//! — reaches the socket as `{"type": "question", "reqId", "id", "key",
//! "request": {"method": "elicitation/create", "params": {"message",
//! "requestedSchema"}}}`, and the call waits for `{"type": "answer", "id",
//! "answer": {"action": "accept", "content": {…}}}` (or `"decline"`,
//! `"cancel"`) on the same socket. The wait is bounded
//! ([`WsHandlerBuilder::ask_timeout`], five minutes by default): past it
//! the call goes on without the answer (`INPUT_UNAVAILABLE`; an approval
//! stays `APPROVAL_REQUIRED`). A socket that closes fails its questions at
//! once. A request without `canAnswer` is never asked anything: its
//! questions are `INPUT_UNAVAILABLE` at once. An answer naming no waiting
//! question, or of the wrong shape, gets an `INVALID_REQUEST` error reply.
//!
//! ## Resources and prompts
//!
//! Four ops next to the tools' ([`PRIMITIVE_OPS`]; a tool name cannot hold
//! a `/`): `resources/list` → `{"resources": [{uri, name, title,
//! description, mimeType, template}]}`; `resources/read` with input
//! `{"uri"}` → `{"contents": [..]}` (MCP's contents: `text`, or `blob` as
//! base64); `prompts/list` → `{"prompts": [{name, title, description,
//! arguments}]}`; `prompts/get` with input `{"name", "arguments"?: {..}}`
//! → MCP's `{description?, messages}`. The entry gate sees the resource's
//! (or prompt's) read definition — named by the template as written —
//! and a listing shows only what it allows; the context factory's context
//! applies the registry's policy, under which a hidden resource or prompt
//! reads as missing (`RESOURCE_NOT_FOUND`, `PROMPT_NOT_FOUND`). They are
//! not streamed and do not broadcast.
//!
//! ## Defaults (as for MCP over HTTP)
//!
//! * Loopback bind, unless an API key, an authentication or identify hook,
//!   or [`allow_insecure_remote`](crate::adapters::http::HttpServerOptions::allow_insecure_remote).
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

mod ask;
mod authorize;
mod broadcast;
mod forward;
mod handler;
mod hook;
mod message;

pub use ask::{QuestionSender, WsQuestions, DEFAULT_ASK_TIMEOUT};
pub use authorize::WsAuthorize;
pub use broadcast::{broadcasts_by_default, is_restricted, BroadcastEmitter, BroadcastPolicy};
pub use handler::{ContextFactory, WsHandler, WsHandlerBuilder, PRIMITIVE_OPS};
pub use hook::HookError;
pub use message::{
    WsBroadcast, WsEvent, WsInbound, WsOutbound, WsQuestion, WsReply, WsRequest, INVALID_REQUEST,
};

#[cfg(feature = "ws")]
mod client;
#[cfg(feature = "ws")]
mod connection;
#[cfg(feature = "ws")]
mod guard;
#[cfg(feature = "ws")]
mod options;
#[cfg(feature = "ws")]
mod rejection;
#[cfg(feature = "ws")]
mod server;

#[cfg(feature = "ws")]
pub use client::{WsClient, WsClientError, WsClientOptions};
#[cfg(feature = "ws")]
pub use connection::BUSY;
#[cfg(feature = "ws")]
pub use options::{
    WsIdentify, WsServerOptions, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_PING_INTERVAL,
};
#[cfg(feature = "ws")]
pub use rejection::WsRejection;
#[cfg(feature = "ws")]
pub use server::{serve_ws, ws_router};
