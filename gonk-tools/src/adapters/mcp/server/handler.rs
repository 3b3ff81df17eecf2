//! [`McpServer`]: rmcp's [`ServerHandler`], implemented by hand over a
//! [`ToolRegistry`]. Every `tools/call` runs through
//! [`ToolRegistry::invoke`].
#![allow(deprecated)] // rmcp marks logging (SEP-2577) deprecated; 2025-era clients use it.

use std::any::Any;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use futures::{FutureExt, StreamExt};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities,
    GetTaskParams, GetTaskResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ProgressToken, ProtocolVersion, RequestId, RequestMetaObject, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscriptionFilter, Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::asking::{declared_kinds, kinds_in_meta, Round, SessionAsker};
use super::content::{error_result, success_result, unknown_tool, ErrorPlacement};
use super::inflight::InFlight;
use super::listing::Listings;
use super::notify::{
    tracing_log, AnswerStream, Delivery, LevelFilter, Notifier, Outbound, OutboundQueue,
};
use super::request_state::{RequestStateKeys, Sealer};
use super::resources::{self, Subscriptions};
use super::tasks;
use super::tools;
use crate::adapters::mcp::http::security::RequestState;
use crate::adapters::mcp::telemetry::ServerSpan;
use crate::adapters::mcp::{McpServerOptions, WriteToolPolicy};
use crate::ask::Asker;
use crate::context::{LogSink, NotifySink, ToolContext};
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::event::ToolOutput;
use crate::jobs;
use crate::registry::ToolRegistry;
use crate::security::AuthContext;

/// What a tool sees of the MCP request it serves, through
/// `ctx.host::<McpRequestContext>()`: the peer (for server → client
/// requests such as sampling and elicitation), the request id, the
/// progress token, and — over HTTP — the request head.
///
/// ```no_run
/// # use gonk_tools::prelude::*;
/// use gonk_tools::adapters::mcp::McpRequestContext;
///
/// async fn who_is_calling(ctx: &ToolContext) -> Option<String> {
///     let mcp = ctx.host::<McpRequestContext>()?;
///     Some(mcp.peer().peer_info()?.client_info.name.clone())
/// }
/// ```
#[derive(Clone, Debug)]
pub struct McpRequestContext {
    // The peer, the HTTP head and a stateless request's `_meta` are moved
    // in from rmcp's request context and moved back when the call ends
    // (`call_tool`): a clone of the peer is some twenty reference-count
    // operations, and a copy of the head (its header map, its extensions)
    // cost more than the rest of the context.
    peer: Peer<RoleServer>,
    request_id: RequestId,
    progress_token: Option<ProgressToken>,
    http: Option<http::request::Parts>,
    /// The request's own `_meta` in the stateless era (2026-07-28 on),
    /// where it names the protocol version and the client's capabilities;
    /// `None` on a 2025 session, where the session's handshake did.
    stateless: Option<RequestMetaObject>,
}

impl McpRequestContext {
    /// The client peer: send it requests (`create_message`,
    /// `create_elicitation`) or notifications.
    ///
    /// A request served over HTTP without a session (the 2026 era, or
    /// `McpHttpOptions::sessions(false)`) has no channel back to its client
    /// outside its own answer: its peer carries the client's protocol
    /// version in `peer_info`, and what is sent on it fails with
    /// `TransportClosed`. Report progress and logs through the
    /// [`ToolContext`](crate::ToolContext), which puts them in the answer,
    /// and ask the client with `ctx.ask` (a 2026 request asks by
    /// `input_required`).
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }

    /// The JSON-RPC id of the `tools/call` request.
    pub fn request_id(&self) -> &RequestId {
        &self.request_id
    }

    /// The request's progress token, when the client sent one.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.progress_token.as_ref()
    }

    /// The HTTP request head (method, URI, headers, extensions), over the
    /// streamable-HTTP transport.
    pub fn http_request(&self) -> Option<&http::request::Parts> {
        self.http.as_ref()
    }

    /// The protocol version this request speaks: the one its `_meta`
    /// names (stateless era), else the one the session negotiated.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        match &self.stateless {
            Some(meta) => meta.protocol_version(),
            None => self
                .peer
                .peer_info()
                .map(|info| info.protocol_version.clone()),
        }
    }

    /// Whether the request is of the stateless era (`2026-07-28` on): no
    /// session, so server → client requests on the peer are not available
    /// and the tool must not rely on them.
    pub fn is_stateless(&self) -> bool {
        self.stateless.is_some()
    }

    /// The capabilities the client declared: in the request's `_meta`
    /// (stateless era) or at `initialize` (a 2025 session).
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        match &self.stateless {
            Some(meta) => meta.client_capabilities(),
            None => self.peer.peer_info().map(|info| info.capabilities.clone()),
        }
    }

    /// `Ok` when the client declared `capability` (`"sampling"`,
    /// `"elicitation"`, `"roots"`, …); otherwise an `INPUT_UNAVAILABLE`
    /// error naming it, which a stateless-era request receives as the
    /// protocol's missing-capability error (`-32021`, HTTP `400`) and a 2025
    /// session as an error result.
    ///
    /// ```no_run
    /// # use gonk_tools::prelude::*;
    /// use gonk_tools::adapters::mcp::McpRequestContext;
    ///
    /// async fn summarize(ctx: &ToolContext) -> Result<String, ToolError> {
    ///     let mcp = ctx
    ///         .host::<McpRequestContext>()
    ///         .ok_or_else(|| ToolError::internal("not called over MCP"))?;
    ///     mcp.require_client_capability("sampling")?;
    ///     Ok("…ask the client's model…".to_owned())
    /// }
    /// ```
    pub fn require_client_capability(&self, capability: &str) -> Result<(), ToolError> {
        let declared = self
            .client_capabilities()
            .and_then(|caps| serde_json::to_value(caps).ok())
            .is_some_and(|caps| caps.get(capability).is_some_and(|c| !c.is_null()));
        if declared {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorCode::InputUnavailable,
            format!("The client did not declare the `{capability}` capability this tool needs"),
        )
        .with_details(serde_json::json!({ "requiredCapabilities": { capability: {} } })))
    }
}

/// The missing-capability protocol error a stateless-era request gets for
/// an `INPUT_UNAVAILABLE` error that names required client capabilities.
fn missing_capability(error: &ToolError) -> Option<ErrorData> {
    let required = error.details.as_ref()?.get("requiredCapabilities")?;
    Some(ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        error.message.clone(),
        Some(serde_json::json!({ "requiredCapabilities": required })),
    ))
}

struct Shared {
    registry: ToolRegistry,
    options: McpServerOptions,
    policy: WriteToolPolicy,
    inflight: InFlight,
    listings: Listings,
    /// Seals and opens `requestState` (2026 calls that ask their client).
    sealer: Sealer,
    /// The server's info for each combination of what it offers (tasks,
    /// resources, prompts), made when first asked: rmcp asks for it on
    /// every directly served request.
    infos: [OnceLock<ServerConfig>; 8],
}

/// An MCP server over a [`ToolRegistry`]: one value per session (clone it
/// with [`McpServer::new_session`] for each new connection).
///
/// Use it with any rmcp transport (`rmcp::ServiceExt::serve`); the
/// adapter's [`serve_stdio`](crate::adapters::mcp::serve_stdio) and
/// [`mcp_router`](crate::adapters::mcp::mcp_router) do that for you.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    level: Arc<LevelFilter>,
    closed: CancellationToken,
    /// The resource URIs this (2025) session subscribed to.
    subscriptions: Arc<Subscriptions>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("options", &self.shared.options)
            .field("policy", &self.shared.policy)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server over `registry`. The write-tool policy is the options' one,
    /// else `default_policy`; under [`WriteToolPolicy::Warn`] a warning
    /// names the write tools.
    pub fn new(
        registry: ToolRegistry,
        options: McpServerOptions,
        default_policy: WriteToolPolicy,
    ) -> Self {
        let policy = options.write_policy.unwrap_or(default_policy);
        if policy == WriteToolPolicy::Warn {
            let writes: Vec<String> = registry
                .list()
                .iter()
                .filter(|def| !def.capabilities.duplex && tools::is_write_tool(def))
                .map(|def| tools::mcp_name(def).to_owned())
                .collect();
            if !writes.is_empty() {
                tracing::warn!(
                    target: "gonk_tools::mcp",
                    tools = %writes.join(", "),
                    "MCP server exposes write tools; set WriteToolPolicy::RequireAllowlist to withhold them"
                );
            }
        }
        let level = Arc::new(LevelFilter::new(options.default_log_level));
        McpServer {
            shared: Arc::new(Shared {
                inflight: InFlight::new(options.max_in_flight_calls),
                listings: Listings::default(),
                sealer: Sealer::new(
                    &options
                        .request_state_keys
                        .clone()
                        .unwrap_or_else(RequestStateKeys::random),
                    options.request_state_ttl,
                    options.request_state_store.clone(),
                ),
                registry,
                options,
                policy,
                infos: Default::default(),
            }),
            level,
            closed: CancellationToken::new(),
            subscriptions: Arc::default(),
        }
    }

    /// A fresh session over the same registry and options: its own log
    /// level and its own close signal.
    pub fn new_session(&self) -> Self {
        McpServer {
            shared: Arc::clone(&self.shared),
            level: Arc::new(LevelFilter::new(self.shared.options.default_log_level)),
            closed: CancellationToken::new(),
            subscriptions: Arc::default(),
        }
    }

    /// Cancelled when the session's connection closes; cancelling it
    /// cancels the session's running calls.
    pub fn closed_token(&self) -> &CancellationToken {
        &self.closed
    }

    /// The running calls of this server (shared by its sessions).
    pub(crate) fn inflight(&self) -> &InFlight {
        &self.shared.inflight
    }

    /// The input schema `tools/call` of `name` is checked against (rmcp
    /// reads `x-mcp-header` annotations from it), without projecting the
    /// whole tool; `None` for a tool this server does not serve.
    pub(crate) fn with_input_schema<T>(
        &self,
        name: &str,
        read: impl FnOnce(&serde_json::Value) -> T,
    ) -> Option<T> {
        let shared = &self.shared;
        tools::resolve(&shared.registry, name, &shared.options, shared.policy)
            .map(|def| read(def.effective_input_schema()))
    }

    /// The write-tool policy in force.
    pub fn write_policy(&self) -> WriteToolPolicy {
        self.shared.policy
    }

    /// The tools a session lists (the `tools/list` result) without auth.
    ///
    /// Projected once per registry change (see
    /// [`ToolRegistry::generation`]) and shared by every session; a tool
    /// with a `capability_for` probe is re-projected when its answer
    /// changes. The options' filter is asked when the listing is built.
    pub fn list(&self) -> Vec<Tool> {
        let shared = &self.shared;
        shared
            .listings
            .all(&shared.registry, &shared.options, shared.policy)
            .0
    }

    /// The tools `auth` lists: only those whose `tool.discover` its policy
    /// allows.
    pub async fn list_for(&self, auth: &AuthContext) -> Vec<Tool> {
        self.list_in(&ToolContext::new().with_auth(auth.clone()))
            .await
            .tools
    }

    /// What `ctx` lists: everything listed without auth; with auth, the
    /// listed tools its policy lets it discover (from the same cached
    /// projections). Either way with how long the listing may be kept
    /// and by whom: a listing filtered by the caller's credentials is
    /// private to them, one without auth is the same for every caller.
    async fn list_in(&self, ctx: &ToolContext) -> ListToolsResult {
        let shared = &self.shared;
        let (tools, ttl, scope) = if ctx.is_authenticated() {
            let visible = shared.registry.list_discoverable(ctx).await;
            let (tools, ttl) =
                shared
                    .listings
                    .of(&visible, &shared.registry, &shared.options, shared.policy);
            (tools, ttl, CacheScope::Private)
        } else {
            let (tools, ttl) =
                shared
                    .listings
                    .all(&shared.registry, &shared.options, shared.policy);
            (tools, ttl, CacheScope::Public)
        };
        ListToolsResult::with_all_items(tools)
            .with_ttl_ms(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
            .with_cache_scope(scope)
    }

    /// The base context of one request: the host's
    /// [`base_context`](crate::adapters::mcp::McpServerOptions::base_context), with the
    /// authentication hook's auth over HTTP (the hook's wins). Listing and
    /// calling both start from it, so what is listed is what is callable.
    /// `token` cancels it (the request's).
    fn base_context(
        &self,
        request_state: Option<&RequestState>,
        token: CancellationToken,
    ) -> ToolContext {
        self.base_context_shared(request_state, Arc::new(token))
    }

    /// [`base_context`](Self::base_context) with a token the caller keeps
    /// a handle to.
    fn base_context_shared(
        &self,
        request_state: Option<&RequestState>,
        token: Arc<CancellationToken>,
    ) -> ToolContext {
        let base = match &self.shared.options.base_context {
            Some(make) => make().with_shared_cancellation(token),
            None => ToolContext::from_shared_cancellation(token),
        };
        match request_state.and_then(|state| state.auth.clone()) {
            Some(auth) => base.with_auth(auth),
            None => base,
        }
    }

    /// The job owner a request speaks for (its caller's security context
    /// key; `None` on the unauthenticated path).
    fn owner(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        let request_state = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<RequestState>());
        let base = self.base_context(request_state, CancellationToken::new());
        jobs::owner_of(base.auth())
    }

    fn info(&self) -> ServerConfig {
        let registry = &self.shared.registry;
        // Detached tools are offered as tasks when there is a job runner.
        let tasks = jobs::runner(registry).is_some();
        let (resources, prompts) = (
            !registry.resources().is_empty(),
            !registry.prompts().is_empty(),
        );
        let offers = usize::from(tasks) | usize::from(resources) << 1 | usize::from(prompts) << 2;
        self.shared.infos[offers]
            .get_or_init(|| self.make_info(tasks, resources, prompts))
            .clone()
    }

    fn make_info(&self, tasks: bool, resources: bool, prompts: bool) -> ServerConfig {
        let options = &self.shared.options;
        let mut implementation = Implementation::new(&options.name, &options.version);
        implementation.title = options.title.clone();
        // The listing changes with the catalog: a 2026 client hears of it on
        // `subscriptions/listen`, a 2025 session by notification.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging();
        let mut capabilities = if tasks {
            capabilities.enable_tasks().build()
        } else {
            capabilities.build()
        };
        resources::capabilities(&mut capabilities, resources, prompts);
        let mut info = ServerConfig::new(capabilities);
        info.server_info = implementation;
        info.instructions = options.instructions.clone();
        info
    }

    /// Runs one `tools/call` through the registry and maps the outcome.
    /// A stateless-era request's `_meta` is lent to the tool's context
    /// while it runs and is back in `context` when this returns.
    ///
    /// The future is boxed per call, so it is kept under the allocator's
    /// small-size cache: what only a call that waits or sends needs (the
    /// wait loop, a send, the notifier) is boxed when it is needed.
    // Not an `async fn`: its request would be kept beside the fields it
    // is taken apart into, a second copy in the boxed state.
    #[allow(clippy::manual_async_fn)]
    fn call<'a>(
        &'a self,
        request: CallToolRequestParams,
        lent: Lent<'a>,
    ) -> impl std::future::Future<Output = Result<Called, ErrorData>> + Send + 'a {
        let CallToolRequestParams {
            name,
            arguments,
            input_responses,
            request_state: sealed_state,
            ..
        } = request;
        let Lent {
            session_meta,
            ct,
            mcp,
            answer,
        } = lent;
        async move {
            let progress_token = mcp.progress_token.clone();
            let name: &str = &name;
            let shared = &self.shared;
            let Some(def) = tools::resolve(&shared.registry, name, &shared.options, shared.policy)
            else {
                return Ok(Called::Complete(error_result(
                    &unknown_tool(name),
                    ErrorPlacement::Structured,
                )));
            };
            let request_state = mcp
                .http
                .as_ref()
                .and_then(|parts| parts.extensions.get::<RequestState>());
            let stateless = mcp.stateless.as_ref();
            let level = match stateless {
                // No `logLevel`, no log notifications.
                Some(meta) => match meta.log_level() {
                    Some(level) => Arc::new(LevelFilter::at(Some(&level))),
                    // The common case shares one filter instead of allocating.
                    None => LevelFilter::silent(),
                },
                None => Arc::clone(&self.level),
            };
            // A queue for what the tool logs and reports, only when some of it
            // can reach the client: a progress token to report against, or a
            // level that lets log lines through (a 2025 session's always may:
            // `logging/setLevel` can lower it while the call runs).
            let outbound =
                (progress_token.is_some() || !level.is_silent()).then(OutboundQueue::for_call);
            let is_stateless = stateless.is_some();
            // The tool's context, and the round of a call that may ask, are
            // made in a block: what they are made of is gone before the call
            // runs, and takes no room in its state.
            let (mut events, round) = {
                let arguments = arguments.unwrap_or_default();
                // What a sealed state is bound to: the arguments as the client sent
                // them. Kept only when the call may ask (or brings a state).
                // (A stateless request's `_meta` was moved out of `context`.)
                let meta_kinds = kinds_in_meta(stateless.unwrap_or(session_meta));
                let bound_arguments = (sealed_state.is_some() || !meta_kinds.is_empty())
                    .then(|| Value::Object(arguments.clone()));
                let mut input = Value::Object(arguments);
                if tools::input_is_wrapped(&def) {
                    input = input
                        .get_mut("value")
                        .map(Value::take)
                        .unwrap_or(Value::Null);
                }

                let base = self.base_context_shared(request_state, Arc::clone(ct));
                // How this call may ask its client: a 2026 request by replay (the
                // answers come with the retry), a 2025 session on the session.
                let mut round = None;
                let base = match stateless {
                    Some(_) => match bound_arguments {
                        Some(arguments) => {
                            let caller = jobs::owner_of(base.auth());
                            // Boxed: only a call that may ask opens a round, and
                            // inline its state would size every call's (boxed) state.
                            let opened = Box::pin(Round::open(
                                &shared.sealer,
                                &def.name,
                                &arguments,
                                caller.as_deref().unwrap_or("anonymous"),
                                meta_kinds,
                                sealed_state.as_deref(),
                                input_responses,
                            ))
                            .await;
                            let opened = match opened {
                                Ok(opened) => opened,
                                Err(refused) => return Err(refused),
                            };
                            let base =
                                base.with_asker(Arc::clone(&opened.replay) as Arc<dyn Asker>);
                            round = Some(opened);
                            base
                        }
                        None => base,
                    },
                    None => {
                        let info = mcp.peer.peer_info();
                        let kinds = declared_kinds(info.as_ref().map(|info| &info.capabilities));
                        if kinds.is_empty() {
                            base
                        } else {
                            base.with_asker(Arc::new(SessionAsker::new(
                                mcp.peer.clone(),
                                kinds,
                                shared.options.ask_timeout,
                            )))
                        }
                    }
                };
                let base = match &outbound {
                    // The queue is the logger and the notify sink: one allocation.
                    Some(outbound) => base
                        .with_shared_logger(Arc::clone(outbound) as Arc<dyn LogSink>)
                        .with_notify_sink(Arc::clone(outbound) as Arc<dyn NotifySink>),
                    // Nothing would reach the client: the lines go to `tracing`
                    // only, and notifications nowhere, as the queue would drop them.
                    None => base.with_shared_logger(tracing_log()).without_notify(),
                };
                let ctx: ToolContext =
                    base.with_shared_host(Arc::clone(mcp) as Arc<dyn Any + Send + Sync>);

                let events = shared.registry.invoke_definition(def.clone(), input, ctx);
                (events, round)
            };
            let mut relay = Relay {
                notifier: None,
                peer: &mcp.peer,
                answer,
                progress_token,
                level,
                def: &def,
                closed: &self.closed,
                disconnected: request_state.map(|state| &state.disconnected),
            };
            let shutdown = shared.inflight.abort_token();
            let mut outcome = Outcome::default();
            // Most calls answer without waiting: their events are read at once,
            // in the loop's order (queued notifications first), and the
            // watchers of the loop below are armed only for a call that waits.
            let mut finished = false;
            if !relay.is_gone() && !shared.inflight.is_aborted() {
                loop {
                    while let Some(out) = try_recv(outbound.as_deref()) {
                        relay.send(out.tool.as_deref(), &out.event).await;
                    }
                    match events.next().now_or_never() {
                        None => break,
                        Some(None) => {
                            finished = true;
                            break;
                        }
                        Some(Some(event)) => {
                            if let Some(event) = outcome.take(event) {
                                relay.send(None, &event).await;
                            }
                        }
                    }
                }
            }
            // Boxed: only a call that waits has a loop to keep.
            let cancelled_by_shutdown = !finished
                && Box::pin(wait(
                    &mut relay,
                    &mut events,
                    &mut outcome,
                    outbound.as_deref(),
                    ct,
                    shutdown,
                ))
                .await;
            let (result, mut error) = outcome.into_parts();
            drop(events);
            while let Some(out) = try_recv(outbound.as_deref()) {
                relay.send(out.tool.as_deref(), &out.event).await;
            }
            drop(relay);
            if let Some(outbound) = outbound {
                OutboundQueue::recycle(outbound);
            }

            // A run that stopped at a question ends with the question, whatever
            // the body made of it.
            if let Some(round) = round.filter(|round| round.replay.is_pending()) {
                return round
                    .input_required(&shared.sealer)
                    .map(Called::InputRequired);
            }
            if cancelled_by_shutdown {
                if let Some(aborted) = error.as_mut().filter(|e| e.code == ErrorCode::Aborted) {
                    aborted.message =
                        "The server is shutting down: the call was cancelled before it finished"
                            .to_owned();
                }
            }
            Ok(Called::Complete(match (error, result) {
                (Some(error), _)
                    if error.code == ErrorCode::ToolNotFound
                        && error.message == ToolError::not_found(&def.name).message =>
                {
                    error_result(&unknown_tool(name), ErrorPlacement::Structured)
                }
                (Some(error), _) if is_stateless && error.code == ErrorCode::InputUnavailable => {
                    match missing_capability(&error) {
                        Some(protocol_error) => return Err(protocol_error),
                        None => error_result(&error, placement(&def)),
                    }
                }
                (Some(error), _) => error_result(&error, placement(&def)),
                (None, Some(output)) => success_result(output),
                (None, None) => error_result(
                    &ToolError::new(ErrorCode::NoResult, "Tool produced no result"),
                    placement(&def),
                ),
            }))
        }
    }
}

/// Where an error result of `def` puts its error object: asked only when
/// a call fails (it reads the output schema).
fn placement(def: &ToolDefinition) -> ErrorPlacement {
    if tools::advertises_output_schema(def) {
        ErrorPlacement::Meta
    } else {
        ErrorPlacement::Structured
    }
}

/// The next queued notification, if there is a queue.
fn try_recv(outbound: Option<&OutboundQueue>) -> Option<Outbound> {
    outbound.and_then(OutboundQueue::try_recv)
}

/// The next queued notification; never, without a queue.
async fn recv(outbound: Option<&OutboundQueue>) -> Outbound {
    match outbound {
        Some(outbound) => outbound.recv().await,
        None => std::future::pending().await,
    }
}

/// What `McpServer::call` borrows of the request's context.
struct Lent<'a> {
    /// A 2025 session's request's `_meta` (a stateless request's is in
    /// `mcp`).
    session_meta: &'a RequestMetaObject,
    /// The token rmcp made for this handler alone (a child of the
    /// request's, which a client's cancellation fires): the call's own, so
    /// no child of it is made per call. Moved behind one `Arc` shared with
    /// the tool's context, and back: a token's own clone and drop take its
    /// lock.
    ct: &'a Arc<CancellationToken>,
    /// What the tool sees of the request, shared with its context.
    mcp: &'a Arc<McpRequestContext>,
    /// The answer the call's notifications go into, when it runs in its
    /// HTTP request (else they go through the peer).
    answer: Option<&'a AnswerStream>,
}

/// What a `tools/call` came to: a result, or questions for the client
/// (2026: `input_required`).
enum Called {
    Complete(rmcp::model::CallToolResult),
    InputRequired(rmcp::model::InputRequiredResult),
}

/// What a call's events amount to: its outcome event, a result or an
/// error (the stream ends with exactly one, last).
#[derive(Default)]
struct Outcome(Option<ToolEvent>);

impl Outcome {
    /// Keeps an outcome event; hands back an event to relay.
    fn take(&mut self, event: ToolEvent) -> Option<ToolEvent> {
        match event {
            ToolEvent::Result { .. } | ToolEvent::Error { .. } => {
                self.0 = Some(event);
                None
            }
            event => Some(event),
        }
    }

    /// The result or the error the call ended with (neither, for a stream
    /// that ended without an outcome).
    fn into_parts(self) -> (Option<ToolOutput<Value>>, Option<ToolError>) {
        match self.0.and_then(ToolEvent::into_outcome) {
            Some(Ok(output)) => (Some(output), None),
            Some(Err(error)) => (None, Some(error)),
            None => (None, None),
        }
    }
}

/// Sends one call's notifications while its client is there. Once the
/// connection is gone (end of stdin, or the HTTP response dropped) nothing
/// more is sent, and a send already waiting is abandoned: rmcp stops
/// servicing sends when its input ends, so awaiting one would hold the
/// call — and its cancellation — until rmcp's own drain timeout. The
/// notifier is made on the first event to relay: most calls have none.
struct Relay<'a> {
    /// Boxed: made only by a call that sends.
    notifier: Option<Box<Notifier>>,
    peer: &'a Peer<RoleServer>,
    answer: Option<&'a AnswerStream>,
    progress_token: Option<ProgressToken>,
    level: Arc<LevelFilter>,
    def: &'a ToolDefinition,
    closed: &'a CancellationToken,
    disconnected: Option<&'a CancellationToken>,
}

impl Relay<'_> {
    fn is_gone(&self) -> bool {
        self.closed.is_cancelled()
            || self
                .disconnected
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// Resolves when the connection is gone.
    async fn gone(&self) {
        gone(self.closed, self.disconnected).await
    }

    /// Sends one event's notification, unless the client is gone. Boxed:
    /// most calls send nothing, and a send's state inline would size every
    /// call's (boxed) state.
    fn send<'s>(
        &'s mut self,
        tool: Option<&'s str>,
        event: &'s ToolEvent,
    ) -> futures::future::BoxFuture<'s, ()> {
        Box::pin(self.send_now(tool, event))
    }

    async fn send_now(&mut self, tool: Option<&str>, event: &ToolEvent) {
        if self.is_gone() {
            return;
        }
        let Relay {
            notifier,
            peer,
            answer,
            progress_token,
            level,
            def,
            closed,
            disconnected,
        } = self;
        let notifier = notifier.get_or_insert_with(|| {
            Box::new(Notifier::new(
                match answer {
                    Some(answer) => Delivery::Answer((*answer).clone()),
                    None => Delivery::Peer((*peer).clone()),
                },
                progress_token.take(),
                Arc::clone(level),
                match tools::mcp_name(def) {
                    mcp_name if mcp_name == def.name => Arc::clone(def.name_arc()),
                    mcp_name => Arc::from(mcp_name),
                },
            ))
        });
        let send = notifier.send(tool, event);
        tokio::select! {
            biased;
            _ = gone(closed, *disconnected) => {}
            _ = send => {}
        }
    }
}

/// The rest of a call that waits: its events and queued notifications
/// relayed as they come, until the outcome; the call cancelled when its
/// client goes away or the server shuts down. `true` when the shutdown
/// cancelled it.
async fn wait(
    relay: &mut Relay<'_>,
    events: &mut crate::ToolEventStream,
    outcome: &mut Outcome,
    outbound: Option<&OutboundQueue>,
    token: &CancellationToken,
    shutdown: &CancellationToken,
) -> bool {
    let mut cancelled_by_shutdown = false;
    loop {
        tokio::select! {
            biased;
            _ = relay.gone(), if !token.is_cancelled() => token.cancel(),
            _ = shutdown.cancelled(), if !token.is_cancelled() => {
                cancelled_by_shutdown = true;
                token.cancel();
            }
            out = recv(outbound) => relay.send(out.tool.as_deref(), &out.event).await,
            event = events.next() => match event {
                None => return cancelled_by_shutdown,
                Some(event) => if let Some(event) = outcome.take(event) {
                    relay.send(None, &event).await;
                },
            },
        }
    }
}

async fn gone(closed: &CancellationToken, disconnected: Option<&CancellationToken>) {
    match disconnected {
        Some(disconnected) => tokio::select! {
            _ = closed.cancelled() => {},
            _ = disconnected.cancelled() => {},
        },
        None => closed.cancelled().await,
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        self.info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // Sessions, logging and server → client requests are part of the
        // 2025 protocol revisions this adapter serves.
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let request_state = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<RequestState>());
        let base = self.base_context(request_state, context.ct.child_token());
        let telemetry = ServerSpan::start("tools/list", None, &context);
        let listed = self
            .list_in(&base)
            .instrument(telemetry.span().clone())
            .await;
        telemetry.finish(None);
        Ok(listed)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let shared = &self.shared;
        tools::resolve(&shared.registry, name, &shared.options, shared.policy)
            .map(|def| tools::project_tool(&def))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _permit = self.shared.inflight.admit()?;
        let shared = &self.shared;
        let refused = tasks::required_task(
            &shared.registry,
            &shared.options,
            shared.policy,
            &request.name,
            &context,
        );
        if let Some(refused) = refused {
            return refused.map(Into::into);
        }
        let telemetry = ServerSpan::start("tools/call", Some(&request.name), &context);
        let span = telemetry.span().clone();
        let http = context.extensions.remove::<http::request::Parts>();
        let answer = context.extensions.remove::<AnswerStream>();
        let progress_token = context.meta.get_progress_token();
        // A stateless-era request carries its own protocol version, client
        // capabilities and log level; a 2025 session's are the session's.
        // Moved, not cloned: a deep copy of the map was a fifth of a
        // stateless call's instructions.
        let stateless = context
            .meta
            .protocol_version()
            .is_some_and(|version| !version.has_initialize())
            .then(|| std::mem::take(&mut context.meta));
        // What the tool sees of the request, shared with its context. The
        // peer is moved in, not cloned (a clone is some twenty reference
        // count operations), and handed back with the rest at the end.
        let mcp = Arc::new(McpRequestContext {
            peer: context.peer,
            request_id: context.id.clone(),
            progress_token,
            http,
            stateless,
        });
        let ct = Arc::new(context.ct);
        let lent = Lent {
            session_meta: &context.meta,
            ct: &ct,
            mcp: &mcp,
            answer: answer.as_ref(),
        };
        // Boxed: rmcp moves its request future (sized by its largest
        // handler) into a task several times per request; inline, this
        // call's state made that ~80k instructions of memcpy per HTTP call.
        let called = Box::pin(self.call(request, lent)).instrument(span).await;
        // Back where rmcp keeps them (`as_task` reads the client's
        // capabilities and the HTTP head there). The tool's context is gone
        // with its events unless a job kept it: then they are copied.
        let McpRequestContext {
            peer,
            http,
            stateless,
            ..
        } = Arc::try_unwrap(mcp).unwrap_or_else(|mcp| (*mcp).clone());
        context.peer = peer;
        context.ct = Arc::try_unwrap(ct).unwrap_or_else(|ct| (*ct).clone());
        if let Some(stateless) = stateless {
            context.meta = stateless;
        }
        if let Some(parts) = http {
            context.extensions.insert(parts);
        }
        let result = match called {
            // Questions for the client: the operation ends without an error.
            Ok(Called::InputRequired(questions)) => {
                telemetry.finish_input_required();
                return Ok(CallToolResponse::InputRequired(questions));
            }
            Ok(Called::Complete(result)) => Ok(result),
            Err(error) => Err(error),
        };
        telemetry.finish_call(&result);
        let result = result?;
        let owner = || self.owner(&context);
        Ok(
            match tasks::as_task(&shared.registry, &result, &context, owner).await {
                Some(task) => CallToolResponse::Task(task),
                None => result.into(),
            },
        )
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let runner = jobs::runner(&self.shared.registry)
            .ok_or_else(|| tasks::unknown_task(&request.task_id))?;
        let owner = self.owner(&context);
        let record = tasks::find(&*runner, owner.as_deref(), &request.task_id).await?;
        let placement = match self.shared.registry.get(&record.tool) {
            Some(def) if tools::advertises_output_schema(&def) => ErrorPlacement::Meta,
            _ => ErrorPlacement::Structured,
        };
        Ok(tasks::detailed(record, &*runner, placement))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let runner = jobs::runner(&self.shared.registry)
            .ok_or_else(|| tasks::unknown_task(&request.task_id))?;
        let owner = self.owner(&context);
        let answers = request.input_responses.into_iter().collect();
        tasks::update(&*runner, owner.as_deref(), &request.task_id, answers).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let runner = jobs::runner(&self.shared.registry)
            .ok_or_else(|| tasks::unknown_task(&request.task_id))?;
        let owner = self.owner(&context);
        tasks::cancel(&*runner, owner.as_deref(), &request.task_id).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp intersects this with what the client asked for and what
        // `get_info` advertises. Resource subscriptions are to URIs this
        // server serves (a read may still be refused to the caller; an
        // update says only that the URI changed).
        let registry = &self.shared.registry;
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| registry.resolve_resource(uri).is_some())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let accepted = context.accepted().clone();
        let tools = accepted.tools_list_changed == Some(true);
        let prompts = accepted.prompts_list_changed == Some(true);
        let resources = accepted.resources_list_changed == Some(true);
        let watched = accepted.resource_subscriptions.unwrap_or_default();
        if !tools && !prompts && !resources && watched.is_empty() {
            context.cancelled().await;
            return Ok(());
        }
        let registry = &self.shared.registry;
        let mut changes = registry.catalog_changes();
        let mut primitive_changes = registry.primitive_changes();
        let mut updates = registry.resource_updates();
        let sink = context.sink();
        loop {
            // A send that fails means the stream is gone; the request ends
            // with it.
            let sent = tokio::select! {
                _ = context.cancelled() => return Ok(()),
                _ = self.closed.cancelled() => return Ok(()),
                changed = changes.changed(), if tools => match changed {
                    None => return Ok(()),
                    Some(_) => sink.notify_tool_list_changed().await.is_ok(),
                },
                changed = primitive_changes.changed(), if prompts || resources => match changed {
                    None => return Ok(()),
                    Some(_) => {
                        (!resources || sink.notify_resource_list_changed().await.is_ok())
                            && (!prompts || sink.notify_prompt_list_changed().await.is_ok())
                    }
                },
                uri = updates.next(), if !watched.is_empty() => match uri {
                    None => return Ok(()),
                    Some(uri) if watched.contains(&uri) => sink.notify_resource_updated(uri).await.is_ok(),
                    Some(_) => true,
                },
            };
            if !sent {
                return Ok(());
            }
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        let base = self.request_base(&context);
        let defs = self.shared.registry.list_resources_for(&base).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list_resources(defs, cursor, base.is_authenticated())
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        let base = self.request_base(&context);
        let defs = self.shared.registry.list_resources_for(&base).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list_templates(defs, cursor, base.is_authenticated())
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        let telemetry = ServerSpan::start("resources/read", None, &context);
        let span = telemetry.span().clone();
        let read = self
            .read_resource_in(request, &context)
            .instrument(span)
            .await;
        telemetry.finish(read.as_ref().err().map(|_| "resource_error"));
        read
    }

    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Only what the caller may read can be watched: a hidden resource
        // is as missing here as on a read.
        let base = self.request_base(&context);
        let visible = match self.shared.registry.resolve_resource(&request.uri) {
            Some((def, _)) => self
                .shared
                .registry
                .list_resources_for(&base)
                .await
                .iter()
                .any(|d| d.uri() == def.uri()),
            None => false,
        };
        if !visible {
            let missing = ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("Resource not found: {}", request.uri),
            )
            .with_details(serde_json::json!({ "uri": request.uri }));
            return Err(resources::error_data(&missing, is_stateless(&context)));
        }
        self.subscriptions.add(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        let base = self.request_base(&context);
        let defs = self.shared.registry.list_prompts_for(&base).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list_prompts(defs, cursor, base.is_authenticated())
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        let telemetry = ServerSpan::start("prompts/get", Some(&request.name), &context);
        let span = telemetry.span().clone();
        let got = self.get_prompt_in(request, &context).instrument(span).await;
        telemetry.finish(got.as_ref().err().map(|_| "prompt_error"));
        got
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        let (target, asked) = resources::completion_request(&request)?;
        let base = self.request_base(&context);
        match self.shared.registry.complete(&target, asked, base).await {
            Ok(completion) => Ok(resources::complete_result(completion)),
            Err(error) => Err(resources::error_data(&error, is_stateless(&context))),
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A 2025 session hears of catalog changes until it closes.
        let mut changes = self.shared.registry.catalog_changes();
        let closed = self.closed.clone();
        let peer = context.peer;
        self.follow_primitives(peer.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = closed.cancelled() => return,
                    changed = changes.changed() => {
                        if changed.is_none() || peer.notify_tool_list_changed().await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level.set(&request.level);
        Ok(())
    }
}

/// Resources, prompts and completion: each request starts from the same
/// base context as a tool call (so what is listed is what is readable),
/// and a read or get may ask its client the way a tool call does.
impl McpServer {
    fn request_base(&self, context: &RequestContext<RoleServer>) -> ToolContext {
        let request_state = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<RequestState>());
        self.base_context(request_state, context.ct.child_token())
    }

    /// `base`, able to ask the client: a stateless-era request by replay
    /// (a round bound to `binding` and `arguments`), a 2025 session on
    /// the session.
    #[allow(clippy::too_many_arguments)]
    async fn with_asking(
        &self,
        base: ToolContext,
        context: &RequestContext<RoleServer>,
        stateless: bool,
        binding: impl FnOnce() -> (String, Value),
        request_state: Option<&str>,
        input_responses: Option<rmcp::model::InputResponses>,
    ) -> Result<(ToolContext, Option<Round>), ErrorData> {
        if stateless {
            let kinds = kinds_in_meta(&context.meta);
            if request_state.is_none() && kinds.is_empty() {
                return Ok((base, None));
            }
            let caller = jobs::owner_of(base.auth());
            let (binding, arguments) = binding();
            let round = Round::open(
                &self.shared.sealer,
                &binding,
                &arguments,
                caller.as_deref().unwrap_or("anonymous"),
                kinds,
                request_state,
                input_responses,
            )
            .await?;
            let base = base.with_asker(Arc::clone(&round.replay) as Arc<dyn Asker>);
            return Ok((base, Some(round)));
        }
        let info = context.peer.peer_info();
        let kinds = declared_kinds(info.as_ref().map(|info| &info.capabilities));
        if kinds.is_empty() {
            return Ok((base, None));
        }
        let asker = SessionAsker::new(context.peer.clone(), kinds, self.shared.options.ask_timeout);
        Ok((base.with_asker(Arc::new(asker)), None))
    }

    /// One read or get that may ask its client: `run` gets the context
    /// (asking by replay in 2026, on the session in 2025); a run that
    /// stopped at a question answers `input_required`, a failed one the
    /// era's error, a finished one what `answer` makes of it (told whether
    /// the caller is authenticated).
    async fn asking_request<T, R, Fut>(
        &self,
        context: &RequestContext<RoleServer>,
        binding: impl FnOnce() -> (String, Value),
        asked: (Option<String>, Option<rmcp::model::InputResponses>),
        run: impl FnOnce(ToolContext) -> Fut,
        answer: impl FnOnce(T, bool) -> Result<R, ErrorData>,
    ) -> Result<R, ErrorData>
    where
        Fut: std::future::Future<Output = Result<T, ToolError>>,
        R: From<rmcp::model::InputRequiredResult>,
    {
        let stateless = is_stateless(context);
        let base = self.request_base(context);
        let authenticated = base.is_authenticated();
        let (request_state, input_responses) = asked;
        let (ctx, round) = self
            .with_asking(
                base,
                context,
                stateless,
                binding,
                request_state.as_deref(),
                input_responses,
            )
            .await?;
        let outcome = run(ctx).await;
        if let Some(round) = round.filter(|round| round.replay.is_pending()) {
            return round.input_required(&self.shared.sealer).map(Into::into);
        }
        match outcome {
            Ok(value) => answer(value, authenticated),
            Err(error) => Err(protocol_error(&error, stateless)),
        }
    }

    async fn read_resource_in(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let registry = &self.shared.registry;
        self.asking_request(
            context,
            || {
                (
                    format!("resources/read {uri}"),
                    serde_json::json!({ "uri": uri }),
                )
            },
            (request.request_state, request.input_responses),
            |ctx| registry.read_resource(&uri, ctx),
            |contents, authenticated| {
                resources::read_result(contents, authenticated).map(Into::into)
            },
        )
        .await
    }

    async fn get_prompt_in(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        let name = request.name;
        let arguments = request.arguments.unwrap_or_default();
        let bound = Value::Object(arguments.clone());
        let registry = &self.shared.registry;
        self.asking_request(
            context,
            || (format!("prompts/get {name}"), bound),
            (request.request_state, request.input_responses),
            |ctx| registry.get_prompt(&name, arguments, ctx),
            |result, _| resources::prompt_result(result).map(Into::into),
        )
        .await
    }

    /// Notifies a 2025 session of resource updates it subscribed to and of
    /// changes to the resource and prompt lists, until it closes.
    fn follow_primitives(&self, peer: Peer<RoleServer>) {
        let registry = &self.shared.registry;
        let mut updates = registry.resource_updates();
        let mut changes = registry.primitive_changes();
        let closed = self.closed.clone();
        let subscriptions = Arc::clone(&self.subscriptions);
        let (has_resources, has_prompts) = (
            !registry.resources().is_empty(),
            !registry.prompts().is_empty(),
        );
        tokio::spawn(async move {
            loop {
                let sent = tokio::select! {
                    _ = closed.cancelled() => return,
                    uri = updates.next() => match uri {
                        None => return,
                        Some(uri) if subscriptions.contains(&uri) => peer
                            .notify_resource_updated(
                                rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                            )
                            .await
                            .is_ok(),
                        Some(_) => true,
                    },
                    changed = changes.changed() => match changed {
                        None => return,
                        Some(_) => {
                            (!has_resources || peer.notify_resource_list_changed().await.is_ok())
                                && (!has_prompts || peer.notify_prompt_list_changed().await.is_ok())
                        }
                    },
                };
                if !sent {
                    return;
                }
            }
        });
    }
}

/// Whether a request is of the stateless era (its `_meta` names a version
/// without `initialize`).
fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .meta
        .protocol_version()
        .is_some_and(|version| !version.has_initialize())
}

/// A failed read or get: the missing-capability error of a stateless
/// request that cannot ask, else the era's error for the code.
fn protocol_error(error: &ToolError, stateless: bool) -> ErrorData {
    if stateless && error.code == ErrorCode::InputUnavailable {
        if let Some(protocol_error) = missing_capability(error) {
            return protocol_error;
        }
    }
    resources::error_data(error, stateless)
}
