//! The two meta-tools, `tools.search` and `tools.call` (see the module
//! above).

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{ToolIndex, CALL_TOOL, SEARCH_TOOL};
use crate::context::ToolContext;
use crate::definition::{ApprovalTier, ToolDefinition, Visibility};
use crate::error::ToolError;
use crate::event::ToolEvent;
use crate::registry::{RegistryError, ToolRegistry};

/// How the meta-tools answer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchOptions {
    /// How many tools a search returns when it gives no `limit` (5).
    pub default_limit: usize,
    /// The most a search may ask for (25); a larger `limit` is
    /// `INVALID_INPUT`.
    pub max_limit: usize,
    /// Whether each hit carries the tool's input schema (on by default),
    /// so a model can write `tools.call` arguments without another round.
    pub include_schemas: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            default_limit: 5,
            max_limit: 25,
            include_schemas: true,
        }
    }
}

impl SearchOptions {
    /// How many tools a search returns when it gives no `limit`.
    pub fn default_limit(mut self, limit: usize) -> Self {
        self.default_limit = limit.max(1);
        self
    }

    /// The most a search may ask for.
    pub fn max_limit(mut self, limit: usize) -> Self {
        self.max_limit = limit.max(1);
        self
    }

    /// Whether each hit carries the tool's input schema.
    pub fn include_schemas(mut self, include: bool) -> Self {
        self.include_schemas = include;
        self
    }
}

/// The input of `tools.search`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchInput {
    /// What the tool should do, in words (e.g. "create an invoice for a
    /// customer").
    #[schemars(length(min = 1, max = 1000))]
    query: String,
    /// How many tools to return, best first.
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

/// The input of `tools.call`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CallInput {
    /// The tool's name, as `tools.search` returned it.
    #[schemars(length(min = 1))]
    name: String,
    /// The tool's arguments, matching its input schema (default `{}`).
    arguments: Option<Value>,
}

/// The index of one catalog state.
struct Cached {
    generation: u64,
    index: Arc<ToolIndex>,
}

/// Registers `tools.search` and `tools.call` in `registry` (listed on
/// every surface). Fails like [`ToolRegistry::register`] when a tool of
/// either name is already registered.
pub fn install(registry: &ToolRegistry, options: SearchOptions) -> Result<(), RegistryError> {
    registry.register_all([search_tool(options), call_tool()])
}

/// The `tools.search` definition.
fn search_tool(options: SearchOptions) -> ToolDefinition {
    let cache: Arc<Mutex<Option<Cached>>> = Arc::default();
    let description = format!(
        "Search this server's tools by what they do. Returns the best matches (name, \
         description, relevance score{}), best first; run one with {CALL_TOOL}.",
        if options.include_schemas {
            ", input schema"
        } else {
            ""
        }
    );
    ToolDefinition::builder(SEARCH_TOOL)
        .description(description)
        .visibility(Visibility::Always)
        .approval(ApprovalTier::Read)
        .handler(move |input: SearchInput, ctx: ToolContext| {
            let cache = Arc::clone(&cache);
            let options = options.clone();
            async move { search(&input, &ctx, &cache, &options).await }
        })
        .build()
}

async fn search(
    input: &SearchInput,
    ctx: &ToolContext,
    cache: &Mutex<Option<Cached>>,
    options: &SearchOptions,
) -> Result<Value, ToolError> {
    let limit = input.limit.unwrap_or(options.default_limit);
    if limit > options.max_limit {
        return Err(ToolError::invalid_input(vec![crate::ValidationIssue::new(
            "/limit",
            format!(
                "limit {limit} is above the most this server returns ({}); ask for fewer",
                options.max_limit
            ),
        )]));
    }
    let registry = ctx
        .registry()
        .ok_or_else(|| ToolError::internal(format!("{SEARCH_TOOL} runs only through dispatch")))?;
    let index = index_of(&registry, cache);
    let visible: std::collections::HashSet<String> = registry
        .list_discoverable(ctx)
        .await
        .into_iter()
        .filter(for_model)
        .map(|def| def.name.clone())
        .collect();
    let tools: Vec<Value> = index
        .search(&input.query)
        .into_iter()
        .filter(|hit| visible.contains(&hit.name))
        .take(limit)
        .filter_map(|hit| {
            let def = index.definition(&hit.name)?;
            let mut entry = json!({
                "name": hit.name,
                "description": def.advertised_description(),
                "score": hit.score,
            });
            if options.include_schemas {
                entry["input_schema"] = def.effective_input_schema().clone();
            }
            Some(entry)
        })
        .collect();
    Ok(json!({ "tools": tools }))
}

/// Whether a model may find and call `def` through the meta-tools: not a
/// tool only an MCP App may call (a model that searches renders no app).
fn for_model(def: &ToolDefinition) -> bool {
    def.ui().is_none_or(|ui| ui.visible_to_model())
}

/// The index of the registry's current catalog: the cached one unless the
/// generation moved. The meta-tools themselves are not indexed.
fn index_of(registry: &ToolRegistry, cache: &Mutex<Option<Cached>>) -> Arc<ToolIndex> {
    let generation = registry.generation();
    // A poisoned lock only means a search panicked while building: rebuild.
    let mut cached = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(cached) = cached.as_ref().filter(|c| c.generation == generation) {
        return Arc::clone(&cached.index);
    }
    let index = Arc::new(ToolIndex::build(
        registry
            .list()
            .into_iter()
            .filter(|def| def.name != SEARCH_TOOL && def.name != CALL_TOOL),
    ));
    *cached = Some(Cached {
        generation,
        index: Arc::clone(&index),
    });
    index
}

/// The `tools.call` definition.
fn call_tool() -> ToolDefinition {
    ToolDefinition::builder(CALL_TOOL)
        .description(format!(
            "Run one of this server's tools by name (find it with {SEARCH_TOOL}) with its \
             arguments; answers with that tool's result."
        ))
        .visibility(Visibility::Always)
        // The called tool's own tier is enforced on the child call.
        .approval(ApprovalTier::Read)
        .input_schema_for::<CallInput>()
        .raw_stream_handler(|input: Value, ctx: ToolContext| {
            futures::stream::once(call(input, ctx)).flatten()
        })
        .build()
}

/// Runs the named tool as a child call, or answers why not.
async fn call(input: Value, ctx: ToolContext) -> crate::ToolEventStream {
    let failed = |error: ToolError| -> crate::ToolEventStream {
        Box::pin(futures::stream::once(
            async move { ToolEvent::error(error) },
        ))
    };
    let input: CallInput = match serde_json::from_value(input) {
        Ok(input) => input,
        Err(e) => {
            return failed(ToolError::invalid_input(vec![crate::ValidationIssue::new(
                "",
                e.to_string(),
            )]))
        }
    };
    let Some(registry) = ctx.registry() else {
        return failed(ToolError::internal(format!(
            "{CALL_TOOL} runs only through dispatch"
        )));
    };
    // A child call is not asked `tool.discover` again; a tool the caller
    // may not discover must read as missing here too.
    let name = input.name;
    let discoverable = !registry
        .filter(|def| def.name == name && for_model(def))
        .list_discoverable(&ctx)
        .await
        .is_empty();
    if !discoverable {
        return failed(ToolError::not_found(&name));
    }
    ctx.invoke(&name, input.arguments.unwrap_or_else(|| json!({})))
}
