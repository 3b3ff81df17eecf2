//! [`WsHandler`]: one request in, one reply out — the entry gate, the
//! call through [`ToolRegistry::invoke`], the reply — and the broadcast of
//! every succeeded call of a served op, read from the registry's change
//! events whichever surface made the call.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::ask::{QuestionSender, WsAsker, WsQuestions, DEFAULT_ASK_TIMEOUT};
use super::authorize::{AuthorizeFn, WsAuthorize};
use super::broadcast::{default_policy, BroadcastEmitter, BroadcastPolicy};
use super::forward;
use super::hook::{self, HookError};
use super::message::{WsBroadcast, WsEvent, WsQuestion, WsReply, WsRequest};
use crate::changes::{ChangeSubscription, ToolChange};
use crate::context::ToolContext;
use crate::definition::{SurfaceProfile, ToolDefinition, ToolPredicate};
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::registry::ToolRegistry;

/// Makes the base context of a request from its caller (cwd, env, scope,
/// and — for the registry's own authorization of every composed call — an
/// [`AuthContext`](crate::security::AuthContext)). An `Err` (or a panic)
/// answers an error reply carrying its message; the tool never runs.
pub type ContextFactory<C> = dyn Fn(&C) -> Result<ToolContext, HookError> + Send + Sync;

struct Inner<C> {
    /// The snapshot taken when the handler was built: what requests and
    /// the calls they compose run through.
    registry: ToolRegistry,
    /// The ops a request may name (the snapshot minus filtered and duplex
    /// tools).
    ops: Arc<HashSet<String>>,
    authorize: Option<Arc<dyn WsAuthorize<C>>>,
    context: Option<Arc<ContextFactory<C>>>,
    /// The broadcast's subscription to the registry's change events
    /// (with an emitter only); dropped with the last clone of the handler.
    _changes: Option<ChangeSubscription>,
    ask_timeout: Duration,
}

/// The WebSocket projection of a registry, independent of any socket
/// library: a request `{reqId?, op, input?}` in, a reply
/// `{type: "result", reqId, result}` or `{type: "error", reqId, message}`
/// out, and `{type: "broadcast", op, payload}` through the emitter after a
/// succeeded op the broadcast policy selects.
///
/// `C` is what the host knows about the connection's caller (a user id,
/// a session, verified claims); it reaches the entry gate and the context
/// factory. Cheap to clone.
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::adapters::ws::{WsHandler, WsReply, WsRequest};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Echo { text: String }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::new();
/// registry.register(
///     ToolDefinition::builder("echo")
///         .description("Echo the text.")
///         .approval(ApprovalTier::Read)
///         .handler(|i: Echo, _ctx| async move { Ok::<_, ToolError>(i.text) })
///         .build(),
/// )?;
/// // Callers are user names; only "alice" may call anything.
/// let handler = WsHandler::builder(&registry)
///     .authorize(|_tool, caller: &String, _input| Ok::<_, String>(caller == "alice"))
///     .build();
///
/// let request = WsRequest::new("echo", json!({"text": "hi"})).with_req_id(1);
/// let reply = handler.handle(request.clone(), &"alice".to_owned()).await;
/// assert_eq!(reply, WsReply::result(Some(json!(1)), json!("hi")));
///
/// let reply = handler.handle(request, &"mallory".to_owned()).await;
/// assert_eq!(reply.into_result().unwrap_err().message, "Not authorized to invoke echo");
/// # Ok(()) }
/// ```
pub struct WsHandler<C = ()> {
    inner: Arc<Inner<C>>,
}

impl<C> Clone for WsHandler<C> {
    fn clone(&self) -> Self {
        WsHandler {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<C> fmt::Debug for WsHandler<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WsHandler")
            .field("ops", &self.ops())
            .field("authorize", &self.inner.authorize.is_some())
            .field("context", &self.inner.context.is_some())
            .field("broadcasts", &self.inner._changes.is_some())
            .finish_non_exhaustive()
    }
}

impl<C> WsHandler<C> {
    /// The snapshot of the registry taken when the handler was built:
    /// requests and the calls they compose run through it.
    pub fn registry(&self) -> &ToolRegistry {
        &self.inner.registry
    }

    /// The ops a request may name, in registry order.
    pub fn ops(&self) -> Vec<String> {
        let mut ops = self.inner.registry.names();
        ops.retain(|op| self.inner.ops.contains(op));
        ops
    }
}

impl<C: Send + Sync + 'static> WsHandler<C> {
    /// Starts a handler over `registry`. The op table is taken when
    /// [`build`](WsHandlerBuilder::build) runs: tools registered later (or
    /// skipped by their `requires` predicate) answer `No such op: <op>`.
    pub fn builder(registry: &ToolRegistry) -> WsHandlerBuilder<C> {
        WsHandlerBuilder {
            registry: registry.clone(),
            keep: None,
            authorize: None,
            context: None,
            policy: default_policy(),
            emitter: None,
            ask_timeout: DEFAULT_ASK_TIMEOUT,
        }
    }

    /// Runs one request and returns its reply. Never fails and never
    /// panics out: every failure is an error reply.
    pub async fn handle(&self, request: WsRequest, caller: &C) -> WsReply {
        self.handle_with_events(request, caller, |_| {}).await
    }

    /// Like [`handle`](Self::handle); a streaming request
    /// (`"stream": true`) also hands each progress, log and data event to
    /// `on_event` before the reply.
    pub async fn handle_with_events(
        &self,
        request: WsRequest,
        caller: &C,
        on_event: impl FnMut(WsEvent) + Send,
    ) -> WsReply {
        self.run(request, caller, on_event, None).await
    }

    /// Like [`handle_with_events`](Self::handle_with_events), for a
    /// transport that can carry questions: a request that said it can
    /// answer (`canAnswer`) may ask its caller during the call. Each
    /// question goes out through `send` as a [`WsQuestion`] and waits in
    /// `questions` (the connection's table) until the transport hands it
    /// the answer ([`WsQuestions::answer`]), at most the
    /// [ask timeout](WsHandlerBuilder::ask_timeout); then the call goes on
    /// without one (`INPUT_UNAVAILABLE`, or `APPROVAL_REQUIRED` for an
    /// approval).
    pub async fn handle_asking(
        &self,
        request: WsRequest,
        caller: &C,
        on_event: impl FnMut(WsEvent) + Send,
        questions: &Arc<WsQuestions>,
        send: impl Fn(WsQuestion) -> bool + Send + Sync + 'static,
    ) -> WsReply {
        let asking: (Arc<WsQuestions>, Arc<QuestionSender>) =
            (Arc::clone(questions), Arc::new(send));
        self.run(request, caller, on_event, Some(asking)).await
    }

    async fn run(
        &self,
        request: WsRequest,
        caller: &C,
        mut on_event: impl FnMut(WsEvent) + Send,
        asking: Option<(Arc<WsQuestions>, Arc<QuestionSender>)>,
    ) -> WsReply {
        let WsRequest {
            req_id,
            op,
            input,
            stream,
            can_answer,
        } = request;
        if PRIMITIVE_OPS.contains(&op.as_str()) {
            return self.run_primitive(&op, req_id, input, caller).await;
        }
        let inner = &*self.inner;
        let found = inner.ops.contains(&op).then(|| inner.registry.get(&op));
        let Some(tool) = found.flatten() else {
            return WsReply::error(
                req_id,
                ToolError::new(ErrorCode::ToolNotFound, format!("No such op: {op}")),
            );
        };
        if let Some(gate) = &inner.authorize {
            match hook::call_async("authorize", || gate.authorize(&tool, caller, &input)).await {
                Ok(true) => {}
                Ok(false) => {
                    return WsReply::error(
                        req_id,
                        ToolError::new(
                            ErrorCode::AuthorizationDenied,
                            format!("Not authorized to invoke {op}"),
                        ),
                    )
                }
                Err(failure) => {
                    return WsReply::error(req_id, ToolError::internal(failure.message))
                }
            }
        }
        let mut ctx = match &inner.context {
            None => ToolContext::new(),
            Some(make) => match hook::call("context", || make(caller)) {
                Ok(ctx) => ctx,
                Err(failure) => {
                    return WsReply::error(req_id, ToolError::internal(failure.message))
                }
            },
        };
        // Questions only for a caller that said it answers them.
        if let (Some((questions, send)), false) = (asking, can_answer.is_empty()) {
            ctx = ctx.with_asker(Arc::new(WsAsker {
                kinds: can_answer,
                req_id: req_id.clone(),
                questions,
                send,
                timeout: inner.ask_timeout,
            }));
        }
        let mut fold = Fold::default();
        if stream {
            // A streaming request also hears the call's ctx.log() lines and
            // ctx.notify() events, in order with what the handler streams.
            let (forward, mut forwarded) = tokio::sync::mpsc::unbounded_channel();
            let mut events = inner
                .registry
                .invoke(&op, input, forward::forwarding(ctx, forward));
            let mut send = |event| {
                on_event(WsEvent {
                    req_id: req_id.clone(),
                    event,
                })
            };
            while !fold.failed() {
                let event = tokio::select! {
                    biased;
                    Some(event) = forwarded.recv() => {
                        send(event);
                        continue;
                    }
                    event = events.next() => event,
                };
                // What the handler reported before this event goes out first.
                while let Ok(early) = forwarded.try_recv() {
                    send(early);
                }
                let Some(event) = event else { break };
                if let Some(event) = fold.take(event) {
                    send(event);
                }
            }
        } else {
            let mut events = inner.registry.invoke(&op, input, ctx);
            while !fold.failed() {
                let Some(event) = events.next().await else {
                    break;
                };
                fold.take(event);
            }
        }
        // An error is terminal: the call's stream (and handler) is dropped by now.
        let result = match fold {
            Fold {
                error: Some(error), ..
            } => return WsReply::error(req_id, error),
            Fold {
                last: Some(result), ..
            } => result,
            Fold { last: None, .. } => {
                return WsReply::error(
                    req_id,
                    ToolError::new(ErrorCode::NoResult, "Tool produced no result"),
                )
            }
        };
        // The broadcast (if any) went out from the registry's change
        // event, before this reply: see `broadcast`.
        WsReply::result(req_id, result)
    }
}

/// Broadcasts a succeeded call of a served op when the policy says so —
/// whichever surface made the call (this socket, MCP, a job, …): it is fed
/// by the registry's change events ([`ToolRegistry::on_change`]). Failures
/// are warnings: they never reach a requester's reply.
fn broadcast(
    ops: &HashSet<String>,
    policy: &BroadcastPolicy,
    emit: &BroadcastEmitter,
    change: &ToolChange<'_>,
) {
    let (tool, result) = (change.tool, change.data);
    let op = tool.name.as_str();
    if !ops.contains(op) {
        return;
    }
    match hook::call("broadcast policy", || policy(tool, result)) {
        Ok(false) => return,
        Ok(true) => {}
        Err(failure) => {
            tracing::warn!(target: "gonk_tools::adapters::ws", op, error = %failure.message, "the broadcast policy failed; nothing was broadcast");
            return;
        }
    }
    let message = WsBroadcast {
        op: op.to_owned(),
        payload: result.clone(),
    };
    if let Err(failure) = hook::call("broadcast emitter", || emit(&message)) {
        tracing::warn!(target: "gonk_tools::adapters::ws", op, error = %failure.message, "the broadcast emitter failed");
    }
}

/// The ops of resources and prompts, next to the tools' (a tool name
/// cannot hold a `/`, so none is shadowed).
pub const PRIMITIVE_OPS: [&str; 4] = [
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
];

impl<C: Send + Sync + 'static> WsHandler<C> {
    /// Runs one of [`PRIMITIVE_OPS`]: the entry gate sees the read (or
    /// get) definition of the resource (or prompt) named — for a listing,
    /// of each item, and only those it allows are listed — then the call
    /// runs with the context factory's context, so the registry's policy
    /// applies too (what a caller may not discover reads as missing).
    async fn run_primitive(
        &self,
        op: &str,
        req_id: Option<Value>,
        input: Value,
        caller: &C,
    ) -> WsReply {
        let inner = &*self.inner;
        let ctx = match &inner.context {
            None => ToolContext::new(),
            Some(make) => match hook::call("context", || make(caller)) {
                Ok(ctx) => ctx,
                Err(failure) => {
                    return WsReply::error(req_id, ToolError::internal(failure.message))
                }
            },
        };
        let field = |name: &str| input.get(name).and_then(Value::as_str).map(str::to_owned);
        let missing = |what: &str| {
            ToolError::new(
                ErrorCode::InvalidInput,
                format!("{op} needs `{what}` in its input, a string"),
            )
        };
        let outcome = match op {
            "resources/list" => {
                let mut listed = Vec::new();
                for resource in inner.registry.list_resources_for(&ctx).await {
                    let Some(read) = resource.read_definition() else {
                        continue;
                    };
                    match self.allowed(read, caller, &input).await {
                        Ok(true) => listed.push(serde_json::json!({
                            "uri": resource.uri(),
                            "name": resource.name(),
                            "title": resource.title(),
                            "description": resource.description(),
                            "mimeType": resource.mime_type(),
                            "template": resource.is_template(),
                        })),
                        Ok(false) => {}
                        Err(error) => return WsReply::error(req_id, error),
                    }
                }
                Ok(serde_json::json!({ "resources": listed }))
            }
            "prompts/list" => {
                let mut listed = Vec::new();
                for prompt in inner.registry.list_prompts_for(&ctx).await {
                    let Some(get) = prompt.get_definition() else {
                        continue;
                    };
                    match self.allowed(get, caller, &input).await {
                        Ok(true) => listed.push(serde_json::json!({
                            "name": prompt.name(),
                            "title": prompt.title(),
                            "description": prompt.description(),
                            "arguments": prompt.arguments(),
                        })),
                        Ok(false) => {}
                        Err(error) => return WsReply::error(req_id, error),
                    }
                }
                Ok(serde_json::json!({ "prompts": listed }))
            }
            "resources/read" => {
                let Some(uri) = field("uri") else {
                    return WsReply::error(req_id, missing("uri"));
                };
                let read = inner
                    .registry
                    .resolve_resource(&uri)
                    .and_then(|(def, _)| def.read_definition().cloned());
                if let Some(read) = read {
                    match self.allowed(&read, caller, &input).await {
                        Ok(true) => {}
                        Ok(false) => return WsReply::error(req_id, denied(op)),
                        Err(error) => return WsReply::error(req_id, error),
                    }
                }
                // Nothing matched: the registry answers RESOURCE_NOT_FOUND.
                inner
                    .registry
                    .read_resource(&uri, ctx)
                    .await
                    .map(|contents| serde_json::json!({ "contents": contents }))
            }
            _ => {
                let Some(name) = field("name") else {
                    return WsReply::error(req_id, missing("name"));
                };
                let arguments = match input.get("arguments") {
                    None | Some(Value::Null) => serde_json::Map::new(),
                    Some(Value::Object(arguments)) => arguments.clone(),
                    Some(_) => {
                        return WsReply::error(
                            req_id,
                            ToolError::new(
                                ErrorCode::InvalidInput,
                                "prompts/get takes `arguments` as an object of strings",
                            ),
                        )
                    }
                };
                let get = inner
                    .registry
                    .get_prompt_definition(&name)
                    .and_then(|p| p.get_definition().cloned());
                if let Some(get) = get {
                    match self.allowed(&get, caller, &input).await {
                        Ok(true) => {}
                        Ok(false) => return WsReply::error(req_id, denied(op)),
                        Err(error) => return WsReply::error(req_id, error),
                    }
                }
                inner
                    .registry
                    .get_prompt(&name, arguments, ctx)
                    .await
                    .and_then(|result| {
                        serde_json::to_value(result)
                            .map_err(|e| ToolError::internal(format!("prompt result: {e}")))
                    })
            }
        };
        match outcome {
            Ok(result) => WsReply::result(req_id, result),
            Err(error) => WsReply::error(req_id, error),
        }
    }

    /// The entry gate's answer for `def` (yes without a gate); a failing
    /// gate is an error (fail closed).
    async fn allowed(
        &self,
        def: &ToolDefinition,
        caller: &C,
        input: &Value,
    ) -> Result<bool, ToolError> {
        let Some(gate) = &self.inner.authorize else {
            return Ok(true);
        };
        hook::call_async("authorize", || gate.authorize(def, caller, input))
            .await
            .map_err(|failure| ToolError::internal(failure.message))
    }
}

fn denied(op: &str) -> ToolError {
    ToolError::new(
        ErrorCode::AuthorizationDenied,
        format!("Not authorized to invoke {op}"),
    )
}

/// A call's events folded into its reply: the last result wins; an error
/// is terminal.
#[derive(Default)]
struct Fold {
    last: Option<Value>,
    error: Option<ToolError>,
}

impl Fold {
    /// Takes an outcome event; hands back any other event.
    fn take(&mut self, event: ToolEvent) -> Option<ToolEvent> {
        match event {
            ToolEvent::Result { data, .. } => self.last = Some(data),
            ToolEvent::Error {
                code,
                message,
                details,
            } => {
                self.error = Some(ToolError {
                    code,
                    message,
                    details,
                })
            }
            other => return Some(other),
        }
        None
    }

    fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// Configures a [`WsHandler`]: the entry gate, the context factory, the
/// broadcast policy and emitter, and which ops are served.
#[must_use = "call .build() to get the handler"]
pub struct WsHandlerBuilder<C> {
    registry: ToolRegistry,
    keep: Option<Box<ToolPredicate>>,
    authorize: Option<Arc<dyn WsAuthorize<C>>>,
    context: Option<Arc<ContextFactory<C>>>,
    policy: Arc<BroadcastPolicy>,
    emitter: Option<Arc<BroadcastEmitter>>,
    ask_timeout: Duration,
}

impl<C: Send + Sync + 'static> WsHandlerBuilder<C> {
    /// How long a call waits for the answer to a question it asks its
    /// caller (default [`DEFAULT_ASK_TIMEOUT`], five minutes). Past it the
    /// call goes on without the answer: a tool's question fails with
    /// `INPUT_UNAVAILABLE`, an approval stays `APPROVAL_REQUIRED`.
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// The entry gate, as a synchronous closure: `Ok(true)` lets the
    /// request through. See [`WsAuthorize`] for what it covers (the
    /// requested op, not composed children) and for an asynchronous gate.
    pub fn authorize<F, E>(mut self, authorize: F) -> Self
    where
        F: Fn(&ToolDefinition, &C, &Value) -> Result<bool, E> + Send + Sync + 'static,
        E: Into<HookError>,
    {
        let gate = AuthorizeFn(move |tool: &ToolDefinition, caller: &C, input: &Value| {
            authorize(tool, caller, input).map_err(Into::into)
        });
        self.authorize = Some(Arc::new(gate));
        self
    }

    /// The entry gate, as a [`WsAuthorize`] implementation (for an
    /// asynchronous check).
    pub fn authorize_with(mut self, authorize: impl WsAuthorize<C>) -> Self {
        self.authorize = Some(Arc::new(authorize));
        self
    }

    /// Makes each request's base context from its caller (default:
    /// [`ToolContext::new`]). Attach an
    /// [`AuthContext`](crate::security::AuthContext) here to have the
    /// registry authorize the requested tool **and every tool it
    /// composes**, with receipts.
    pub fn context<F, E>(mut self, make: F) -> Self
    where
        F: Fn(&C) -> Result<ToolContext, E> + Send + Sync + 'static,
        E: Into<HookError>,
    {
        self.context = Some(Arc::new(move |caller: &C| make(caller).map_err(Into::into)));
        self
    }

    /// Replaces the [default broadcast policy](super::broadcasts_by_default).
    pub fn broadcast_policy<F, E>(mut self, policy: F) -> Self
    where
        F: Fn(&ToolDefinition, &Value) -> Result<bool, E> + Send + Sync + 'static,
        E: Into<HookError>,
    {
        self.policy = Arc::new(move |tool: &ToolDefinition, result: &Value| {
            policy(tool, result).map_err(Into::into)
        });
        self
    }

    /// Where broadcasts go. Without an emitter nothing is broadcast.
    pub fn emitter<F, E>(mut self, emit: F) -> Self
    where
        F: Fn(&WsBroadcast) -> Result<(), E> + Send + Sync + 'static,
        E: Into<HookError>,
    {
        self.emitter = Some(Arc::new(move |message: &WsBroadcast| {
            emit(message).map_err(Into::into)
        }));
        self
    }

    /// Adds an infallible emitter next to the host's [`emitter`](Self::emitter)
    /// (a server's fan-out to its sockets): it runs first, so a failing host
    /// emitter cannot stop it.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use gonk_tools::prelude::*;
    /// use gonk_tools::adapters::ws::{WsBroadcast, WsHandler, WsRequest};
    ///
    /// # #[derive(Deserialize, JsonSchema)] struct Empty {}
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let registry = ToolRegistry::new();
    /// registry.register(
    ///     ToolDefinition::builder("ping")
    ///         .description("Answers pong.")
    ///         .approval(ApprovalTier::Read)
    ///         .handler(|_: Empty, _| async move { Ok::<_, ToolError>("pong") })
    ///         .build(),
    /// ).unwrap();
    /// let sockets = Arc::new(Mutex::new(Vec::new()));
    /// let fan_out = Arc::clone(&sockets);
    /// let handler = WsHandler::<()>::builder(&registry)
    ///     .broadcast_policy(|_, _| Ok::<_, String>(true))
    ///     .emitter(|_: &WsBroadcast| Err::<(), _>("the host's emitter is down".to_owned()))
    ///     .also_emit(move |message: &WsBroadcast| fan_out.lock().unwrap().push(message.op.clone()))
    ///     .build();
    /// handler.handle(WsRequest::new("ping", json!({})), &()).await;
    /// assert_eq!(*sockets.lock().unwrap(), ["ping"]);
    /// # }
    /// ```
    pub fn also_emit(mut self, emit: impl Fn(&WsBroadcast) + Send + Sync + 'static) -> Self {
        self.emitter = Some(match self.emitter.take() {
            None => Arc::new(move |message: &WsBroadcast| {
                emit(message);
                Ok(())
            }),
            Some(host) => Arc::new(move |message: &WsBroadcast| {
                emit(message);
                host(message)
            }),
        });
        self
    }

    /// Serves only the tools for which `keep` is true; a request naming
    /// another answers `No such op` (the served tools may still compose
    /// it).
    pub fn filter(
        mut self,
        keep: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.keep = Some(Box::new(keep));
        self
    }

    /// Takes the snapshot of the registry now. The ops are its tools that
    /// pass the filter, except duplex tools (a request carries no input
    /// stream); visibility does not narrow them, since a request names its
    /// op and nothing is listed.
    pub fn build(self) -> WsHandler<C> {
        let registry = self.registry.filter(|_| true);
        let profile = SurfaceProfile::new().filter(self.keep.as_deref());
        let ops: Arc<HashSet<String>> = Arc::new(
            registry
                .list()
                .into_iter()
                .filter(|tool| !profile.exposure(tool).is_hidden())
                .map(|tool| tool.name.clone())
                .collect(),
        );
        let changes = self.emitter.map(|emit| {
            let (ops, policy) = (Arc::clone(&ops), self.policy);
            registry.on_change(move |change| broadcast(&ops, &*policy, &*emit, change))
        });
        WsHandler {
            inner: Arc::new(Inner {
                registry,
                ops,
                authorize: self.authorize,
                context: self.context,
                _changes: changes,
                ask_timeout: self.ask_timeout,
            }),
        }
    }
}
