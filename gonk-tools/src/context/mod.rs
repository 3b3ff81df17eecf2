//! [`ToolContext`]: what a handler gets — cancellation, a logger, cwd and
//! env, scope, the call stack, composition, duplex input, notifications,
//! host values and application state.
//!
//! The context sits below everything that runs a call: it reaches the
//! registry running it only through a `Dispatcher` (composition, state,
//! resource updates), and carries the caller's identity as a `Caller` it
//! does not open. The layers above add their own methods to it: asking in
//! [`crate::ask`], `with_auth`/`auth` in the security layer, `call::<T>` beside
//! the `Tool` trait.

mod caller;
mod cancellation;
mod dispatcher;
mod input;
mod log;
mod notify;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub(crate) use self::caller::Caller;
pub(crate) use self::cancellation::Cancellation;
pub(crate) use self::dispatcher::Dispatcher;
pub use self::input::{InputChunk, InputStream};
pub use self::log::{LogRecord, LogSink, Logger, NoopLog, TracingLog};
pub use self::notify::{NotifyFn, NotifySink};
use crate::error::ToolError;
use crate::event::{ToolEvent, ToolEventStream};
use crate::scope::ScopeStore;
use crate::state::State;

/// Makes the base context of each call a surface serves (cwd, env, scope,
/// auth, a host value…): a host hands one to a server's options, and the
/// surface adds cancellation, its logger, notifications and its own host
/// value to what it makes.
pub type ContextFactory = dyn Fn() -> ToolContext + Send + Sync;

/// Where a call runs, when the host says so: its working directory and
/// environment (each defaults to the process's); and whether the host
/// already counted it against the rate limits. Rarely set, so behind one
/// thin pointer.
#[derive(Clone, Default)]
pub(crate) struct Place {
    cwd: Option<PathBuf>,
    scope: Option<Arc<dyn ScopeStore>>,
    env: Option<HashMap<String, String>>,
    rate_limit_charged: bool,
    /// Which delivery of a durable job this call is (1 = first); 0 = not
    /// a durable job's run.
    job_attempt: u32,
}

/// The context of one tool call.
///
/// Make the base context of a root call with [`ToolContext::new`] and the
/// `with_*` methods; dispatch derives each handler's context from it.
/// Cloning is cheap (reference-counted fields).
#[derive(Clone)]
pub struct ToolContext {
    pub(crate) cancellation: Cancellation,
    log_sink: Option<Arc<dyn LogSink>>,
    // Thin pointers (`Arc<Place>`, `Arc<Exchange>`, `Arc<Instant>`) for
    // these rarely read fields keep the context at 128 bytes, which the
    // compiler copies inline; a context is moved several times per call.
    pub(crate) place: Option<Arc<Place>>,
    /// `None` until dispatch enters a call: a base context's stack is
    /// empty, and holds no pointer to make or drop.
    pub(crate) call_stack: Option<Arc<[Arc<str>]>>,
    /// What the caller exchanges with the call besides its input value:
    /// the duplex input stream, the asker and the notify callback. One
    /// thin pointer for all three (most calls have none).
    pub(crate) exchange: Option<Arc<Exchange>>,
    pub(crate) host: Option<Arc<dyn Any + Send + Sync>>,
    /// The registry running the call, as the call reaches it (set by
    /// dispatch).
    pub(crate) dispatcher: Option<Arc<dyn Dispatcher>>,
    /// Who calls, when the call is authenticated.
    pub(crate) auth: Option<Arc<dyn Caller>>,
    /// When this call must end (set by dispatch when a timeout applies;
    /// composed calls inherit it). Behind a thin pointer: most calls have
    /// none.
    pub(crate) deadline: Option<Arc<tokio::time::Instant>>,
}

/// Host values of different types on one context (most contexts carry one
/// value, or none, and never make this list).
struct HostValues(Vec<Arc<dyn Any + Send + Sync>>);

impl HostValues {
    /// `held` (one value, or a list) with `added` too, replacing a value of
    /// the same type.
    fn with(
        held: Arc<dyn Any + Send + Sync>,
        added: Arc<dyn Any + Send + Sync>,
    ) -> Arc<dyn Any + Send + Sync> {
        // The values' own types, not the `Arc`'s.
        let added_type = (*added).type_id();
        let mut values = match held.downcast::<HostValues>() {
            Ok(list) => list.0.clone(),
            Err(single) => vec![single],
        };
        values.retain(|value| (**value).type_id() != added_type);
        if values.is_empty() {
            return added;
        }
        values.push(added);
        Arc::new(HostValues(values))
    }
}

/// The duplex input stream (the root call's only), how the call asks its
/// caller (installed by the surface; composed calls share it, see
/// [`crate::ask`]) and where its notifications go (shared too).
#[derive(Default)]
pub(crate) struct Exchange {
    input: Option<Arc<Mutex<Option<InputStream>>>>,
    pub(crate) asker: Option<Arc<crate::ask::AskSlot>>,
    notify: Option<Arc<dyn NotifySink>>,
}

impl Exchange {
    /// `exchange` with what `change` makes of a copy of it; `None` when
    /// nothing is left in it.
    fn changed(
        exchange: Option<&Arc<Exchange>>,
        change: impl FnOnce(&mut Exchange),
    ) -> Option<Arc<Exchange>> {
        let mut next = match exchange {
            Some(exchange) => Exchange {
                input: exchange.input.clone(),
                asker: exchange.asker.clone(),
                notify: exchange.notify.clone(),
            },
            None => Exchange::default(),
        };
        change(&mut next);
        let empty = next.input.is_none() && next.asker.is_none() && next.notify.is_none();
        (!empty).then(|| Arc::new(next))
    }
}

impl Default for ToolContext {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("cancelled", &self.cancellation.is_cancelled())
            .field("call_stack", &self.call_stack())
            .field("has_scope", &self.scope().is_some())
            .field("has_input", &self.has_input())
            .field("authenticated", &self.auth.is_some())
            .field("request_id", &self.request_id())
            .finish_non_exhaustive()
    }
}

static PROCESS_ENV: OnceLock<Arc<HashMap<String, String>>> = OnceLock::new();

impl ToolContext {
    /// The base context: a fresh cancellation token, a no-op logger, the
    /// current directory, and the process environment (a snapshot taken the
    /// first time it is read).
    pub fn new() -> Self {
        // The token is made when something first needs it.
        Self::from_cancellation_state(Cancellation::fresh())
    }

    /// The base context of a call that `token` cancels: what
    /// `ToolContext::new().with_cancellation(token)` makes, without first
    /// making a token only to drop it. A surface that serves each request
    /// with its own token (a connection's child token) starts here.
    ///
    /// ```
    /// use gonk_tools::ToolContext;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let connection = CancellationToken::new();
    /// let ctx = ToolContext::from_cancellation(connection.child_token());
    /// connection.cancel(); // the connection closed
    /// assert!(ctx.is_cancelled());
    /// ```
    pub fn from_cancellation(token: CancellationToken) -> Self {
        Self::from_shared_cancellation(Arc::new(token))
    }

    /// [`from_cancellation`](Self::from_cancellation) with a token the
    /// caller keeps a handle to: a surface that also watches or cancels the
    /// call's token (when its peer sends a cancel, or goes away) clones the
    /// `Arc`, with no lock, instead of the token.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use gonk_tools::ToolContext;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let token = Arc::new(CancellationToken::new());
    /// let ctx = ToolContext::from_shared_cancellation(Arc::clone(&token));
    /// token.cancel(); // the peer cancelled the request
    /// assert!(ctx.is_cancelled());
    /// ```
    pub fn from_shared_cancellation(token: Arc<CancellationToken>) -> Self {
        Self::from_cancellation_state(Cancellation::Token(token))
    }

    fn from_cancellation_state(cancellation: Cancellation) -> Self {
        ToolContext {
            cancellation,
            log_sink: None,
            place: None,
            call_stack: None,
            exchange: None,
            host: None,
            dispatcher: None,
            auth: None,
            deadline: None,
        }
    }

    /// Whether the call is authenticated.
    pub fn is_authenticated(&self) -> bool {
        self.auth.is_some()
    }

    /// The request id of an authenticated call (shared by the root call and
    /// every composed child), once dispatch has captured the auth context.
    pub fn request_id(&self) -> Option<&str> {
        self.auth.as_deref()?.request_id()
    }

    /// The security context key (`gsk:v1:…`) of an authenticated call,
    /// once dispatch has captured the auth context.
    pub fn security_context_key(&self) -> Option<&str> {
        self.auth.as_deref()?.security_context_key()
    }

    /// Uses `token` for cancellation; cancelling it aborts the call.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Cancellation::Token(Arc::new(token));
        self
    }

    /// A copy of this context for one call, with a child of its token:
    /// cancelled when this context's token is, and cancelling it cancels
    /// only this call. The child is made the first time something needs
    /// it; this context's token is not counted again only to be dropped.
    pub(crate) fn child_call_context(&self) -> Self {
        // Every field named: a new one must be decided on here.
        ToolContext {
            cancellation: self.cancellation.child(),
            log_sink: self.log_sink.clone(),
            place: self.place.clone(),
            call_stack: self.call_stack.clone(),
            exchange: self.exchange.clone(),
            host: self.host.clone(),
            dispatcher: self.dispatcher.clone(),
            auth: self.auth.clone(),
            deadline: self.deadline.clone(),
        }
    }

    /// [`with_cancellation`](Self::with_cancellation) with a token the
    /// caller shares: a surface that also watches or cancels the call's
    /// token clones the `Arc` (no lock) instead of the token. A surface
    /// whose host made the base context starts from it here (see
    /// [`from_shared_cancellation`](Self::from_shared_cancellation)).
    pub fn with_shared_cancellation(mut self, token: Arc<CancellationToken>) -> Self {
        self.cancellation = Cancellation::Token(token);
        self
    }

    /// Sends the logger's lines to `sink` (e.g. [`TracingLog`]).
    pub fn with_logger(mut self, sink: impl LogSink + 'static) -> Self {
        self.log_sink = Some(Arc::new(sink));
        self
    }

    /// [`with_logger`](Self::with_logger) with a sink the caller keeps a
    /// handle to: the context shares it rather than boxing it again (a
    /// surface whose per-call queue is also the call's logger allocates it
    /// once).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use gonk_tools::context::{LogRecord, LogSink};
    /// use gonk_tools::ToolContext;
    ///
    /// #[derive(Default)]
    /// struct Lines(Mutex<Vec<String>>);
    /// impl LogSink for Lines {
    ///     fn log(&self, record: &LogRecord<'_>) {
    ///         self.0.lock().unwrap().push(record.message.to_owned());
    ///     }
    /// }
    ///
    /// let lines = Arc::new(Lines::default());
    /// let ctx = ToolContext::new().with_shared_logger(lines.clone());
    /// ctx.log().info("indexing");
    /// assert_eq!(*lines.0.lock().unwrap(), ["indexing"]);
    /// ```
    pub fn with_shared_logger(mut self, sink: Arc<dyn LogSink>) -> Self {
        self.log_sink = Some(sink);
        self
    }

    /// The sink this context's logger writes to, when one is set.
    ///
    /// A surface reads it to keep the host's logger while adding its own
    /// (wrap it, then [`with_shared_logger`](Self::with_shared_logger)),
    /// to write a line on a call's behalf, or to install a default only
    /// when the host set none.
    ///
    /// ```
    /// use gonk_tools::context::TracingLog;
    /// use gonk_tools::ToolContext;
    ///
    /// let host = ToolContext::new();
    /// assert!(host.log_sink().is_none());
    /// let ctx = match host.log_sink() {
    ///     Some(_) => host,
    ///     None => host.with_logger(TracingLog),
    /// };
    /// assert!(ctx.log_sink().is_some());
    /// ```
    pub fn log_sink(&self) -> Option<&Arc<dyn LogSink>> {
        self.log_sink.as_ref()
    }

    /// Sets the working directory.
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        let mut place = self.place.as_deref().cloned().unwrap_or_default();
        place.cwd = Some(cwd.into());
        self.place = Some(Arc::new(place));
        self
    }

    /// Sets the environment (instead of the process environment).
    pub fn with_env(mut self, env: HashMap<String, String>) -> Self {
        let mut place = self.place.as_deref().cloned().unwrap_or_default();
        place.env = Some(env);
        self.place = Some(Arc::new(place));
        self
    }

    /// Marks the call as already counted against the registry's rate
    /// limits, so dispatch does not count it again: a job runner running a
    /// detached call whose launch was counted (the built-in runner does).
    /// Whoever builds the base context is trusted with this, as with
    /// [`with_auth`](Self::with_auth).
    pub fn with_rate_limit_charged(mut self) -> Self {
        let mut place = self.place.as_deref().cloned().unwrap_or_default();
        place.rate_limit_charged = true;
        self.place = Some(Arc::new(place));
        self
    }

    /// Marks the call as delivery `attempt` (1 = the first) of a job on a
    /// runner that delivers at least once (a durable runner sets it).
    pub fn with_job_attempt(mut self, attempt: u32) -> Self {
        let mut place = self.place.as_deref().cloned().unwrap_or_default();
        place.job_attempt = attempt;
        self.place = Some(Arc::new(place));
        self
    }

    /// Which delivery of its job this call is, when a runner that delivers
    /// at least once runs it: `Some(1)` the first, `Some(2)` or more a
    /// retry after a worker died mid-job (the previous attempt may have
    /// done part of the work: make the tool safe to repeat, or check).
    /// `None` outside such a runner (the embedded runner runs a job once).
    /// See `docs/jobs.md`.
    pub fn job_attempt(&self) -> Option<u32> {
        self.place
            .as_ref()
            .map(|p| p.job_attempt)
            .filter(|attempt| *attempt > 0)
    }

    /// Whether [`with_rate_limit_charged`](Self::with_rate_limit_charged)
    /// marked this call.
    pub(crate) fn rate_limit_charged(&self) -> bool {
        self.place.as_ref().is_some_and(|p| p.rate_limit_charged)
    }

    /// Binds a scope store.
    pub fn with_scope(mut self, scope: Arc<dyn ScopeStore>) -> Self {
        let mut place = self.place.as_deref().cloned().unwrap_or_default();
        place.scope = Some(scope);
        self.place = Some(Arc::new(place));
        self
    }

    /// Gives a duplex tool its input stream. It is not forwarded to
    /// composed calls.
    pub fn with_input(mut self, input: InputStream) -> Self {
        self.exchange = Exchange::changed(self.exchange.as_ref(), |e| {
            e.input = Some(Arc::new(Mutex::new(Some(input))));
        });
        self
    }

    /// Installs `asker` (see [`crate::ask`]), keeping the input stream.
    pub(crate) fn set_asker(&mut self, asker: Arc<crate::ask::AskSlot>) {
        self.exchange = Exchange::changed(self.exchange.as_ref(), |e| e.asker = Some(asker));
    }

    /// The call's asker, if its surface installed one.
    pub(crate) fn asker(&self) -> Option<&Arc<crate::ask::AskSlot>> {
        self.exchange.as_ref()?.asker.as_ref()
    }

    /// Receives progress and log events sent with [`notify`](Self::notify),
    /// instead of any callback set before (see
    /// [`also_notify`](Self::also_notify) to keep it).
    pub fn with_notify(self, notify: impl Fn(&ToolEvent) + Send + Sync + 'static) -> Self {
        self.with_notify_sink(Arc::new(notify))
    }

    /// [`with_notify`](Self::with_notify) with a sink already shared: a
    /// surface whose per-call queue receives the call's notifications
    /// hands the queue itself, with no closure allocated around it.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use gonk_tools::context::NotifySink;
    /// use gonk_tools::{ToolContext, ToolEvent};
    ///
    /// #[derive(Default)]
    /// struct Outbound(Mutex<Vec<ToolEvent>>);
    /// impl NotifySink for Outbound {
    ///     fn notify(&self, event: &ToolEvent) {
    ///         self.0.lock().unwrap().push(event.clone());
    ///     }
    /// }
    ///
    /// let queue = Arc::new(Outbound::default());
    /// let ctx = ToolContext::new().with_notify_sink(queue.clone());
    /// ctx.progress(50.0, None);
    /// assert_eq!(queue.0.lock().unwrap().len(), 1);
    /// ```
    pub fn with_notify_sink(mut self, sink: Arc<dyn NotifySink>) -> Self {
        self.exchange = Exchange::changed(self.exchange.as_ref(), |e| e.notify = Some(sink));
        self
    }

    /// Drops the notification callback: a surface that forwards nothing
    /// of a call's notifications (an MCP request without a progress token)
    /// sends them nowhere, as its own callback would have, and the
    /// handler's reports cost nothing.
    pub fn without_notify(mut self) -> Self {
        if self.exchange.as_ref().is_some_and(|e| e.notify.is_some()) {
            self.exchange = Exchange::changed(self.exchange.as_ref(), |e| e.notify = None);
        }
        self
    }

    /// Also sends the events of [`notify`](Self::notify) to `notify`, after
    /// the callback already set, if any: a surface observes or forwards a
    /// call's notifications and the host's own callback keeps receiving
    /// them.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use gonk_tools::{ToolContext, ToolEvent};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let (host, surface) = (Arc::clone(&seen), Arc::clone(&seen));
    /// let ctx = ToolContext::new()
    ///     .with_notify(move |_: &ToolEvent| host.lock().unwrap().push("host"))
    ///     .also_notify(move |_: &ToolEvent| surface.lock().unwrap().push("surface"));
    /// ctx.progress(50.0, None);
    /// assert_eq!(*seen.lock().unwrap(), ["host", "surface"]);
    /// ```
    pub fn also_notify(mut self, notify: impl Fn(&ToolEvent) + Send + Sync + 'static) -> Self {
        let first = self.exchange.as_ref().and_then(|e| e.notify.clone());
        let chained: Arc<dyn NotifySink> = match first {
            None => Arc::new(notify),
            Some(first) => Arc::new(move |event: &ToolEvent| {
                first.notify(event);
                notify(event);
            }),
        };
        self.exchange = Exchange::changed(self.exchange.as_ref(), |e| e.notify = Some(chained));
        self
    }

    /// Attaches a host value (the invoking agent and profile, an adapter's
    /// request handle, …), found again by its type with
    /// [`host`](Self::host). Values of different types are all kept — the
    /// host's own from a server's base context and the surface's request
    /// handle both reach the tool; a value of a type already attached
    /// replaces it.
    ///
    /// ```
    /// use gonk_tools::ToolContext;
    ///
    /// struct Agent(&'static str);
    /// struct Request(u64);
    /// let ctx = ToolContext::new().with_host(Agent("planner")).with_host(Request(7));
    /// assert_eq!(ctx.host::<Agent>().map(|a| a.0), Some("planner"));
    /// assert_eq!(ctx.host::<Request>().map(|r| r.0), Some(7));
    /// let ctx = ctx.with_host(Request(8));
    /// assert_eq!(ctx.host::<Request>().map(|r| r.0), Some(8));
    /// ```
    pub fn with_host<T: Any + Send + Sync>(self, host: T) -> Self {
        self.with_shared_host(Arc::new(host))
    }

    /// [`with_host`](Self::with_host) with a host value the caller keeps a
    /// handle to: a surface that shares one request handle with the call
    /// hands the `Arc` it already holds. [`host`](Self::host) finds it by
    /// its concrete type.
    ///
    /// ```
    /// use std::any::Any;
    /// use std::sync::Arc;
    /// use gonk_tools::ToolContext;
    ///
    /// struct Request { id: u64 }
    /// let request: Arc<dyn Any + Send + Sync> = Arc::new(Request { id: 7 });
    /// let ctx = ToolContext::new().with_shared_host(Arc::clone(&request));
    /// assert_eq!(ctx.host::<Request>().map(|r| r.id), Some(7));
    /// ```
    pub fn with_shared_host(mut self, host: Arc<dyn Any + Send + Sync>) -> Self {
        self.host = Some(match self.host.take() {
            None => host,
            Some(held) => HostValues::with(held, host),
        });
        self
    }

    /// The cancellation token. Long handlers may check it; dispatch also
    /// races the handler against it and drops the handler when it fires.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancellation.token()
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// The structured logger.
    pub fn log(&self) -> Logger<'_> {
        Logger { ctx: self }
    }

    /// The working directory.
    pub fn cwd(&self) -> PathBuf {
        match self.place.as_deref().and_then(|p| p.cwd.as_ref()) {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }

    /// The environment.
    pub fn env(&self) -> &HashMap<String, String> {
        match self.place.as_deref().and_then(|p| p.env.as_ref()) {
            Some(env) => env,
            None => PROCESS_ENV.get_or_init(|| Arc::new(std::env::vars().collect())),
        }
    }

    /// The scope store, when bound.
    pub fn scope(&self) -> Option<&Arc<dyn ScopeStore>> {
        self.place.as_deref()?.scope.as_ref()
    }

    /// Names of the tools on the call stack, root first; the last is the
    /// running tool.
    pub fn call_stack(&self) -> &[Arc<str>] {
        self.call_stack.as_deref().unwrap_or_default()
    }

    /// The running tool's name.
    pub fn tool_name(&self) -> Option<&str> {
        self.call_stack().last().map(|s| &**s)
    }

    /// Takes the duplex input stream (only the first call gets it).
    pub fn take_input(&self) -> Option<InputStream> {
        let slot = self.exchange.as_ref()?.input.as_ref()?;
        slot.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Whether this context carries a duplex input stream.
    pub fn has_input(&self) -> bool {
        self.exchange.as_ref().is_some_and(|e| e.input.is_some())
    }

    /// Sends a progress or log event to the notify callback, if any. Lets a
    /// non-streaming handler report progress.
    pub fn notify(&self, event: &ToolEvent) {
        if let Some(notify) = self.exchange.as_ref().and_then(|e| e.notify.as_ref()) {
            notify.notify(event);
        }
    }

    /// Reports progress through [`notify`](Self::notify).
    pub fn progress(&self, percent: f64, message: impl Into<Option<String>>) {
        self.notify(&ToolEvent::progress(percent, message.into()));
    }

    /// The host value of type `T`, when one is attached.
    pub fn host<T: Any + Send + Sync>(&self) -> Option<&T> {
        let host = self.host.as_deref()?;
        match host.downcast_ref::<T>() {
            Some(value) => Some(value),
            None => host
                .downcast_ref::<HostValues>()?
                .0
                .iter()
                .find_map(|value| value.downcast_ref::<T>()),
        }
    }

    /// Application state `T` from the registry running this call.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        let value = self.dispatcher.as_ref()?.state(TypeId::of::<T>())?;
        value.downcast::<T>().ok().map(State)
    }

    /// When this call will be stopped with `TIMEOUT`, if a timeout applies
    /// to it: its own or its registry's default, or what a composing parent
    /// has left, whichever ends first. A handler can use it to size its
    /// work; calls it composes inherit it.
    pub fn deadline(&self) -> Option<tokio::time::Instant> {
        self.deadline.as_deref().copied()
    }

    /// Tells the subscribers of the resource at `uri` that it changed
    /// ([`ToolRegistry::notify_resource_updated`](crate::ToolRegistry::notify_resource_updated));
    /// nothing outside a call dispatch runs.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        if let Some(dispatcher) = &self.dispatcher {
            dispatcher.notify_resource_updated(uri.into());
        }
    }

    /// Calls another tool through the full dispatch path: same
    /// cancellation, scope, cwd, env, host and notify; a longer call stack
    /// (cycles are refused); no duplex input. An authenticated call's child
    /// keeps the captured principal and request id and is authorized again
    /// (invoke, resource, approval — not discover).
    pub fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        match &self.dispatcher {
            Some(dispatcher) => Arc::clone(dispatcher).invoke(name, input, self.for_child()),
            None => Box::pin(futures::stream::once(async {
                ToolEvent::error(ToolError::internal(
                    "ctx.invoke needs a context made by dispatch; call registry.invoke instead",
                ))
            })),
        }
    }

    /// The context a composed call starts from: everything but the duplex
    /// input.
    pub(crate) fn for_child(&self) -> ToolContext {
        let mut child = self.clone();
        // The child keeps the asker and the notify callback; the input
        // stream stays with the root.
        if self.has_input() {
            child.exchange = Exchange::changed(self.exchange.as_ref(), |e| e.input = None);
        }
        child
    }

    /// Makes this the context a handler runs with: bound to the registry
    /// that runs it, with the call stack it runs on. In place: a context is
    /// 128 bytes, and dispatch moves it enough.
    #[inline(always)]
    pub(crate) fn enter(&mut self, dispatcher: Arc<dyn Dispatcher>, stack: Arc<[Arc<str>]>) {
        self.call_stack = Some(stack);
        self.dispatcher = Some(dispatcher);
    }
}

#[cfg(test)]
mod tests {
    use super::ToolContext;

    #[test]
    fn clones_share_a_token_made_after_they_were_cloned() {
        let ctx = ToolContext::new();
        let clone = ctx.clone();
        // Neither has made the token yet; the clone makes it and cancels.
        clone.cancellation().cancel();
        assert!(ctx.is_cancelled());
        assert!(ctx.cancellation().is_cancelled());
    }

    #[test]
    fn a_child_made_on_first_use_follows_its_parent_and_not_back() {
        let base = ToolContext::new();
        let (one, two) = (base.child_call_context(), base.child_call_context());
        // Cancelling one call's own token leaves the base and its sibling.
        one.cancellation().cancel();
        assert!(one.is_cancelled());
        assert!(!base.is_cancelled() && !two.is_cancelled());
        // The base's cancellation reaches a child whether or not the child
        // made its token: `two` has not, `three` makes it after.
        let three = base.child_call_context();
        base.cancellation().cancel();
        assert!(two.is_cancelled());
        assert!(three.cancellation().is_cancelled());
    }

    #[test]
    fn a_child_call_context_keeps_everything_but_its_token() {
        let base = ToolContext::new().with_cwd("/srv/notes").with_host(7u32);
        let child = base.child_call_context();
        assert_eq!(child.cwd(), std::path::PathBuf::from("/srv/notes"));
        assert_eq!(child.host::<u32>(), Some(&7));
        child.cancellation().cancel();
        assert!(child.is_cancelled() && !base.is_cancelled());
    }

    #[test]
    fn a_cell_left_by_a_finished_call_starts_the_next_one_empty() {
        // The cancelled call's cell goes to the next context made on this
        // thread, emptied: neither its token nor its parent come along.
        let base = ToolContext::new();
        let cancelled = ToolContext::new();
        cancelled.cancellation().cancel();
        drop(cancelled);
        let next = ToolContext::new();
        assert!(!next.is_cancelled());
        assert!(!next.cancellation().is_cancelled());
        let child = base.child_call_context();
        drop(child);
        let fresh = ToolContext::new();
        base.cancellation().cancel();
        assert!(!fresh.is_cancelled() && !fresh.cancellation().is_cancelled());
    }

    #[test]
    fn a_cell_still_shared_is_not_reused() {
        let ctx = ToolContext::new();
        let clone = ctx.clone();
        drop(ctx);
        let other = ToolContext::new();
        clone.cancellation().cancel();
        assert!(clone.is_cancelled());
        assert!(!other.is_cancelled() && !other.cancellation().is_cancelled());
    }

    #[test]
    fn a_context_stays_small_enough_to_copy_inline() {
        // Dispatch moves a context several times per call; up to 128 bytes
        // the compiler copies it inline, above it calls memcpy each time.
        let size = std::mem::size_of::<ToolContext>();
        assert!(size <= 128, "ToolContext is {size} bytes; keep it at most 128 (store rarely used fields behind a thin pointer)");
    }
}
