//! The `tools/list` result, projected once per registry change and shared
//! by every session and request: a listing is rebuilt only when the
//! registry's [generation](crate::ToolRegistry::generation) moved or a
//! tool's `capability_for` probe changed its answer.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::Tool;

use super::tools;
use crate::adapters::mcp::{McpServerOptions, WriteToolPolicy};
use crate::definition::{CapabilityStatus, ToolDefinition};
use crate::registry::ToolRegistry;

/// The shared, cached listing of one server.
#[derive(Default)]
pub(crate) struct Listings {
    cache: RwLock<Option<Arc<Listing>>>,
}

/// The listed tools of one registry generation.
struct Listing {
    generation: u64,
    /// MCP projections of the listed tools, in registry order.
    tools: Vec<Tool>,
    /// How long a client may keep each listed tool (beside `tools`).
    ttls: Vec<Duration>,
    /// How long a client may keep the whole listing.
    ttl: Duration,
    /// A listed definition (by identity) → its index in `tools`.
    index: HashMap<usize, usize>,
    /// Tools whose description depends on a probe, with the answer their
    /// projection was made with.
    probed: Vec<(ToolDefinition, bool)>,
}

/// A definition's identity: its shared inner value.
fn identity(def: &ToolDefinition) -> usize {
    def.as_ptr() as usize
}

/// Whether `def` advertises its degraded description now.
fn degraded(def: &ToolDefinition) -> bool {
    def.degraded_description.is_some()
        && def
            .capability_for
            .as_ref()
            .is_some_and(|probe| probe() == CapabilityStatus::Degraded)
}

impl Listing {
    fn is_current(&self, generation: u64) -> bool {
        self.generation == generation && self.probed.iter().all(|(def, was)| degraded(def) == *was)
    }
}

impl Listings {
    /// Every listed tool (the `tools/list` of a caller without auth).
    pub(crate) fn all(
        &self,
        registry: &ToolRegistry,
        options: &McpServerOptions,
        policy: WriteToolPolicy,
    ) -> (Vec<Tool>, Duration) {
        let listing = self.current(registry, options, policy);
        (listing.tools.clone(), listing.ttl)
    }

    /// The listed tools among `visible` (what an authenticated caller may
    /// discover), in `visible`'s order, and how long that listing may be
    /// kept: the shortest of their lifetimes (the registry's
    /// [`listing_cache_ttl`](ToolRegistry::listing_cache_ttl) rule).
    pub(crate) fn of(
        &self,
        visible: &[ToolDefinition],
        registry: &ToolRegistry,
        options: &McpServerOptions,
        policy: WriteToolPolicy,
    ) -> (Vec<Tool>, Duration) {
        let listing = self.current(registry, options, policy);
        let mut ttl: Option<Duration> = None;
        let tools = visible
            .iter()
            .filter_map(|def| listing.index.get(&identity(def)))
            .map(|&i| {
                ttl = Some(ttl.map_or(listing.ttls[i], |t| t.min(listing.ttls[i])));
                listing.tools[i].clone()
            })
            .collect();
        let ttl = ttl.unwrap_or_else(|| registry.listing_cache_ttl(std::iter::empty()));
        (tools, ttl)
    }

    fn current(
        &self,
        registry: &ToolRegistry,
        options: &McpServerOptions,
        policy: WriteToolPolicy,
    ) -> Arc<Listing> {
        let generation = registry.generation();
        let cached = self.cache.read().ok().and_then(|cache| cache.clone());
        if let Some(listing) = cached.filter(|l| l.is_current(generation)) {
            return listing;
        }
        let listing = Arc::new(build(
            generation,
            registry.list(),
            registry,
            options,
            policy,
        ));
        if let Ok(mut cache) = self.cache.write() {
            *cache = Some(Arc::clone(&listing));
        }
        listing
    }
}

fn build(
    generation: u64,
    defs: Vec<ToolDefinition>,
    registry: &ToolRegistry,
    options: &McpServerOptions,
    policy: WriteToolPolicy,
) -> Listing {
    let mut listing = Listing {
        generation,
        tools: Vec::with_capacity(defs.len()),
        ttls: Vec::with_capacity(defs.len()),
        ttl: Duration::ZERO,
        index: HashMap::with_capacity(defs.len()),
        probed: Vec::new(),
    };
    let profile = tools::profile(options, policy);
    for def in defs {
        if !profile.exposure(&def).is_listed() {
            continue;
        }
        // Probed before projecting: if the answer changes in between, the
        // next listing sees the difference and rebuilds.
        let probed = (def.capability_for.is_some() && def.degraded_description.is_some())
            .then(|| degraded(&def));
        listing.index.insert(identity(&def), listing.tools.len());
        listing.tools.push(tools::project_tool(&def));
        listing.ttls.push(registry.cache_ttl(&def));
        if let Some(was) = probed {
            listing.probed.push((def, was));
        }
    }
    listing.ttl = listing
        .ttls
        .iter()
        .copied()
        .min()
        .unwrap_or_else(|| registry.listing_cache_ttl(std::iter::empty()));
    listing
}
