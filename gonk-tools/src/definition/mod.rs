//! [`ToolDefinition`]: one tool's metadata, schemas and handler, and the
//! [`ToolBuilder`] that makes one (the `#[tool]` macro expands to the
//! builder).

mod builder;
mod exposure;
pub(crate) mod mcp_header;
mod metadata;
pub(crate) mod name;
mod policy;
mod transform;
mod ui;

use std::any::TypeId;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde_json::Value;

pub use builder::ToolBuilder;
pub use exposure::{
    Exposure, HiddenReason, SurfaceHints, SurfaceProfile, ToolPredicate, WriteTools,
};
pub use mcp_header::{McpHeaderError, McpHeaderValue, McpParamHeader, X_MCP_HEADER};
pub use metadata::*;
pub use transform::{ArgTransform, ToolTransform, TransformSet};
pub use ui::{ToolUi, UiVisibility};

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::event::ToolEvent;
use crate::event::ToolOutput;
use crate::schema::CompiledSchema;

/// What a type-erased handler returns when called.
pub(crate) enum HandlerCall {
    /// A single result.
    Once(BoxFuture<'static, Result<ToolOutput<Value>, ToolError>>),
    /// A stream of events.
    Stream(BoxStream<'static, ToolEvent>),
}

/// A type-erased handler: validated input JSON and the context in; a
/// pending call out (or `INVALID_INPUT` when serde rejects the input).
pub(crate) type ErasedHandler =
    Arc<dyn Fn(Value, ToolContext) -> Result<HandlerCall, ToolError> + Send + Sync>;

/// The descriptive part of a tool. [`ToolDefinition`] derefs to it, so
/// `definition.name`, `definition.capabilities.duplex` read directly.
#[derive(Clone)]
#[non_exhaustive]
pub struct ToolMetadata {
    /// Unique name: 1–128 chars of `A-Za-z0-9_.-`, starting with a letter.
    pub name: String,
    /// What the tool does, for models and humans.
    pub description: String,
    /// Groups tools in listings.
    pub category: Option<String>,
    /// Always listed, or on demand (the default).
    pub visibility: Visibility,
    /// The input schema derived from the input type (client-ready).
    pub input_schema: Value,
    /// The output schema, when the output type has one.
    pub output_schema: Option<Value>,
    /// An adapter-surface override of the input schema. Trusted: it replaces
    /// what is advertised **and** what is enforced.
    pub input_json_schema: Option<Value>,
    /// Output validation mode.
    pub validate_output: ValidateOutput,
    /// What the tool touches.
    pub capabilities: Capabilities,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// Search keywords.
    pub keywords: Vec<String>,
    /// Names of related tools.
    pub related_to: Vec<String>,
    /// Relative cost.
    pub cost: Option<Cost>,
    /// Expected latency.
    pub latency: Option<Latency>,
    /// Per-surface hints.
    pub hints: Hints,
    /// Approval declaration; `None` resolves to `exec` (fail closed).
    pub approval: Option<Approval>,
    /// Declared authorization requirements.
    pub authorization: Option<AuthorizationSpec>,
    /// A resource that must be resolved before an authenticated call.
    pub authorization_resource: Option<AuthorizationResource>,
    /// Registration predicate: `false` skips the tool silently.
    pub requires: Option<Arc<RequiresFn>>,
    /// Capability probe picking the advertised description.
    pub capability_for: Option<Arc<CapabilityFn>>,
    /// Description advertised when the capability is degraded.
    pub degraded_description: Option<String>,
    /// How long a call may run before its handler is dropped and the call
    /// ends with `TIMEOUT`; `None` uses the registry's default
    /// (`ToolRegistryBuilder::default_timeout`),
    /// if any. Not advertised.
    pub timeout: Option<std::time::Duration>,
    /// Detached by default: a call returns a job handle at once unless it
    /// passes `wait: true` or `sync: true`. Set by `#[tool(detached)]` and
    /// `ToolBuilder::detached`, which also give the call that behaviour;
    /// the core only carries the flag.
    pub detached: bool,
    /// How long a client may keep a listing that shows this tool before
    /// asking again (`#[tool(cache_ttl = "5m")]`,
    /// [`ToolBuilder::cache_ttl`]); `None` uses the registry's default
    /// (`ToolRegistryBuilder::default_cache_ttl`).
    /// A listing lasts as long as its shortest-lived tool
    /// ([`ToolRegistry::listing_cache_ttl`](crate::ToolRegistry::listing_cache_ttl)).
    pub cache_ttl: Option<std::time::Duration>,
    /// Input properties an MCP client also sends as `Mcp-Param-<Name>`
    /// headers, so gateways route on them without parsing the body
    /// (`#[tool(mcp(header(region = "Region")))]`,
    /// [`ToolBuilder::mcp_header`]). The advertised input schema carries
    /// each as `"x-mcp-header"` on its property.
    pub mcp_headers: Vec<McpParamHeader>,
    /// Where the tool came from, when an importer made it
    /// ([`ToolBuilder::provenance`]); `None` for tools defined here.
    pub provenance: Option<Provenance>,
    /// Words a tool search ranks the tool by that no surface shows
    /// ([`ToolBuilder::search_text`]): an untrusted source's own
    /// description, kept out of what models read but not out of search.
    pub search_text: Option<String>,
    /// The OAuth scopes a call needs, each once, in declaration order
    /// (`#[tool(scopes(..))]`, [`ToolBuilder::scopes`], or a registry's
    /// scope rule (`ToolRegistryBuilder::scopes_for`)); read them
    /// with [`ToolDefinition::required_scopes`]. Empty: no scope needed.
    pub scopes: Vec<String>,
    /// The MCP App the tool links and who may call it
    /// (`#[tool(ui = "ui://…")]`, [`ToolBuilder::ui`]); listed over MCP as
    /// `_meta.ui`. Read it with [`ToolDefinition::ui`].
    pub ui: Option<ToolUi>,
}

impl ToolMetadata {
    pub(crate) fn new(name: String) -> Self {
        ToolMetadata {
            name,
            description: String::new(),
            category: None,
            visibility: Visibility::default(),
            input_schema: crate::schema::empty_object_schema(),
            output_schema: None,
            input_json_schema: None,
            validate_output: ValidateOutput::default(),
            capabilities: Capabilities::default(),
            tags: Vec::new(),
            keywords: Vec::new(),
            related_to: Vec::new(),
            cost: None,
            latency: None,
            hints: Hints::default(),
            approval: None,
            authorization: None,
            authorization_resource: None,
            requires: None,
            capability_for: None,
            degraded_description: None,
            timeout: None,
            detached: false,
            cache_ttl: None,
            mcp_headers: Vec::new(),
            provenance: None,
            search_text: None,
            scopes: Vec::new(),
            ui: None,
        }
    }

    /// The schema adapters advertise and dispatch enforces: the
    /// `input_json_schema` override if set, else the derived schema.
    pub fn effective_input_schema(&self) -> &Value {
        self.input_json_schema
            .as_ref()
            .unwrap_or(&self.input_schema)
    }

    /// The description to advertise now: the degraded description when
    /// `capability_for` reports [`CapabilityStatus::Degraded`].
    pub fn advertised_description(&self) -> &str {
        match (&self.capability_for, &self.degraded_description) {
            (Some(probe), Some(degraded)) if probe() == CapabilityStatus::Degraded => degraded,
            _ => &self.description,
        }
    }
}

impl fmt::Debug for ToolMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolMetadata")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("category", &self.category)
            .field("visibility", &self.visibility)
            .field("capabilities", &self.capabilities)
            .field("approval", &self.approval)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Compiled {
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
}

pub(crate) struct DefinitionInner {
    pub(crate) meta: ToolMetadata,
    pub(crate) name: Arc<str>,
    /// The call stack of a root call of this tool (`[name]`), made once:
    /// a root call shares it instead of allocating its own.
    pub(crate) root_stack: Arc<[Arc<str>]>,
    /// Whether the enforced input schema is neither an object nor an open
    /// schema, so MCP calls arrive wrapped as `{value}` (decided once; the
    /// metadata does not change after `build`).
    pub(crate) input_wrapped: bool,
    pub(crate) handler: Option<ErasedHandler>,
    pub(crate) required_state: Vec<(TypeId, &'static str)>,
    /// Whether a schema was written by hand (`input_json_schema`,
    /// `output_schema`): such a schema is compiled when the tool is
    /// registered, so a bad one is a registration error. Derived schemas
    /// are compiled on the first call, keeping start-up cheap.
    pub(crate) hand_written_schema: bool,
    pub(crate) compiled: OnceLock<Result<Compiled, String>>,
    /// The tool as an authorization policy sees it, built on the first
    /// authenticated call.
    pub(crate) policy: OnceLock<policy::PolicyResources>,
    pub(crate) primitive: Primitive,
}

/// The MCP primitive a definition serves. Resources, prompts and their
/// completers run through dispatch as definitions that are never listed
/// as tools; a policy tells them apart by the resource kind it is shown
/// (`tool`, `resource`, `prompt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Primitive {
    Tool,
    Resource,
    Prompt,
}

impl Primitive {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Primitive::Tool => "tool",
            Primitive::Resource => "resource",
            Primitive::Prompt => "prompt",
        }
    }
}

/// A complete tool: metadata, schemas and handler. Cheap to clone (one
/// `Arc`); the registry never copies a definition per call.
///
/// Make one with [`ToolDefinition::builder`] or `#[tool]`.
#[derive(Clone)]
pub struct ToolDefinition {
    pub(crate) inner: Arc<DefinitionInner>,
}

impl ToolDefinition {
    /// Starts a definition named `name`.
    ///
    /// ```
    /// use gonk_tools::prelude::*;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Add { a: i64, b: i64 }
    ///
    /// let add = ToolDefinition::builder("math.add")
    ///     .description("Add two integers.")
    ///     .approval(ApprovalTier::Read)
    ///     .handler(|input: Add, _ctx| async move { Ok::<_, ToolError>(input.a + input.b) })
    ///     .build();
    /// assert_eq!(add.name, "math.add");
    /// ```
    pub fn builder(name: impl Into<String>) -> ToolBuilder {
        ToolBuilder::new(name.into())
    }

    /// The name as a shared string (what call stacks hold).
    pub fn name_arc(&self) -> &Arc<str> {
        &self.inner.name
    }

    /// The address of the definition's shared value: the same for every
    /// clone of one definition (a registered tool and what
    /// [`ToolRegistry::get`](crate::ToolRegistry::get) and `list` return
    /// for it), different for another definition, even one built from the
    /// same declaration. A surface keys a cache of per-tool projections by
    /// it; keep a clone alive while its key is in use, since an address
    /// can be reused once the last clone is dropped.
    ///
    /// ```
    /// use gonk_tools::prelude::*;
    ///
    /// let make = || ToolDefinition::builder("ping")
    ///     .description("Answers pong.")
    ///     .handler(|_: NoInput, _| async move { Ok::<_, ToolError>("pong") })
    ///     .build();
    /// let ping = make();
    /// assert_eq!(ping.as_ptr(), ping.clone().as_ptr());
    /// assert_ne!(ping.as_ptr(), make().as_ptr());
    /// ```
    pub fn as_ptr(&self) -> *const () {
        Arc::as_ptr(&self.inner).cast()
    }

    /// Whether a handler was attached.
    pub fn has_handler(&self) -> bool {
        self.inner.handler.is_some()
    }

    /// Whether a surface whose arguments must be an object (MCP, the model
    /// providers) receives this tool's input wrapped as `{"value": …}`: its
    /// enforced schema is neither an object nor an open schema
    /// ([`object_input_schema`](crate::schema::object_input_schema)
    /// decides, once, when the definition is built). Such a surface
    /// advertises the wrapped schema and unwraps each call's arguments
    /// before dispatch.
    ///
    /// ```
    /// use gonk_tools::prelude::*;
    ///
    /// let tag = ToolDefinition::builder("tag")
    ///     .description("Tag a note.")
    ///     .handler(|tag: String, _ctx| async move { Ok::<_, ToolError>(tag) })
    ///     .build();
    /// assert!(tag.input_is_wrapped()); // a string, not an object
    /// ```
    pub fn input_is_wrapped(&self) -> bool {
        self.inner.input_wrapped
    }

    /// The metadata.
    pub fn metadata(&self) -> &ToolMetadata {
        &self.inner.meta
    }

    /// Whether the definition's `requires` predicate (if any) passes.
    pub fn requirements_met(&self) -> bool {
        self.inner.meta.requires.as_ref().is_none_or(|f| f())
    }

    /// Checks the tool's MCP parameter headers against its advertised
    /// input schema: each declared header ([`ToolMetadata::mcp_headers`])
    /// names a valid, unique header and a top-level property that carries
    /// it, and every `x-mcp-header` of the schema (declared, written with
    /// `#[schemars(extend(..))]` or in an `input_json_schema`) sits on a
    /// `string`, `integer` or `boolean` property reached through
    /// `properties`. Registration runs it, so a tool that MCP clients would
    /// drop from their listing is refused up front.
    pub fn check_mcp_headers(&self) -> Result<(), McpHeaderError> {
        let meta = &self.inner.meta;
        mcp_header::check(meta.effective_input_schema(), &meta.mcp_headers)
    }

    /// The OAuth scopes a call of this tool needs: declared with
    /// `#[tool(scopes(..))]` or [`ToolBuilder::scopes`], plus those a
    /// registry's scope rule (`ToolRegistryBuilder::scopes_for`)
    /// added when it registered the tool (ask the registry's copy,
    /// [`ToolRegistry::get`](crate::ToolRegistry::get)). An authenticated
    /// caller whose token lacks one is refused with `INSUFFICIENT_SCOPE`
    /// (`docs/contract.md#scopes`).
    pub fn required_scopes(&self) -> &[String] {
        &self.inner.meta.scopes
    }

    /// This definition with `scopes` added to its required scopes: itself
    /// when it requires them all already, else a copy (same handler, new
    /// identity) — definitions are immutable once built.
    pub(crate) fn with_scopes_added(&self, scopes: &[String]) -> ToolDefinition {
        let mut added: Vec<&String> = Vec::new();
        for scope in scopes {
            if !self.inner.meta.scopes.contains(scope) && !added.contains(&scope) {
                added.push(scope);
            }
        }
        if added.is_empty() {
            return self.clone();
        }
        let inner = &*self.inner;
        let mut meta = inner.meta.clone();
        meta.scopes.extend(added.into_iter().cloned());
        ToolDefinition {
            inner: Arc::new(DefinitionInner {
                meta,
                name: Arc::clone(&inner.name),
                root_stack: Arc::clone(&inner.root_stack),
                input_wrapped: inner.input_wrapped,
                handler: inner.handler.clone(),
                required_state: inner.required_state.clone(),
                hand_written_schema: inner.hand_written_schema,
                compiled: OnceLock::new(),
                policy: OnceLock::new(),
                primitive: inner.primitive,
            }),
        }
    }

    /// The MCP App the tool links, and who may call it: listed over MCP
    /// as `_meta.ui` (see the `app` module). `None` for a tool without an
    /// app.
    ///
    /// ```
    /// use gonk_tools::prelude::*;
    /// use gonk_tools::app::UiVisibility;
    ///
    /// let refresh = ToolDefinition::builder("board.refresh")
    ///     .description("Refresh the board.")
    ///     .ui("ui://notes/board")
    ///     .ui_visibility([UiVisibility::App])
    ///     .handler(|_: NoInput, _ctx| async move { Ok::<_, ToolError>("ok") })
    ///     .build();
    /// let ui = refresh.ui().unwrap();
    /// assert_eq!(ui.resource_uri(), "ui://notes/board");
    /// assert_eq!(ui.visibility(), [UiVisibility::App]);
    /// ```
    pub fn ui(&self) -> Option<&ToolUi> {
        self.inner.meta.ui.as_ref()
    }

    /// Application state types the handler extracts with `State<T>`.
    pub fn required_state(&self) -> impl Iterator<Item = (TypeId, &'static str)> + '_ {
        self.inner.required_state.iter().copied()
    }

    /// Compiles (once) the enforced input schema and the output schema.
    pub(crate) fn compiled(&self) -> Result<&Compiled, &str> {
        self.inner
            .compiled
            .get_or_init(|| {
                let meta = &self.inner.meta;
                let input = CompiledSchema::compile(meta.effective_input_schema())
                    .map_err(|e| format!("input schema of {} does not compile: {e}", meta.name))?;
                let output = match &meta.output_schema {
                    Some(schema) => Some(CompiledSchema::compile(schema).map_err(|e| {
                        format!("output schema of {} does not compile: {e}", meta.name)
                    })?),
                    None => None,
                };
                Ok(Compiled { input, output })
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

impl Deref for ToolDefinition {
    type Target = ToolMetadata;
    fn deref(&self) -> &ToolMetadata {
        &self.inner.meta
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner.meta, f)
    }
}

/// Checks a tool name: 1–128 chars of `A-Za-z0-9_.-`, starting with a
/// letter (MCP's rule; the rule `#[tool]` checks at compile time). The
/// error says what is wrong, and the rule.
pub fn validate_tool_name(name: &str) -> Result<(), String> {
    name::check_tool_name(name)
        .map_err(|error| format!("{} ({})", error.describe(name), name::NAME_RULE))
}
