//! The host's entry gate: `authorize(tool, caller, input)`, asked before
//! every request is dispatched.
//!
//! It gates the **requested op only**, as the TypeScript original does
//! (`docs/contract.md#differences`): a tool it allows may compose
//! (`ctx.invoke`) tools it would refuse, and those children run.
//! A host that needs every composed call checked maps the caller to an
//! [`AuthContext`](crate::security::AuthContext) in the context factory
//! ([`WsHandlerBuilder::context`](super::WsHandlerBuilder::context)); the
//! registry then authorizes the root and every child with its policy.

use futures::future::BoxFuture;
use serde_json::Value;

use super::hook::HookError;
use crate::definition::ToolDefinition;

/// Decides whether `caller` may run `tool` with `input` (the request's
/// input, before schema validation). `Ok(false)` answers `Not authorized
/// to invoke <op>` and the tool never runs; an `Err` (or a panic) answers
/// an error reply carrying its message — the gate fails closed.
///
/// Implement it for an asynchronous check (a session store, a policy
/// service); a synchronous closure goes to
/// [`WsHandlerBuilder::authorize`](super::WsHandlerBuilder::authorize).
pub trait WsAuthorize<C>: Send + Sync + 'static {
    /// Answers one request.
    fn authorize<'a>(
        &'a self,
        tool: &'a ToolDefinition,
        caller: &'a C,
        input: &'a Value,
    ) -> BoxFuture<'a, Result<bool, HookError>>;
}

/// A [`WsAuthorize`] from a synchronous closure.
pub(crate) struct AuthorizeFn<F>(pub(crate) F);

impl<C, F> WsAuthorize<C> for AuthorizeFn<F>
where
    F: Fn(&ToolDefinition, &C, &Value) -> Result<bool, HookError> + Send + Sync + 'static,
{
    fn authorize<'a>(
        &'a self,
        tool: &'a ToolDefinition,
        caller: &'a C,
        input: &'a Value,
    ) -> BoxFuture<'a, Result<bool, HookError>> {
        Box::pin(std::future::ready((self.0)(tool, caller, input)))
    }
}
