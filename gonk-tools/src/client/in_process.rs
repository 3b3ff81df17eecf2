//! [`InProcess`]: the transport over a registry in the same process, and
//! [`Tap`], which observes the events of any transport.

use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;

use super::Transport;
use crate::context::ToolContext;
use crate::event::ToolEvent;
use crate::event::ToolEventStream;
use crate::registry::ToolRegistry;

/// Calls the tools of a [`ToolRegistry`] in this process, through the full
/// dispatch path ([`ToolRegistry::invoke`]).
///
/// Every call starts from the base context (by default
/// [`ToolContext::new`]) with its own cancellation token, a child of the
/// base context's: cancelling the base token cancels every call in flight,
/// and dropping a call's stream cancels only that call.
#[derive(Clone)]
pub struct InProcess {
    registry: ToolRegistry,
    base: ToolContext,
}

impl InProcess {
    /// A transport over `registry` with the default base context.
    pub fn new(registry: ToolRegistry) -> Self {
        Self::with_context(registry, ToolContext::new())
    }

    /// A transport over `registry` whose calls start from `base` (its
    /// logger, cwd, env, scope, host value…).
    pub fn with_context(registry: ToolRegistry, base: ToolContext) -> Self {
        InProcess { registry, base }
    }

    /// The registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Observes every event of every call made through this transport.
    pub fn tap(self, on_event: impl Fn(&ToolEvent) + Send + Sync + 'static) -> Tap<Self> {
        Tap::new(self, on_event)
    }
}

impl fmt::Debug for InProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InProcess")
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

impl Transport for InProcess {
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        // The call's token is made only if something needs it (most calls
        // finish first): a child token's making and dropping each take a
        // lock on the base token.
        let ctx = self.base.child_call_context();
        self.registry.invoke(name, input, ctx)
    }

    /// Reads through the registry ([`ToolRegistry::read_resource`]),
    /// with the base context.
    fn read_resource<'a>(&'a self, uri: &'a str) -> super::ReadFuture<'a> {
        let ctx = self.base.child_call_context();
        Box::pin(async move {
            self.registry
                .read_resource(uri, ctx)
                .await
                .map_err(super::ClientError::Tool)
        })
    }
}

/// A transport that hands every event of every call to a callback, then
/// passes it on unchanged — e.g. to show progress while a typed client
/// waits for the output.
pub struct Tap<T> {
    inner: T,
    on_event: Arc<dyn Fn(&ToolEvent) + Send + Sync>,
}

impl<T> Tap<T> {
    /// Wraps `inner`.
    pub fn new(inner: T, on_event: impl Fn(&ToolEvent) + Send + Sync + 'static) -> Self {
        Tap {
            inner,
            on_event: Arc::new(on_event),
        }
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<T: Clone> Clone for Tap<T> {
    fn clone(&self) -> Self {
        Tap {
            inner: self.inner.clone(),
            on_event: Arc::clone(&self.on_event),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Tap<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tap")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<T: Transport> Transport for Tap<T> {
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        let on_event = Arc::clone(&self.on_event);
        Box::pin(
            self.inner
                .invoke(name, input)
                .inspect(move |event| on_event(event)),
        )
    }

    fn read_resource<'a>(&'a self, uri: &'a str) -> super::ReadFuture<'a> {
        self.inner.read_resource(uri)
    }
}
