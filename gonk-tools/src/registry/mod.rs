//! [`ToolRegistry`]: the catalog of tools — registration, source catalogs,
//! lookup and composition of registries — beside its resources and prompts
//! ([`primitives`](self#resources-and-prompts)) and its change
//! notifications, shared between processes ([`ToolRegistry::share_changes`]).
//!
//! # Resources and prompts
//!
//! MCP's other two primitives are registered on the same registry and run
//! through the same dispatch: [`ToolRegistry::register_resource`],
//! [`ToolRegistry::register_prompt`], and the read, get and complete calls.

mod app_links;
mod primitives;
mod shared;

use std::any::{Any, TypeId};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use indexmap::IndexMap;
use serde_json::Value;

use crate::context::{Dispatcher, ToolContext};
use crate::definition::{validate_tool_name, ToolDefinition};
use crate::event::ToolEventStream;
use crate::metrics::{MetricsSink, NoopMetrics};
use crate::security::SecurityOptions;
use crate::state::StateMap;

pub use self::primitives::{CompletionTarget, PrimitiveChanges, ResourceNotifier, ResourceUpdates};

/// Why a registration (or a registry operation) failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name breaks the naming rule.
    #[error("Invalid tool name: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong, and the rule.
        reason: String,
    },
    /// A tool of that name exists and overwrite was not asked for.
    #[error("Tool already registered: {0}")]
    Duplicate(String),
    /// A skill of that name is registered already (or is twice among
    /// those registered together).
    #[error("Skill already registered: {0}; skill names must be unique in a registry")]
    DuplicateSkill(String),
    /// The name belongs to a source catalog; replace that source instead.
    #[error("Tool {name} is owned by a source catalog ({source_id}); change it with replace_source on that catalog")]
    OwnedBySource {
        /// The name.
        name: String,
        /// The source that owns it.
        source_id: String,
    },
    /// A source catalog claims a name another source catalog owns; the
    /// message names both sides.
    #[error("Source catalog {source_id} conflicts with source {owner}: {name}")]
    SourcesConflict {
        /// The source claiming the name.
        source_id: String,
        /// The source that owns it.
        owner: String,
        /// The clashing name.
        name: String,
    },
    /// A source catalog would shadow a locally registered tool.
    #[error("Source catalog {source_id} conflicts with registered tool: {name}")]
    SourceConflict {
        /// The source being replaced.
        source_id: String,
        /// The clashing name.
        name: String,
    },
    /// The definition has no handler.
    #[error("Tool {0} has no handler; attach one with .handler(..) before registering")]
    MissingHandler(String),
    /// The definition has no description.
    #[error("Tool {0} has no description; add a doc comment or .description(..)")]
    MissingDescription(String),
    /// A schema does not compile.
    #[error("Tool {name} has an invalid schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// The compiler's message.
        reason: String,
    },
    /// An MCP parameter header the tool declares (or an `x-mcp-header` in
    /// its input schema) breaks MCP's rules; see
    /// [`ToolDefinition::check_mcp_headers`].
    #[error("Tool {name} cannot send input property `{property}` as an MCP header: {reason}")]
    InvalidMcpHeader {
        /// The tool.
        name: String,
        /// The input property (or the header, when no property has it).
        property: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// A scope the tool requires (declared, or added by a
    /// [scope rule](ToolRegistryBuilder::scopes_for)) breaks RFC 6749's
    /// scope rule.
    #[error("Tool {name} requires an invalid OAuth scope: {reason}")]
    InvalidScope {
        /// The tool.
        name: String,
        /// The scope as given.
        scope: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// The handler extracts state the registry does not hold.
    #[error("Tool {name} needs application state `{type_name}`; provide it with ToolRegistry::builder().state(..) or insert_state(..) before registering")]
    MissingState {
        /// The tool.
        name: String,
        /// The state type.
        type_name: String,
    },
    /// An operation named a tool that is not registered.
    #[error("Tool not in registry: {0}")]
    NotFound(String),
    /// A resource's URI template is malformed, or a completer names a
    /// variable the template does not have.
    #[error("Resource {uri} cannot be registered: {reason}")]
    InvalidResource {
        /// The URI or template as written.
        uri: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// A tool links an MCP App it cannot have: its `ui://` URI is malformed,
    /// its UI visibility is empty, or the registry holds no app resource at
    /// that URI (register the [`AppResource`](crate::app::AppResource)
    /// first).
    #[error("Tool {name} cannot link its app: {reason}")]
    InvalidApp {
        /// The tool.
        name: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// A prompt's completer names an argument the prompt does not have.
    #[error("Prompt {name} cannot be registered: {reason}")]
    InvalidPrompt {
        /// The prompt.
        name: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// A source catalog id is empty.
    #[error("Source catalog id must not be empty")]
    EmptySourceId,
    /// A source catalog lists the same name twice.
    #[error("Duplicate tool in source catalog {source_id}: {name}")]
    DuplicateInSource {
        /// The source being replaced.
        source_id: String,
        /// The repeated name.
        name: String,
    },
}

/// Options for [`ToolRegistry::register_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegisterOptions {
    /// Replace a local tool of the same name instead of failing.
    pub overwrite: bool,
}

/// Tools by name. Every call looks its tool up here, so the hasher is a
/// fast seeded one (foldhash) rather than SipHash: names are chosen by the
/// host that registers them, and a look-up of a caller's name only reads.
type ByName<V> = IndexMap<String, V, foldhash::fast::RandomState>;

#[derive(Clone, Default)]
pub(crate) struct Catalog {
    local: ByName<ToolDefinition>,
    sources: ByName<ByName<ToolDefinition>>,
    /// Source id → the tool that answers for any name under its prefix
    /// while the source has no catalog ([`ToolRegistry::hold_source`]).
    held: ByName<ToolDefinition>,
}

impl Catalog {
    pub(crate) fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.local
            .get(name)
            .or_else(|| self.sources.values().find_map(|s| s.get(name)))
            .or_else(|| self.held_for(name))
    }

    /// The placeholder of the held source whose prefix `name` is under.
    fn held_for(&self, name: &str) -> Option<&ToolDefinition> {
        if self.held.is_empty() {
            return None;
        }
        self.held.iter().find_map(|(id, placeholder)| {
            name.strip_prefix(id.as_str())
                .and_then(|rest| rest.strip_prefix('.'))
                .filter(|rest| !rest.is_empty())
                .map(|_| placeholder)
        })
    }

    fn source_of(&self, name: &str) -> Option<&str> {
        self.sources
            .iter()
            .find(|(_, tools)| tools.contains_key(name))
            .map(|(id, _)| id.as_str())
    }

    /// Why source `source_id` cannot take `name`: a local tool has it, or
    /// another source owns it (both sources named in the error).
    fn claim_for_source(&self, source_id: &str, name: &str) -> Result<(), RegistryError> {
        if self.local.contains_key(name) {
            return Err(RegistryError::SourceConflict {
                source_id: source_id.to_owned(),
                name: name.to_owned(),
            });
        }
        match self.source_of(name) {
            Some(owner) if owner != source_id => Err(RegistryError::SourcesConflict {
                source_id: source_id.to_owned(),
                owner: owner.to_owned(),
                name: name.to_owned(),
            }),
            _ => Ok(()),
        }
    }

    fn list(&self) -> Vec<ToolDefinition> {
        self.local
            .values()
            .chain(self.sources.values().flat_map(|s| s.values()))
            .cloned()
            .collect()
    }
}

pub(crate) struct RegistryInner {
    pub(crate) catalog: RwLock<Catalog>,
    /// `None` when the sink wants no records (asked once, at build).
    pub(crate) metrics: Option<Arc<dyn MetricsSink>>,
    pub(crate) state: RwLock<StateMap>,
    pub(crate) security: Arc<SecurityOptions>,
    /// The timeout of tools that set none.
    pub(crate) default_timeout: Option<std::time::Duration>,
    /// The listing cache lifetime of tools that set none.
    pub(crate) default_cache_ttl: Option<std::time::Duration>,
    /// Bumped by every change of the catalog (see [`ToolRegistry::generation`]).
    pub(crate) generation: std::sync::atomic::AtomicU64,
    /// Tells [`CatalogChanges`] watchers the new generation.
    changes: tokio::sync::watch::Sender<u64>,
    /// Told every succeeded call ([`ToolRegistry::on_change`]); shared
    /// with the registries derived from this one.
    pub(crate) listeners: Arc<crate::changes::ChangeListeners>,
    /// Resources and prompts; shared with the registries derived from
    /// this one.
    pub(crate) primitives: Arc<primitives::Primitives>,
    /// The rate-limit gate's policy (`None`: no gate, no cost).
    pub(crate) rate_limits: Option<Arc<crate::rate_limit::RateLimits>>,
    /// Scopes assigned by policy to the tools registered here
    /// ([`ToolRegistryBuilder::scopes_for`]); shared with derived registries.
    pub(crate) scope_rules: Arc<[ScopeRule]>,
}

/// One [`ToolRegistryBuilder::scopes_for`] rule: the tools it picks and
/// the scopes they then require.
#[derive(Clone)]
pub(crate) struct ScopeRule {
    picks: Arc<crate::definition::ToolPredicate>,
    scopes: Arc<[String]>,
}

/// A watch on a registry's catalog, from [`ToolRegistry::catalog_changes`].
#[derive(Debug)]
pub struct CatalogChanges(tokio::sync::watch::Receiver<u64>);

impl CatalogChanges {
    /// Resolves at the next change of the catalog after the last one this
    /// watch saw (changes that happen together are seen once), with the
    /// registry's [`generation`](ToolRegistry::generation) then; `None`
    /// once the registry is gone.
    pub async fn changed(&mut self) -> Option<u64> {
        self.0.changed().await.ok()?;
        Some(*self.0.borrow_and_update())
    }
}

/// The tool catalog and the entry point of dispatch
/// ([`invoke`](ToolRegistry::invoke)).
///
/// Cheap to clone: clones share one catalog. Lookups take a read lock;
/// changes are validated completely before they take the write lock, so a
/// concurrent reader sees the catalog before or after a change, never half
/// of one.
#[derive(Clone)]
pub struct ToolRegistry {
    pub(crate) inner: Arc<RegistryInner>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish_non_exhaustive()
    }
}

impl ToolRegistry {
    /// This registry as the contexts of the calls it runs reach it.
    #[inline(always)]
    pub(crate) fn dispatcher(&self) -> Arc<dyn Dispatcher> {
        Arc::clone(&self.inner) as Arc<dyn Dispatcher>
    }
}

/// The registry is what a handler's context composes, reads state and
/// announces resource updates through.
impl Dispatcher for RegistryInner {
    fn invoke(self: Arc<Self>, name: &str, input: Value, ctx: ToolContext) -> ToolEventStream {
        ToolRegistry { inner: self }.invoke(name, input, ctx)
    }

    fn state(&self, type_id: TypeId) -> Option<Arc<dyn Any + Send + Sync>> {
        self.state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get_any(type_id)
    }

    fn notify_resource_updated(&self, uri: String) {
        self.primitives.resource_updated(uri);
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

impl ToolContext {
    /// The registry running this call (set by dispatch), for code built on
    /// the registry rather than on one call: a job runner launching on it,
    /// a meta-tool searching its catalog. A handler composes tools through
    /// [`invoke`](ToolContext::invoke) and [`call`](ToolContext::call), and
    /// reads application state through [`state`](ToolContext::state).
    pub fn registry(&self) -> Option<ToolRegistry> {
        let dispatcher = Arc::clone(self.dispatcher.as_ref()?);
        let inner = dispatcher.into_any().downcast::<RegistryInner>().ok()?;
        Some(ToolRegistry { inner })
    }
}

/// Configures a [`ToolRegistry`]: metrics sink, application state and
/// security options.
#[must_use = "call .build() to get the registry"]
pub struct ToolRegistryBuilder {
    metrics: Arc<dyn MetricsSink>,
    state: StateMap,
    security: SecurityOptions,
    default_timeout: Option<std::time::Duration>,
    default_cache_ttl: Option<std::time::Duration>,
    rate_limits: Option<Arc<crate::rate_limit::RateLimits>>,
    scope_rules: Vec<ScopeRule>,
}

impl ToolRegistryBuilder {
    /// Sends one record per invocation to `sink`. Its
    /// [`enabled`](MetricsSink::enabled) is asked once, here at build time;
    /// a sink that panics (there or when recording) loses records, never a
    /// call.
    pub fn metrics(mut self, sink: Arc<dyn MetricsSink>) -> Self {
        self.metrics = sink;
        self
    }

    /// Provides application state `T` to tools (`State<T>`).
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(Arc::new(value));
        self
    }

    /// Provides shared application state `T` to tools.
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.insert(value);
        self
    }

    /// How authenticated calls are secured: resource resolver, approval
    /// provider and mode, audit sink, mandatory audit, request ids and
    /// clock (see [`crate::security`]). Registries derived with
    /// [`merge`](ToolRegistry::merge), [`extract`](ToolRegistry::extract)
    /// and [`filter`](ToolRegistry::filter) keep them.
    pub fn security(mut self, options: SecurityOptions) -> Self {
        self.security = options;
        self
    }

    /// Stops any call of a tool without a timeout of its own
    /// ([`ToolBuilder::timeout`](crate::definition::ToolBuilder::timeout),
    /// `#[tool(timeout = "..")]`) after `limit`: its handler is dropped and
    /// the call ends with `TIMEOUT`. Without it, such calls run until they
    /// finish or are cancelled. Derived registries keep it.
    pub fn default_timeout(mut self, limit: std::time::Duration) -> Self {
        self.default_timeout = Some(limit);
        self
    }

    /// How long a client may keep a listing of this registry's tools
    /// (MCP's `ttlMs` on `tools/list`) when a listed tool sets no
    /// [`cache_ttl`](crate::definition::ToolBuilder::cache_ttl) of its own
    /// (`#[tool(cache_ttl = "..")]`). Without it, such tools ask clients
    /// not to keep the listing (zero). Derived registries keep it. See
    /// [`ToolRegistry::listing_cache_ttl`].
    pub fn default_cache_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.default_cache_ttl = Some(ttl);
        self
    }

    /// Counts every root call against `limits`' budgets (per principal,
    /// per tool, global) before its input is looked at; a call over a
    /// budget ends with `RATE_LIMITED` and a retry-after
    /// (`docs/contract.md#rate-limits`, [`crate::rate_limit`]). Without
    /// it, no call is counted. Derived registries share the same counts.
    pub fn rate_limits(mut self, limits: crate::rate_limit::RateLimits) -> Self {
        self.rate_limits = Some(Arc::new(limits));
        self
    }

    /// Assigns OAuth scopes by policy: every tool registered on this
    /// registry (one by one, as a source catalog, or merged in) for which
    /// `picks` returns `true` requires `scopes` as well as those it
    /// declares (`#[tool(scopes(..))]`). Rules add up; the definition the
    /// registry stores carries them all
    /// ([`ToolDefinition::required_scopes`] on what
    /// [`get`](ToolRegistry::get) returns). A scope that breaks RFC 6749's
    /// rule refuses the registration of each tool it picks
    /// ([`RegistryError::InvalidScope`]). Derived registries keep the
    /// rules.
    ///
    /// ```
    /// use gonk_tools::prelude::*;
    ///
    /// let registry = ToolRegistry::builder()
    ///     .scopes_for(|def| def.capabilities.writes_fs, ["files:write"])
    ///     .build();
    /// let write = ToolDefinition::builder("files.write")
    ///     .description("Write a file.")
    ///     .capabilities(Capabilities { writes_fs: true, ..Default::default() })
    ///     .handler(|path: String, _ctx| async move { Ok::<_, ToolError>(path) })
    ///     .build();
    /// registry.register(write).unwrap();
    /// assert_eq!(registry.get("files.write").unwrap().required_scopes(), ["files:write"]);
    /// ```
    pub fn scopes_for<S: Into<String>>(
        mut self,
        picks: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scope_rules.push(ScopeRule {
            picks: Arc::new(picks),
            scopes: scopes.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// The registry, empty.
    pub fn build(self) -> ToolRegistry {
        ToolRegistry {
            inner: Arc::new(RegistryInner {
                catalog: RwLock::new(Catalog::default()),
                metrics: wants_records(self.metrics),
                state: RwLock::new(self.state),
                security: Arc::new(self.security),
                default_timeout: self.default_timeout,
                default_cache_ttl: self.default_cache_ttl,
                generation: Default::default(),
                changes: tokio::sync::watch::Sender::new(0),
                listeners: Default::default(),
                primitives: Default::default(),
                rate_limits: self.rate_limits,
                scope_rules: self.scope_rules.into(),
            }),
        }
    }
}

/// The sink, unless it wants no records. A panicking `enabled` counts as
/// wanting them (its records are then dropped if it panics again).
fn wants_records(sink: Arc<dyn MetricsSink>) -> Option<Arc<dyn MetricsSink>> {
    let enabled =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.enabled())).unwrap_or(true);
    enabled.then_some(sink)
}

impl ToolRegistry {
    /// An empty registry with no metrics and no state.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// Configures a registry.
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder {
            metrics: Arc::new(NoopMetrics),
            state: StateMap::default(),
            security: SecurityOptions::new(),
            default_timeout: None,
            default_cache_ttl: None,
            rate_limits: None,
            scope_rules: Vec::new(),
        }
    }

    /// The rate limits every root call is counted against, if any
    /// ([`ToolRegistryBuilder::rate_limits`]).
    pub fn rate_limits(&self) -> Option<&crate::rate_limit::RateLimits> {
        self.inner.rate_limits.as_deref()
    }

    /// The security options authenticated calls run with.
    pub fn security(&self) -> &SecurityOptions {
        &self.inner.security
    }

    /// The listing cache lifetime of tools that set none
    /// ([`ToolRegistryBuilder::default_cache_ttl`]).
    pub fn default_cache_ttl(&self) -> Option<std::time::Duration> {
        self.inner.default_cache_ttl
    }

    /// How long a client may keep a listing that shows `def`: its own
    /// [`cache_ttl`](crate::definition::ToolMetadata::cache_ttl), else the
    /// registry's [default](ToolRegistryBuilder::default_cache_ttl), else
    /// zero (do not keep it).
    pub fn cache_ttl(&self, def: &ToolDefinition) -> std::time::Duration {
        def.cache_ttl
            .or(self.inner.default_cache_ttl)
            .unwrap_or_default()
    }

    /// How long a client may keep a listing of `listed` (MCP's `ttlMs` on
    /// `tools/list`): the shortest [`cache_ttl`](Self::cache_ttl) among
    /// them, so no tool's listing is kept longer than that tool allows. An
    /// empty listing lasts the registry's default, else zero.
    ///
    /// Pass exactly the tools the listing shows (after authorization and
    /// visibility filters). A listing filtered by the caller's
    /// authorization is the caller's own: its cache scope is private,
    /// whatever its lifetime.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use gonk_tools::prelude::*;
    /// let registry = ToolRegistry::builder()
    ///     .default_cache_ttl(Duration::from_secs(600))
    ///     .build();
    /// let tool = |name: &str| {
    ///     ToolDefinition::builder(name)
    ///         .description("A tool.")
    ///         .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>(()) })
    /// };
    /// let quick = tool("quick").cache_ttl(Duration::from_secs(30)).build();
    /// let plain = tool("plain").build();
    /// assert_eq!(registry.listing_cache_ttl([&plain]), Duration::from_secs(600));
    /// assert_eq!(registry.listing_cache_ttl([&plain, &quick]), Duration::from_secs(30));
    /// ```
    pub fn listing_cache_ttl<'a>(
        &self,
        listed: impl IntoIterator<Item = &'a ToolDefinition>,
    ) -> std::time::Duration {
        listed
            .into_iter()
            .map(|def| self.cache_ttl(def))
            .min()
            .unwrap_or_else(|| self.inner.default_cache_ttl.unwrap_or_default())
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Catalog> {
        // Writers validate before they lock and never panic while holding it.
        self.inner
            .catalog
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Catalog> {
        let catalog = self
            .inner
            .catalog
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Bumped once the writer holds the lock: a reader that read the
        // generation before listing saw the same or an older one, so a
        // projection is never filed under a newer generation than its own.
        // Watchers that wake now and read the catalog wait for this
        // writer's lock, so they see the change.
        self.raise_catalog_changed();
        self.inner
            .primitives
            .publish(crate::changes::bus::SharedChange::ToolsChanged);
        catalog
    }

    /// Another process changed its catalog ([`share_changes`](Self::share_changes)):
    /// this one's watchers re-list, as after a local change.
    pub(crate) fn raise_catalog_changed(&self) {
        let generation = self
            .inner
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::Release)
            + 1;
        self.inner.changes.send_replace(generation);
    }

    /// Watches the catalog: [`CatalogChanges::changed`] resolves after each
    /// change (register, unregister, a source replaced or removed). A
    /// surface uses it to tell its clients their listing is stale (MCP's
    /// `notifications/tools/list_changed`).
    ///
    /// ```
    /// # use gonk_tools::prelude::*;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let registry = ToolRegistry::new();
    /// let mut changes = registry.catalog_changes();
    /// registry
    ///     .register(
    ///         ToolDefinition::builder("ping")
    ///             .description("Answer pong.")
    ///             .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("pong") })
    ///             .build(),
    ///     )
    ///     .unwrap();
    /// assert_eq!(changes.changed().await, Some(registry.generation()));
    /// # }
    /// ```
    pub fn catalog_changes(&self) -> CatalogChanges {
        CatalogChanges(self.inner.changes.subscribe())
    }

    /// A number that changes whenever the catalog may have changed
    /// (register, replace or remove a source, unregister). Adapters keep
    /// projections of the catalog (an MCP `tools/list`) and rebuild them
    /// only when it moved.
    pub fn generation(&self) -> u64 {
        self.inner
            .generation
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Provides application state `T` to tools registered after this call.
    pub fn insert_state<T: Send + Sync + 'static>(&self, value: T) {
        self.inner
            .state
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(Arc::new(value));
    }

    /// Application state `T`, when provided.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner
            .state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get::<T>()
    }

    /// Checks a definition on its own: name, description, handler, schemas,
    /// MCP parameter headers and required state.
    fn check(&self, def: &ToolDefinition) -> Result<(), RegistryError> {
        validate_tool_name(&def.name).map_err(|reason| RegistryError::InvalidName {
            name: def.name.clone(),
            reason,
        })?;
        if def.description.trim().is_empty() {
            return Err(RegistryError::MissingDescription(def.name.clone()));
        }
        if !def.has_handler() {
            return Err(RegistryError::MissingHandler(def.name.clone()));
        }
        // Derived (schemars) schemas always compile; compiling them waits
        // for the first call, because the first compile also builds the
        // draft 2020-12 meta-schema validator, most of a server's start-up.
        if def.inner.hand_written_schema {
            def.compiled()
                .map_err(|reason| RegistryError::InvalidSchema {
                    name: def.name.clone(),
                    reason: reason.to_owned(),
                })?;
        }
        def.check_mcp_headers()
            .map_err(|error| RegistryError::InvalidMcpHeader {
                name: def.name.clone(),
                property: error.property,
                reason: error.reason,
            })?;
        if let Some((scope, reason)) = def.required_scopes().iter().find_map(|scope| {
            crate::definition::name::check_scope(scope)
                .err()
                .map(|error| (scope, error.describe(scope)))
        }) {
            return Err(RegistryError::InvalidScope {
                name: def.name.clone(),
                scope: scope.clone(),
                reason,
            });
        }
        self.check_state(def)
    }

    /// `def` with the scopes this registry's
    /// [scope rules](ToolRegistryBuilder::scopes_for) assign it.
    fn with_scope_rules(&self, def: ToolDefinition) -> ToolDefinition {
        self.inner.scope_rules.iter().fold(def, |def, rule| {
            if (rule.picks)(&def) {
                def.with_scopes_added(&rule.scopes)
            } else {
                def
            }
        })
    }

    /// Checks that this registry holds the state `def`'s handler extracts.
    pub(crate) fn check_state(&self, def: &ToolDefinition) -> Result<(), RegistryError> {
        let state = self.inner.state.read().unwrap_or_else(|p| p.into_inner());
        match def.required_state().find(|(id, _)| !state.contains(*id)) {
            Some((_, type_name)) => Err(RegistryError::MissingState {
                name: def.name.clone(),
                type_name: type_name.to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// Registers one tool. A tool whose `requires` returns `false` is
    /// skipped silently (`Ok`). A duplicate name is an error, and so is a
    /// tool that links an MCP App (`#[tool(ui = "ui://…")]`) whose app
    /// resource is not registered yet ([`RegistryError::InvalidApp`]).
    pub fn register(&self, def: ToolDefinition) -> Result<(), RegistryError> {
        self.register_with([def], RegisterOptions::default())
    }

    /// Registers many tools, all or none: if one fails, none is added.
    pub fn register_all(
        &self,
        defs: impl IntoIterator<Item = ToolDefinition>,
    ) -> Result<(), RegistryError> {
        self.register_with(defs, RegisterOptions::default())
    }

    /// Registers every tool of `other` (local and source tools) as local
    /// tools of this registry.
    pub fn register_registry(&self, other: &ToolRegistry) -> Result<(), RegistryError> {
        self.register_with(other.list(), RegisterOptions::default())
    }

    /// Registers tools with options, all or none.
    pub fn register_with(
        &self,
        defs: impl IntoIterator<Item = ToolDefinition>,
        options: RegisterOptions,
    ) -> Result<(), RegistryError> {
        let defs: Vec<ToolDefinition> = defs
            .into_iter()
            .filter(|d| d.requirements_met())
            .map(|d| self.with_scope_rules(d))
            .collect();
        for (i, def) in defs.iter().enumerate() {
            self.check(def)?;
            self.check_app_link(def)?;
            if defs[..i].iter().any(|d| d.name == def.name) {
                return Err(RegistryError::Duplicate(def.name.clone()));
            }
        }
        let mut catalog = self.write();
        for def in &defs {
            if let Some(source) = catalog.source_of(&def.name) {
                return Err(RegistryError::OwnedBySource {
                    name: def.name.clone(),
                    source_id: source.to_owned(),
                });
            }
            if !options.overwrite && catalog.local.contains_key(&def.name) {
                return Err(RegistryError::Duplicate(def.name.clone()));
            }
        }
        for def in defs {
            catalog.local.insert(def.name.clone(), def);
        }
        Ok(())
    }

    /// Replaces the whole catalog of source `id` (an MCP server's imported
    /// tools, a plugin) atomically. The candidate is checked completely
    /// first; on any error the old catalog stays. An empty list removes the
    /// source. The id must not be empty.
    pub fn replace_source(
        &self,
        id: &str,
        defs: impl IntoIterator<Item = ToolDefinition>,
    ) -> Result<(), RegistryError> {
        if id.trim().is_empty() {
            return Err(RegistryError::EmptySourceId);
        }
        let mut candidate: ByName<ToolDefinition> = ByName::default();
        for def in defs.into_iter().filter(|d| d.requirements_met()) {
            let def = self.with_scope_rules(def);
            self.check(&def)?;
            if candidate.contains_key(&def.name) {
                return Err(RegistryError::DuplicateInSource {
                    source_id: id.to_owned(),
                    name: def.name.clone(),
                });
            }
            candidate.insert(def.name.clone(), def);
        }
        let mut catalog = self.write();
        for name in candidate.keys() {
            catalog.claim_for_source(id, name)?;
        }
        if !candidate.is_empty() {
            catalog.held.shift_remove(id);
        }
        if candidate.is_empty() {
            catalog.sources.shift_remove(id);
        } else if let Some(slot) = catalog.sources.get_mut(id) {
            *slot = candidate;
        } else {
            catalog.sources.insert(id.to_owned(), candidate);
        }
        Ok(())
    }

    /// Removes source `id` and its tools (and its hold, see
    /// [`hold_source`](Self::hold_source)); `true` if it existed.
    pub fn remove_source(&self, id: &str) -> bool {
        let mut catalog = self.write();
        let held = catalog.held.shift_remove(id).is_some();
        catalog.sources.shift_remove(id).is_some() || held
    }

    /// Holds the namespace of source `id` while it has no catalog (its
    /// server cannot be reached): a call of any `id.NAME` that no tool
    /// answers runs `placeholder` instead — through the whole dispatch
    /// path, gates included — rather than failing as a tool that does not
    /// exist, so the caller learns why (an MCP source's placeholder answers
    /// `REMOTE_UNAVAILABLE`). The placeholder is never listed. The next
    /// [`replace_source`](Self::replace_source) with tools, or
    /// [`remove_source`](Self::remove_source), ends the hold.
    pub fn hold_source(&self, id: &str, placeholder: ToolDefinition) -> Result<(), RegistryError> {
        if id.trim().is_empty() {
            return Err(RegistryError::EmptySourceId);
        }
        self.check(&placeholder)?;
        self.write().held.insert(id.to_owned(), placeholder);
        Ok(())
    }

    /// Ends the hold of source `id` (its catalog, if any, stays); `true`
    /// if it was held.
    pub fn release_source_hold(&self, id: &str) -> bool {
        self.write().held.shift_remove(id).is_some()
    }

    /// The placeholder answering for `name` under a held source (see
    /// [`hold_source`](Self::hold_source)), for a surface that resolves
    /// names itself.
    pub fn held_placeholder(&self, name: &str) -> Option<ToolDefinition> {
        self.read().held_for(name).cloned()
    }

    /// Removes a local tool; `true` if it existed. Source tools are removed
    /// with [`replace_source`](Self::replace_source).
    pub fn unregister(&self, name: &str) -> bool {
        self.write().local.shift_remove(name).is_some()
    }

    /// The tool named `name` — or, for a name under a held source's
    /// prefix that no tool has, the placeholder that answers for it
    /// ([`hold_source`](Self::hold_source)).
    pub fn get(&self, name: &str) -> Option<ToolDefinition> {
        self.read().get(name).cloned()
    }

    /// Whether a tool named `name` is registered.
    pub fn has(&self, name: &str) -> bool {
        self.read().get(name).is_some()
    }

    /// Every tool: local tools in insertion order, then each source's.
    pub fn list(&self) -> Vec<ToolDefinition> {
        self.read().list()
    }

    /// Every tool name, in [`list`](Self::list) order.
    pub fn names(&self) -> Vec<String> {
        self.list().iter().map(|d| d.name.clone()).collect()
    }

    /// The source ids, in insertion order.
    pub fn sources(&self) -> Vec<String> {
        self.read().sources.keys().cloned().collect()
    }

    fn derived(&self, catalog: Catalog) -> ToolRegistry {
        ToolRegistry {
            inner: Arc::new(RegistryInner {
                catalog: RwLock::new(catalog),
                metrics: self.inner.metrics.clone(),
                state: RwLock::new(
                    self.inner
                        .state
                        .read()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone(),
                ),
                security: Arc::clone(&self.inner.security),
                default_timeout: self.inner.default_timeout,
                default_cache_ttl: self.inner.default_cache_ttl,
                generation: Default::default(),
                changes: tokio::sync::watch::Sender::new(0),
                listeners: Arc::clone(&self.inner.listeners),
                primitives: Arc::clone(&self.inner.primitives),
                rate_limits: self.inner.rate_limits.clone(),
                scope_rules: Arc::clone(&self.inner.scope_rules),
            }),
        }
    }

    /// Calls `listener` after every succeeded call this registry runs,
    /// from any surface — MCP, the command line, WebSocket, Pi, a model
    /// provider, a background job, a composed `ctx.invoke` — with the tool
    /// and its result's data ([`ToolChange`](crate::changes::ToolChange);
    /// reads included, [`is_write`](crate::changes::ToolChange::is_write)
    /// picks the rest). The one source of change events: the WebSocket
    /// broadcast reads it. Registries derived from this one
    /// ([`filter`](Self::filter), [`merge`](Self::merge), …) share its
    /// listeners.
    ///
    /// The listener runs on the calling task just before the result
    /// reaches the caller, so it must not block (send to a channel); a
    /// panic is logged and changes nothing. Dropping the returned
    /// subscription unsubscribes it.
    ///
    /// ```
    /// # use gonk_tools::prelude::*;
    /// # use std::sync::{Arc, Mutex};
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let registry = ToolRegistry::new();
    /// registry.register(
    ///     ToolDefinition::builder("note.add")
    ///         .description("Add a note.")
    ///         .handler(|title: String, _| async move { Ok::<_, ToolError>(title) })
    ///         .build(),
    /// ).unwrap();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let record = Arc::clone(&seen);
    /// let _subscription = registry.on_change(move |change| {
    ///     record.lock().unwrap().push((change.tool.name.clone(), change.data.clone()));
    /// });
    /// let events = registry.invoke("note.add", serde_json::json!("hello"), ToolContext::new());
    /// collect_tool_outcome(events, |_| {}).await.unwrap();
    /// assert_eq!(*seen.lock().unwrap(), [("note.add".to_owned(), serde_json::json!("hello"))]);
    /// # }
    /// ```
    pub fn on_change(
        &self,
        listener: impl Fn(&crate::changes::ToolChange<'_>) + Send + Sync + 'static,
    ) -> crate::changes::ChangeSubscription {
        self.inner.listeners.subscribe(Arc::new(listener))
    }

    /// A new registry with this one's tools and then `other`'s (sources
    /// keep their ids). A name in both is an error. The new registry shares
    /// this one's metrics sink, state and security options, so `other`'s
    /// tools must find the state they need here.
    pub fn merge(&self, other: &ToolRegistry) -> Result<ToolRegistry, RegistryError> {
        let mut catalog = self.read().clone();
        let theirs = other.read().clone();
        for (name, def) in theirs.local {
            let def = self.with_scope_rules(def);
            self.check_state(&def)?;
            if catalog.get(&name).is_some() {
                return Err(RegistryError::Duplicate(name));
            }
            catalog.local.insert(name, def);
        }
        for (id, tools) in theirs.sources {
            let tools: ByName<ToolDefinition> = tools
                .into_iter()
                .map(|(name, def)| (name, self.with_scope_rules(def)))
                .collect();
            for (name, def) in &tools {
                self.check_state(def)?;
                catalog.claim_for_source(&id, name)?;
                if catalog.get(name).is_some() {
                    return Err(RegistryError::Duplicate(name.clone()));
                }
            }
            catalog.sources.entry(id).or_default().extend(tools);
        }
        Ok(self.derived(catalog))
    }

    /// A new registry with only the named tools (as local tools), in the
    /// order given. An unknown name is an error. The new registry shares
    /// this one's metrics sink, state and security options.
    pub fn extract<S: AsRef<str>>(
        &self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<ToolRegistry, RegistryError> {
        let current = self.read();
        let mut catalog = Catalog::default();
        for name in names {
            let name = name.as_ref();
            let def = current
                .get(name)
                .ok_or_else(|| RegistryError::NotFound(name.to_owned()))?;
            catalog.local.insert(name.to_owned(), def.clone());
        }
        drop(current);
        Ok(self.derived(catalog))
    }

    /// A new registry with the tools for which `keep` returns `true`
    /// (sources keep their ids). The new registry shares this one's metrics
    /// sink, state and security options.
    pub fn filter(&self, mut keep: impl FnMut(&ToolDefinition) -> bool) -> ToolRegistry {
        let current = self.read();
        let mut catalog = Catalog::default();
        for (name, def) in &current.local {
            if keep(def) {
                catalog.local.insert(name.clone(), def.clone());
            }
        }
        for (id, tools) in &current.sources {
            let kept: ByName<_> = tools
                .iter()
                .filter(|(_, d)| keep(d))
                .map(|(n, d)| (n.clone(), d.clone()))
                .collect();
            if !kept.is_empty() {
                catalog.sources.insert(id.clone(), kept);
            }
        }
        drop(current);
        self.derived(catalog)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{ToolBuilder, ToolDefinition};

    fn add() -> ToolBuilder {
        ToolDefinition::builder("add")
            .description("Adds.")
            .handler(|(a, b): (i64, i64), _ctx| async move { Ok::<_, crate::ToolError>(a + b) })
    }

    #[test]
    fn derived_schemas_compile_on_first_use_not_at_registration() {
        let def = add().build();
        ToolRegistry::new().register(def.clone()).unwrap();
        assert!(def.inner.compiled.get().is_none());
        assert!(def.compiled().is_ok());
    }

    #[test]
    fn hand_written_schemas_compile_at_registration() {
        let def = add()
            .input_json_schema(serde_json::json!({"type": "object"}))
            .build();
        ToolRegistry::new().register(def.clone()).unwrap();
        assert!(def.inner.compiled.get().is_some());
    }

    fn named(name: &str) -> ToolDefinition {
        ToolDefinition::builder(name)
            .description("A tool.")
            .handler(|_: crate::NoInput, _ctx| async move { Ok::<_, crate::ToolError>("ok") })
            .build()
    }

    #[test]
    fn a_held_source_answers_under_its_prefix_until_it_has_a_catalog() {
        let registry = ToolRegistry::new();
        registry
            .hold_source("notes", named("notes.unavailable"))
            .unwrap();
        let held = |name: &str| registry.get(name).map(|def| def.name.clone());
        assert_eq!(held("notes.search").as_deref(), Some("notes.unavailable"));
        assert_eq!(held("notes.a.b").as_deref(), Some("notes.unavailable"));
        // Only under the prefix: not the prefix itself, not a longer id.
        assert_eq!(held("notes"), None);
        assert_eq!(held("notes."), None);
        assert_eq!(held("notesx.search"), None);
        assert!(registry.list().is_empty(), "a placeholder is never listed");
        // Its catalog ends the hold: a name it lacks is missing again.
        registry
            .replace_source("notes", [named("notes.search")])
            .unwrap();
        assert_eq!(held("notes.search").as_deref(), Some("notes.search"));
        assert_eq!(held("notes.other"), None);
        // Held again, then removed with the source.
        registry
            .hold_source("web", named("web.unavailable"))
            .unwrap();
        assert!(registry.remove_source("web"));
        assert_eq!(held("web.x"), None);
    }
}
