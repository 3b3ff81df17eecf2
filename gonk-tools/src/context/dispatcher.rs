//! [`Dispatcher`]: all a handler's context knows of the registry that runs
//! it.
//!
//! The context sits below the registry and dispatch, so it holds this
//! narrow seam instead of the registry: the registry implements it, and
//! dispatch puts it into every handler's context. Composition
//! (`ctx.invoke`, `ctx.call::<T>`) re-enters dispatch through it, so a
//! composed call takes the same path as a call from outside.

use std::any::{Any, TypeId};
use std::sync::Arc;

use serde_json::Value;

use super::ToolContext;
use crate::event::ToolEventStream;

/// The registry running a call, as the call's context reaches it.
pub(crate) trait Dispatcher: Send + Sync + 'static {
    /// Runs `name` with `input` through the whole dispatch path, as a call
    /// composed under `ctx` (its call stack, principal, deadline).
    fn invoke(self: Arc<Self>, name: &str, input: Value, ctx: ToolContext) -> ToolEventStream;

    /// The application state of type `type_id`, when the registry holds it.
    fn state(&self, type_id: TypeId) -> Option<Arc<dyn Any + Send + Sync>>;

    /// Tells the subscribers of the resource at `uri` that it changed.
    fn notify_resource_updated(&self, uri: String);

    /// The registry itself, for the layers built on it (detached jobs,
    /// tool search) that need more than a call does.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}
