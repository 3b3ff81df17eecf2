//! [`McpServer`]: one server over a [`ToolRegistry`] — what its sessions
//! share (the registry, the options, the running calls, the cached
//! listings, the `requestState` sealer), what each session keeps (its log
//! level, its close signal, its subscriptions), and what every request
//! starts from: the listing, the base context, the server's info.
#![allow(deprecated)] // rmcp marks logging (SEP-2577) deprecated; 2025-era clients use it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CacheScope, Implementation, ListToolsResult, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::inflight::{InFlight, SERVER_REFUSED};
use super::listing::Listings;
use super::notify::LevelFilter;
use super::request_state::{RequestStateKeys, Sealer};
use super::resources::{self, Subscriptions};
use super::sessions::OpenSessions;
use super::tools;
use crate::adapters::http::session_table::{Held, SessionTable};
use crate::adapters::mcp::http::security::RequestState;
use crate::adapters::mcp::{McpServerOptions, WriteToolPolicy};
use crate::context::ToolContext;
use crate::jobs;
use crate::registry::ToolRegistry;
use crate::security::AuthContext;

/// A listen stream's table entry taken when its request arrived (see
/// [`McpServer::hold_listen_stream`]), for its handler to take over; in
/// the request head's extensions, which must be `Clone`.
#[derive(Clone)]
struct HeldListen(Arc<std::sync::Mutex<Option<Held<u64>>>>);

/// What every session of one server shares.
pub(super) struct Shared {
    pub(super) registry: ToolRegistry,
    pub(super) options: McpServerOptions,
    pub(super) policy: WriteToolPolicy,
    pub(super) inflight: InFlight,
    pub(super) listings: Listings,
    /// Seals and opens `requestState` (2026 calls that ask their client).
    pub(super) sealer: Sealer,
    /// The server's info for each combination of what it offers (tasks,
    /// resources, prompts, skills, apps), made when first asked: rmcp asks
    /// for it on every directly served request.
    infos: [OnceLock<ServerConfig>; 32],
    /// The open `subscriptions/listen` streams under their cap.
    listen_streams: Arc<SessionTable<u64>>,
    next_listen: AtomicU64,
    /// The 2025 sessions over HTTP whose calls may run in their requests.
    pub(super) open_sessions: Arc<OpenSessions>,
}

/// An MCP server over a [`ToolRegistry`]: one value per session (clone it
/// with [`McpServer::new_session`] for each new connection).
///
/// Use it with any rmcp transport (`rmcp::ServiceExt::serve`); the
/// adapter's [`serve_stdio`](crate::adapters::mcp::serve_stdio) and
/// [`mcp_router`](crate::adapters::mcp::mcp_router) do that for you.
#[derive(Clone)]
pub struct McpServer {
    pub(super) shared: Arc<Shared>,
    pub(super) level: Arc<LevelFilter>,
    pub(super) closed: CancellationToken,
    /// Cancels `closed` when the last clone of this session is dropped:
    /// over HTTP rmcp drops the session's server when the session ends
    /// (DELETE, idle timeout, eviction), and nothing else would stop the
    /// tasks that follow its catalog and resources until `closed`.
    _close_on_drop: Arc<DropGuard>,
    /// The resource URIs this (2025) session subscribed to.
    pub(super) subscriptions: Arc<Subscriptions>,
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
        let listen_streams = SessionTable::new(options.listen_limits, "listen stream");
        let closed = CancellationToken::new();
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
                listen_streams,
                next_listen: AtomicU64::new(0),
                open_sessions: Arc::default(),
            }),
            level,
            _close_on_drop: Arc::new(closed.clone().drop_guard()),
            closed,
            subscriptions: Arc::default(),
        }
    }

    /// A fresh session over the same registry and options: its own log
    /// level and its own close signal.
    pub fn new_session(&self) -> Self {
        let closed = CancellationToken::new();
        McpServer {
            shared: Arc::clone(&self.shared),
            level: Arc::new(LevelFilter::new(self.shared.options.default_log_level)),
            _close_on_drop: Arc::new(closed.clone().drop_guard()),
            closed,
            subscriptions: Arc::default(),
        }
    }

    /// This session's server without its close guard: a clone that does
    /// not keep the session open (see `sessions`).
    pub(super) fn view(&self) -> Self {
        McpServer {
            shared: Arc::clone(&self.shared),
            level: Arc::clone(&self.level),
            closed: self.closed.clone(),
            _close_on_drop: Arc::new(CancellationToken::new().drop_guard()),
            subscriptions: Arc::clone(&self.subscriptions),
        }
    }

    /// The 2025 sessions whose calls may run in their HTTP requests.
    pub(crate) fn open_sessions(&self) -> &Arc<OpenSessions> {
        &self.shared.open_sessions
    }

    /// Cancelled when the session's connection closes, or when the last
    /// clone of this session's server is dropped (over HTTP: the session
    /// ended); cancelling it cancels the session's running calls.
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

    /// The registry name of the tool a session calls as `name` over MCP;
    /// `None` for a tool this server does not serve.
    #[cfg(feature = "oauth")]
    pub(crate) fn tool_name(&self, name: &str) -> Option<String> {
        let shared = &self.shared;
        tools::resolve(&shared.registry, name, &shared.options, shared.policy)
            .map(|def| def.name.clone())
    }

    /// The scopes calling `tool` needs that `auth`'s token lacks: the
    /// tool's own (`#[tool(scopes(..))]`, the registry's rules; none for a
    /// tool the caller may not discover) and the resource server's.
    #[cfg(feature = "oauth")]
    pub(crate) async fn missing_scopes(
        &self,
        resource: &crate::adapters::http::oauth::ProtectedResource,
        auth: &AuthContext,
        tool: &str,
    ) -> Option<Vec<String>> {
        let mut needed = self
            .shared
            .registry
            .insufficient_scope(auth, tool)
            .await
            .unwrap_or_default();
        for scope in resource
            .missing_scopes(auth.principal(), tool)
            .unwrap_or_default()
        {
            if !needed.contains(&scope) {
                needed.push(scope);
            }
        }
        (!needed.is_empty()).then_some(needed)
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
    pub(super) async fn list_in(&self, ctx: &ToolContext) -> ListToolsResult {
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
    pub(super) fn base_context(
        &self,
        request_state: Option<&RequestState>,
        token: CancellationToken,
    ) -> ToolContext {
        self.base_context_shared(request_state, Arc::new(token))
    }

    /// [`base_context`](Self::base_context) with a token the caller keeps
    /// a handle to.
    pub(super) fn base_context_shared(
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
    /// Enters a `subscriptions/listen` stream into the server's table,
    /// making room by its rule; refused (`-32000`, "Server busy: …") when
    /// every stream that could make room is busy.
    ///
    /// Over HTTP the entry was usually taken when the request arrived
    /// ([`McpServer::hold_listen_stream`]): then it is that one.
    pub(super) fn start_listening(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Held<u64>, rmcp::ErrorData> {
        let parts = context.extensions.get::<http::request::Parts>();
        let held_early = parts
            .and_then(|parts| parts.extensions.get::<HeldListen>())
            .and_then(|held| held.0.lock().unwrap_or_else(|p| p.into_inner()).take());
        if let Some(held) = held_early {
            return Ok(held);
        }
        self.listen_entry(parts).map_err(|refusal| {
            rmcp::ErrorData::new(
                SERVER_REFUSED,
                refusal.message("listen streams"),
                Some(serde_json::json!({ "code": "BUSY" })),
            )
        })
    }

    /// Takes the listen-stream table entry of the `subscriptions/listen`
    /// request with head `parts` as it arrives, before rmcp acknowledges
    /// the subscription (it does so before the handler runs): a client
    /// that opens its next stream once it saw the acknowledgement then
    /// finds this one in the table, so eviction follows the order the
    /// streams were opened in. A refusal is left to the handler, which
    /// answers it as before.
    pub(crate) fn hold_listen_stream(&self, parts: &mut http::request::Parts) {
        if let Ok(held) = self.listen_entry(Some(parts)) {
            parts
                .extensions
                .insert(HeldListen(Arc::new(std::sync::Mutex::new(Some(held)))));
        }
    }

    fn listen_entry(
        &self,
        parts: Option<&http::request::Parts>,
    ) -> Result<Held<u64>, crate::adapters::http::session_table::Refusal> {
        let principal = parts
            .and_then(|parts| parts.extensions.get::<RequestState>())
            .and_then(|state| state.auth.as_ref())
            .map(|auth| auth.security_context_key().to_owned());
        let key = self.shared.next_listen.fetch_add(1, Ordering::Relaxed);
        self.shared.listen_streams.hold(key, principal)
    }

    pub(super) fn owner(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        let request_state = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<RequestState>());
        let base = self.base_context(request_state, CancellationToken::new());
        jobs::owner_of(base.auth())
    }

    pub(super) fn info(&self) -> ServerConfig {
        let registry = &self.shared.registry;
        // Detached tools are offered as tasks when there is a job runner.
        let tasks = jobs::runner(registry).is_some();
        let all_resources = registry.resources();
        let (resources, prompts) = (!all_resources.is_empty(), !registry.prompts().is_empty());
        let skills = registry.has_skills();
        // MCP Apps: declared when there is an app to render.
        let apps = all_resources
            .iter()
            .any(|def| def.mime_type() == Some(crate::app::MIME_TYPE));
        let offers = usize::from(tasks)
            | usize::from(resources) << 1
            | usize::from(prompts) << 2
            | usize::from(skills) << 3
            | usize::from(apps) << 4;
        self.shared.infos[offers]
            .get_or_init(|| self.make_info(tasks, resources, prompts, skills, apps))
            .clone()
    }

    fn make_info(
        &self,
        tasks: bool,
        resources: bool,
        prompts: bool,
        skills: bool,
        apps: bool,
    ) -> ServerConfig {
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
        if skills {
            super::skills::declare(&mut capabilities);
        }
        if apps {
            super::apps::declare(&mut capabilities);
        }
        let mut info = ServerConfig::new(capabilities);
        info.server_info = implementation;
        info.instructions = options.instructions.clone();
        info
    }
}
