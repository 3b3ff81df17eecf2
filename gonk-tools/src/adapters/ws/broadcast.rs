//! Broadcast: which succeeded ops are fanned out to every connection, and
//! the emitter that does it.
//!
//! A broadcast reaches **every** connected client, whatever it is
//! authorized to see. So the default policy broadcasts only writes that
//! carry no authorization restriction of any kind; a host that broadcasts
//! a restricted op must scope the audience itself (one emitter per
//! audience, or filtering at the socket layer).

use std::sync::Arc;

use serde_json::Value;

use super::hook::HookError;
use super::message::WsBroadcast;
use crate::definition::ToolDefinition;

/// Decides whether a succeeded op is broadcast: the tool and its result's
/// data. An `Err` (or a panic) is logged as a warning and nothing is
/// broadcast; the requester's success reply is unaffected.
pub type BroadcastPolicy = dyn Fn(&ToolDefinition, &Value) -> Result<bool, HookError> + Send + Sync;

/// Fans a broadcast out (to a channel every connection reads, a message
/// bus, …). It is called on the request's task, so it should not block.
/// An `Err` (or a panic) is logged as a warning; the requester's success
/// reply is unaffected.
pub type BroadcastEmitter = dyn Fn(&WsBroadcast) -> Result<(), HookError> + Send + Sync;

/// The default broadcast policy: `true` for a write — a tool whose MCP
/// read-only annotation is explicitly `false` (`mcp(read_only = false)`,
/// or `read_only: Some(false)`) — that is not [restricted](is_restricted).
/// A tool that does not say whether it writes is not broadcast.
pub fn broadcasts_by_default(tool: &ToolDefinition) -> bool {
    tool.hints.mcp.annotations.read_only == Some(false) && !is_restricted(tool)
}

/// Whether a tool declares any authorization restriction: an
/// `authorization` declaration of any content — even an empty
/// `allowed_callers` list or a blank `required_role` — or a required
/// authorization resource. Its results are not for every connection.
pub fn is_restricted(tool: &ToolDefinition) -> bool {
    tool.authorization.is_some() || tool.authorization_resource.is_some()
}

pub(crate) fn default_policy() -> Arc<BroadcastPolicy> {
    Arc::new(|tool: &ToolDefinition, _: &Value| Ok(broadcasts_by_default(tool)))
}
