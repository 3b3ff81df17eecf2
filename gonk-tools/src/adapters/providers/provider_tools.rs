//! [`ProviderTools`]: a registry offered to one provider — the cached
//! projection of its tools, and the dispatch of the provider's calls.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::{args, CallError, Provider, ToolCall, ToolProjection};
use crate::adapters::names::{NameMap, SurfaceNameError};
use crate::context::ToolContext;
use crate::definition::{CapabilityStatus, ToolDefinition, ToolPredicate};
use crate::error::ToolError;
use crate::event::ToolOutput;
use crate::registry::ToolRegistry;
use crate::search::{CALL_TOOL, SEARCH_TOOL};

/// A registry's tools offered to one provider `P` ([`OpenAi`](super::OpenAi),
/// [`Anthropic`](super::Anthropic), [`Gemini`](super::Gemini)).
///
/// Cheap to clone (the cache is shared). See the [module docs](super).
#[derive(Clone)]
pub struct ProviderTools<P> {
    registry: ToolRegistry,
    provider: Arc<P>,
    filter: Option<Arc<ToolPredicate>>,
    defer_loading: bool,
    cache: Arc<RwLock<Option<Arc<Snapshot>>>>,
}

impl<P> std::fmt::Debug for ProviderTools<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderTools")
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

/// Identifies one projected tool: the definition (by address; the snapshot
/// keeps it alive, so the address is not reused) and whether its degraded
/// description was advertised.
type Key = (usize, bool);

/// The projection of one registry state.
struct Snapshot {
    keys: Vec<Key>,
    /// Keeps the keyed definitions alive.
    _defs: Vec<ToolDefinition>,
    projections: Arc<[ToolProjection]>,
    entries: Arc<[Value]>,
    names: Result<NameMap, SurfaceNameError>,
}

fn key(def: &ToolDefinition) -> Key {
    let degraded = def.degraded_description.is_some()
        && def
            .capability_for
            .as_ref()
            .is_some_and(|probe| probe() == CapabilityStatus::Degraded);
    (def.as_ptr() as usize, degraded)
}

impl<P: Provider> ProviderTools<P> {
    /// Offers `registry`'s tools (every tool but duplex ones) to `provider`.
    pub fn new(registry: ToolRegistry, provider: P) -> Self {
        ProviderTools {
            registry,
            provider: Arc::new(provider),
            filter: None,
            defer_loading: false,
            cache: Arc::default(),
        }
    }

    /// Offers only the tools `keep` accepts; calls of the others answer
    /// `TOOL_NOT_FOUND`.
    pub fn filter(
        mut self,
        keep: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some(Arc::new(keep));
        self.cache = Arc::default();
        self
    }

    /// With `true`, every entry but the tool-search meta-tools
    /// (`tools.search`, `tools.call`: `gonk_tools::search`, feature `search`) is marked
    /// `defer_loading: true` where the provider has the mark (Anthropic,
    /// OpenAI), so the model loads a tool's definition only when it looks
    /// for it. Off by default (the entries are unchanged). Install the
    /// meta-tools in the registry first, or the model has nothing to
    /// search with (a warning is logged).
    pub fn defer_loading(mut self, defer: bool) -> Self {
        self.defer_loading = defer;
        self.cache = Arc::default();
        self
    }

    /// The provider.
    pub fn provider(&self) -> &P {
        &self.provider
    }

    /// The registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The tool entries for a request body (`tools` / `functionDeclarations`),
    /// in registration order. Computed once; later calls cost a look at the
    /// registry unless it changed.
    pub fn tools(&self) -> Result<Arc<[Value]>, SurfaceNameError> {
        let snapshot = self.snapshot();
        snapshot.names.as_ref().map_err(Clone::clone)?;
        Ok(Arc::clone(&snapshot.entries))
    }

    /// Every tool's projection: names, entries and the notes on what each
    /// projection changed.
    pub fn projections(&self) -> Result<Arc<[ToolProjection]>, SurfaceNameError> {
        let snapshot = self.snapshot();
        snapshot.names.as_ref().map_err(Clone::clone)?;
        Ok(Arc::clone(&snapshot.projections))
    }

    /// Reads one tool call as the model sent it, runs it through
    /// [`ToolRegistry::invoke`] with `ctx`, and returns the provider's
    /// result message. A failure of the tool is a result (the model reads
    /// it); only a payload that is not a call of this provider — or tools
    /// that cannot be offered at all — is an `Err`.
    pub async fn call(&self, payload: &Value, ctx: ToolContext) -> Result<Value, CallError> {
        let call = self.provider.read_call(payload)?;
        let outcome = self.run(&call, ctx).await?;
        Ok(self.provider.result(&call, &outcome))
    }

    /// Runs one turn's tool calls concurrently and returns what to append
    /// to the conversation: OpenAI — one message (or Responses item) per
    /// call; Anthropic — one `user` message holding every `tool_result`;
    /// Gemini — one `user` content holding every `functionResponse`.
    /// Nothing runs when any payload is not a call of this provider.
    pub async fn call_all<'a>(
        &self,
        payloads: impl IntoIterator<Item = &'a Value>,
        ctx: ToolContext,
    ) -> Result<Vec<Value>, CallError> {
        let calls = payloads
            .into_iter()
            .map(|payload| self.provider.read_call(payload))
            .collect::<Result<Vec<_>, _>>()?;
        let outcomes =
            futures::future::join_all(calls.iter().map(|call| self.run(call, ctx.clone()))).await;
        let mut results = Vec::with_capacity(calls.len());
        for (call, outcome) in calls.iter().zip(outcomes) {
            results.push(self.provider.result(call, &outcome?));
        }
        Ok(self.provider.reply(results))
    }

    /// Dispatches one call: the provider name back to the registry name,
    /// the arguments read the way models write them, then `invoke`.
    async fn run(
        &self,
        call: &ToolCall,
        ctx: ToolContext,
    ) -> Result<Result<ToolOutput<Value>, ToolError>, CallError> {
        let snapshot = self.snapshot();
        let names = snapshot
            .names
            .as_ref()
            .map_err(|e| CallError::Names(e.clone()))?;
        let Some(tool) = names.tool_name(&call.name) else {
            return Ok(Err(ToolError::not_found(&call.name)));
        };
        Ok(args::run(&self.registry, tool, call.arguments.clone(), ctx).await)
    }

    /// The projection of the registry as it is now: the cached one when no
    /// offered tool changed, else a new one that reuses every unchanged
    /// tool's projection.
    fn snapshot(&self) -> Arc<Snapshot> {
        let defs = super::offered(&self.registry, self.filter.as_ref());
        let keys: Vec<Key> = defs.iter().map(key).collect();
        let previous = self.cache.read().ok().and_then(|cache| cache.clone());
        if let Some(snapshot) = &previous {
            if snapshot.keys == keys {
                return Arc::clone(snapshot);
            }
        }
        let snapshot = Arc::new(self.build(defs, keys, previous.as_deref()));
        if let Ok(mut cache) = self.cache.write() {
            *cache = Some(Arc::clone(&snapshot));
        }
        snapshot
    }

    fn build(
        &self,
        defs: Vec<ToolDefinition>,
        keys: Vec<Key>,
        previous: Option<&Snapshot>,
    ) -> Snapshot {
        let rules = self.provider.name_rules();
        let names = NameMap::build(&rules, defs.iter().map(|def| def.name.as_str()));
        let reusable: HashMap<Key, &ToolProjection> = previous
            .map(|p| p.keys.iter().copied().zip(p.projections.iter()).collect())
            .unwrap_or_default();
        let projections: Arc<[ToolProjection]> = match &names {
            Err(_) => Arc::from([]),
            Ok(names) => defs
                .iter()
                .zip(&keys)
                .map(|(def, key)| {
                    let name = names.surface_name(&def.name).unwrap_or(&def.name);
                    let reused = reusable
                        .get(key)
                        .filter(|projection| projection.name == name);
                    match reused {
                        Some(projection) => (*projection).clone(),
                        None => self.project(def, name),
                    }
                })
                .collect(),
        };
        if self.defer_loading && !projections.iter().any(|p| p.tool == SEARCH_TOOL) {
            tracing::warn!(
                provider = rules.surface(),
                "deferring every tool, but {} is not offered: install gonk_tools::search first",
                SEARCH_TOOL
            );
        }
        let entries = projections.iter().map(|p| p.entry.clone()).collect();
        Snapshot {
            keys,
            _defs: defs,
            projections,
            entries,
            names,
        }
    }

    fn project(&self, def: &ToolDefinition, name: &str) -> ToolProjection {
        let mut projection = self
            .provider
            .project(def, name, def.advertised_description());
        if self.defer_loading && def.name != SEARCH_TOOL && def.name != CALL_TOOL {
            self.provider.defer_loading(&mut projection.entry);
        }
        for note in &projection.notes {
            tracing::debug!(tool = %def.name, provider = self.provider.name_rules().surface(), "{note}");
        }
        projection
    }
}
