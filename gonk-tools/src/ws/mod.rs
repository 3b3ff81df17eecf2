//! The WebSocket projection: request/reply and broadcast over any
//! message transport, with no socket library (the real server and client
//! are [`adapters::ws`](crate::adapters) behind the `ws` feature).
//!
//! * [`WsHandler`] — built from a registry snapshot: a [`WsRequest`]
//!   `{reqId?, op, input?}` in, one [`WsReply`] out —
//!   `{type: "result", reqId, result}` or `{type: "error", reqId, message,
//!   code}`. When a call's stream yields several results the last one
//!   wins; an error is terminal.
//! * The host's entry gate ([`WsAuthorize`]): `authorize(tool, caller,
//!   input)` before dispatch; `false` → `Not authorized to invoke <op>`
//!   and the tool never runs.
//! * Broadcast: after a *succeeded* op, a [`WsBroadcast`]
//!   `{type: "broadcast", op, payload}` through the host's emitter, when
//!   the [broadcast policy](broadcasts_by_default) selects it (default:
//!   unrestricted writes only).
//! * [`WsInbound`] / [`WsOutbound`] — parsing frames on either side.
//!
//! ## Two authorization models
//!
//! The entry gate checks **the requested op only**, as the seed's
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

mod authorize;
mod broadcast;
mod forward;
mod handler;
mod hook;
mod message;

pub use authorize::WsAuthorize;
pub use broadcast::{broadcasts_by_default, is_restricted, BroadcastEmitter, BroadcastPolicy};
pub use handler::{ContextFactory, WsHandler, WsHandlerBuilder};
pub use hook::HookError;
pub use message::{
    WsBroadcast, WsEvent, WsInbound, WsOutbound, WsReply, WsRequest, INVALID_REQUEST,
};
