//! [`ToolBuilder`]: assembles a [`ToolDefinition`] field by field.

use std::any::{type_name, TypeId};
use std::future::Future;
use std::sync::{Arc, OnceLock};

use futures::{FutureExt, Stream, StreamExt};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{
    Approval, ApprovalSpec, AuthorizationResource, AuthorizationSpec, Capabilities,
    CapabilityStatus, CliHints, Cost, DefinitionInner, ErasedHandler, HandlerCall, Hints, Latency,
    McpHints, PiHints, Provenance, ToolDefinition, ToolMetadata, ToolUi, UiVisibility,
    ValidateOutput, Visibility,
};
use crate::context::ToolContext;
use crate::error::{ToolError, ValidationIssue};
use crate::event::ToolEvent;
use crate::event::ToolOutput;
use crate::schema;

/// Builds a [`ToolDefinition`]. Start with [`ToolDefinition::builder`].
///
/// A handler is attached with one of [`handler`](Self::handler) (returns
/// `Result<O, E>`), [`handler_with_output`](Self::handler_with_output)
/// (returns `Result<ToolOutput<O>, E>`, data + display),
/// [`stream_handler`](Self::stream_handler) (returns a stream of
/// `ToolEvent<O>`) or [`raw_handler`](Self::raw_handler) (JSON in, JSON out,
/// for tools defined at run time). The typed forms derive the input schema
/// from the input type; the registry enforces exactly that schema.
#[must_use = "call .build() to get the definition"]
pub struct ToolBuilder {
    meta: ToolMetadata,
    handler: Option<ErasedHandler>,
    required_state: Vec<(TypeId, &'static str)>,
    /// Whether the output schema was written by hand (not derived).
    hand_written_output: bool,
    layers: Vec<BuildLayer>,
    primitive: super::Primitive,
}

/// A change to a tool made as it is built, after every other builder call
/// (so their order does not matter): it may edit the metadata (the
/// advertised input schema, a flag) and wraps the handler, if there is one.
///
/// This is how a module built on the core adds a builder method that
/// changes how a tool runs, without the core naming that module:
/// `ToolBuilder::detached` is defined beside the runner it launches on.
pub(crate) type BuildLayer = Box<
    dyn FnOnce(&mut ToolMetadata, Option<ErasedHandler>) -> Option<ErasedHandler> + Send + Sync,
>;

/// Deserializes a validated input. A unit-like input type (`()`) is
/// advertised as the empty object, so `{}` must reach it as unit.
fn decode<I: DeserializeOwned>(input: Value) -> Result<I, ToolError> {
    let empty = input.as_object().is_some_and(|o| o.is_empty());
    match I::deserialize(input) {
        Ok(input) => Ok(input),
        Err(error) if empty => I::deserialize(Value::Null).map_err(|_| serde_issue(error)),
        Err(error) => Err(serde_issue(error)),
    }
}

fn serde_issue(error: serde_json::Error) -> ToolError {
    ToolError::invalid_input(vec![ValidationIssue::new("", error.to_string())])
}

fn encode<O: Serialize>(output: ToolOutput<O>) -> Result<ToolOutput<Value>, ToolError> {
    let data = serde_json::to_value(&output.data)
        .map_err(|e| ToolError::internal(format!("tool output could not be serialized: {e}")))?;
    Ok(ToolOutput {
        data,
        display: output.display,
    })
}

fn encode_event<O: Serialize>(event: ToolEvent<O>) -> ToolEvent {
    match event {
        ToolEvent::Result { data, display } => match serde_json::to_value(&data) {
            Ok(data) => ToolEvent::Result { data, display },
            Err(e) => ToolEvent::error(ToolError::internal(format!(
                "tool output could not be serialized: {e}"
            ))),
        },
        other => other.map_data(|_| unreachable!("only result events carry data")),
    }
}

impl ToolBuilder {
    pub(crate) fn new(name: String) -> Self {
        ToolBuilder {
            meta: ToolMetadata::new(name),
            handler: None,
            hand_written_output: false,
            required_state: Vec::new(),
            layers: Vec::new(),
            primitive: super::Primitive::Tool,
        }
    }

    /// What the definition serves: a tool (the default), or the read,
    /// get or completion handler of a resource or prompt (which a policy
    /// sees as a resource of that kind).
    pub(crate) fn primitive(mut self, primitive: super::Primitive) -> Self {
        self.primitive = primitive;
        self
    }

    /// Adds a [`BuildLayer`]; layers are applied in the order added.
    pub(crate) fn layer(mut self, layer: BuildLayer) -> Self {
        self.layers.push(layer);
        self
    }

    /// What the tool does (models read this).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.meta.description = description.into();
        self
    }

    /// A category for listings.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.meta.category = Some(category.into());
        self
    }

    /// Always listed, or on demand.
    pub fn visibility(mut self, visibility: Visibility) -> Self {
        self.meta.visibility = visibility;
        self
    }

    /// Sets the input schema from `I` (the typed handlers do this for you).
    pub fn input_schema_for<I: JsonSchema>(mut self) -> Self {
        self.meta.input_schema = schema::input_schema_for::<I>();
        self
    }

    /// Sets the advertised output schema from `O`.
    pub fn output_schema_for<O: JsonSchema>(mut self) -> Self {
        self.meta.output_schema = Some(schema::schema_for::<O>());
        self.hand_written_output = false;
        self
    }

    /// Sets the output schema by hand.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.meta.output_schema = Some(schema);
        self.hand_written_output = true;
        self
    }

    /// Overrides the input schema with a hand-written one. It is trusted:
    /// it is what adapters advertise and what dispatch enforces. Prefer the
    /// derived schema unless you are deliberately changing a surface.
    pub fn input_json_schema(mut self, schema: Value) -> Self {
        self.meta.input_json_schema = Some(schema);
        self
    }

    /// Output validation mode.
    pub fn validate_output(mut self, mode: ValidateOutput) -> Self {
        self.meta.validate_output = mode;
        self
    }

    /// Capabilities.
    pub fn capabilities(mut self, capabilities: Capabilities) -> Self {
        self.meta.capabilities = capabilities;
        self
    }

    /// Tags.
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.meta.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Keywords.
    pub fn keywords<S: Into<String>>(mut self, keywords: impl IntoIterator<Item = S>) -> Self {
        self.meta.keywords = keywords.into_iter().map(Into::into).collect();
        self
    }

    /// Related tool names.
    pub fn related_to<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.meta.related_to = names.into_iter().map(Into::into).collect();
        self
    }

    /// Relative cost.
    pub fn cost(mut self, cost: Cost) -> Self {
        self.meta.cost = Some(cost);
        self
    }

    /// Expected latency.
    pub fn latency(mut self, latency: Latency) -> Self {
        self.meta.latency = Some(latency);
        self
    }

    /// All hints at once.
    pub fn hints(mut self, hints: Hints) -> Self {
        self.meta.hints = hints;
        self
    }

    /// CLI hints.
    pub fn cli(mut self, cli: CliHints) -> Self {
        self.meta.hints.cli = cli;
        self
    }

    /// MCP hints.
    pub fn mcp(mut self, mcp: McpHints) -> Self {
        self.meta.hints.mcp = mcp;
        self
    }

    /// Pi hints.
    pub fn pi(mut self, pi: PiHints) -> Self {
        self.meta.hints.pi = pi;
        self
    }

    /// A static approval: a tier or an [`ApprovalSpec`].
    pub fn approval(mut self, approval: impl Into<Approval>) -> Self {
        self.meta.approval = Some(approval.into());
        self
    }

    /// An approval picked from the validated input JSON.
    pub fn approval_fn(
        mut self,
        f: impl Fn(&Value) -> Result<ApprovalSpec, String> + Send + Sync + 'static,
    ) -> Self {
        self.meta.approval = Some(Approval::Dynamic(Arc::new(f)));
        self
    }

    /// An approval picked from the validated, typed input.
    pub fn approval_with<I, A>(mut self, f: impl Fn(&I) -> A + Send + Sync + 'static) -> Self
    where
        I: DeserializeOwned,
        A: Into<ApprovalSpec>,
    {
        self.meta.approval = Some(Approval::Dynamic(Arc::new(move |input: &Value| {
            let input = I::deserialize(input).map_err(|e| e.to_string())?;
            Ok(f(&input).into())
        })));
        self
    }

    /// Declared authorization requirements.
    pub fn authorization(mut self, spec: AuthorizationSpec) -> Self {
        self.meta.authorization = Some(spec);
        self
    }

    /// A resource to resolve before an authenticated call.
    pub fn authorization_resource(mut self, resource: AuthorizationResource) -> Self {
        self.meta.authorization_resource = Some(resource);
        self
    }

    /// A registration predicate: when it returns `false`, registering the
    /// tool silently skips it.
    pub fn requires(mut self, f: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.meta.requires = Some(Arc::new(f));
        self
    }

    /// A capability probe; with [`degraded_description`](Self::degraded_description)
    /// it picks the advertised description.
    pub fn capability_for(
        mut self,
        f: impl Fn() -> CapabilityStatus + Send + Sync + 'static,
    ) -> Self {
        self.meta.capability_for = Some(Arc::new(f));
        self
    }

    /// The description advertised while the capability is degraded.
    pub fn degraded_description(mut self, description: impl Into<String>) -> Self {
        self.meta.degraded_description = Some(description.into());
        self
    }

    /// Stops a call that runs longer than `limit`: its handler is dropped
    /// and the call ends with a `TIMEOUT` error. Overrides the registry's
    /// default (`ToolRegistryBuilder::default_timeout`); a
    /// composed call also stops when its parent's time is up.
    /// (`#[tool(timeout = "30s")]` sets it from the macro.)
    ///
    /// Timers need a Tokio runtime with time enabled (`#[tokio::main]`
    /// enables it).
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        self.meta.timeout = Some(limit);
        self
    }

    /// Sends the input property `property` as the MCP parameter header
    /// `Mcp-Param-<header>` as well as in the body, so gateways route on it
    /// without parsing the body (what `#[tool(mcp(header(region =
    /// "Region")))]` sets). The advertised input schema carries
    /// `"x-mcp-header": "<header>"` on that property; an MCP server checks
    /// that the header matches the body (a mismatch is refused with HTTP
    /// 400) and an MCP client sends it.
    ///
    /// `property` is a top-level property of the input schema, named as the
    /// schema names it; a Rust field name also finds its
    /// `#[serde(rename_all = ..)]` form (`region_code` finds `regionCode`).
    /// `header` is HTTP token characters without the `Mcp-Param-` prefix,
    /// unique within the tool ignoring case, and the property's type is
    /// `string`, `integer` or `boolean`. Registration checks all of it and
    /// refuses the tool with [`RegistryError::InvalidMcpHeader`](crate::RegistryError::InvalidMcpHeader)
    /// naming the tool and the property; `#[tool]` checks it at compile
    /// time.
    ///
    /// ```
    /// use gonk_tools::prelude::*;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Query { region: String, text: String }
    ///
    /// let search = ToolDefinition::builder("search")
    ///     .description("Search one region.")
    ///     .handler(|q: Query, _ctx| async move { Ok::<_, ToolError>(q.text) })
    ///     .mcp_header("region", "Region")
    ///     .build();
    /// assert_eq!(search.input_schema["properties"]["region"]["x-mcp-header"], "Region");
    /// ToolRegistry::new().register(search).unwrap();
    /// ```
    pub fn mcp_header(mut self, property: impl Into<String>, header: impl Into<String>) -> Self {
        self.meta.mcp_headers.push(super::McpParamHeader {
            property: property.into(),
            header: header.into(),
        });
        self
    }

    /// How long a client may keep a listing that shows this tool (MCP's
    /// `ttlMs` on `tools/list`); overrides the registry's
    /// default (`ToolRegistryBuilder::default_cache_ttl`).
    /// Zero asks clients not to keep it. (`#[tool(cache_ttl = "5m")]` sets
    /// it from the macro.)
    pub fn cache_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.meta.cache_ttl = Some(ttl);
        self
    }

    /// The OAuth scopes a call of this tool needs (what
    /// `#[tool(scopes("notes:write"))]` sets). An authenticated caller
    /// whose token lacks one is refused with `INSUFFICIENT_SCOPE` before
    /// its input is looked at; the tool stays listed
    /// (`docs/contract.md#scopes`). A repeated scope counts once; a scope
    /// that breaks RFC 6749's rule (empty, whitespace, `"`, `\`, non-ASCII)
    /// is refused at registration with
    /// [`RegistryError::InvalidScope`](crate::RegistryError::InvalidScope).
    ///
    /// ```
    /// use gonk_tools::prelude::*;
    ///
    /// let create = ToolDefinition::builder("notes.create")
    ///     .description("Create a note.")
    ///     .scopes(["notes:write", "notes:write"])
    ///     .handler(|title: String, _ctx| async move { Ok::<_, ToolError>(title) })
    ///     .build();
    /// assert_eq!(create.required_scopes(), ["notes:write"]);
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.meta.scopes.clear();
        for scope in scopes {
            let scope = scope.into();
            if !self.meta.scopes.contains(&scope) {
                self.meta.scopes.push(scope);
            }
        }
        self
    }

    /// Links the tool to the MCP App at `resource_uri` (a `ui://` URI):
    /// `tools/list` shows it as `_meta.ui.resourceUri` (and the legacy
    /// `_meta["ui/resourceUri"]`), and a host that renders apps shows the
    /// tool's results in that app. Hosts without app support ignore it, so
    /// the tool's result stays a full text answer. What
    /// `#[tool(ui = "ui://…")]` sets; the visibility defaults to the model
    /// and the app ([`ui_visibility`](Self::ui_visibility)).
    ///
    /// Registration refuses a URI that is not `ui://`, and a tool whose
    /// app resource the registry does not hold: register the
    /// `app::AppResource` first.
    pub fn ui(mut self, resource_uri: impl Into<String>) -> Self {
        let uri = resource_uri.into();
        match &mut self.meta.ui {
            Some(ui) => ui.set_resource_uri(uri),
            None => self.meta.ui = Some(ToolUi::new(uri)),
        }
        self
    }

    /// Who may call a tool that links an app ([`ui`](Self::ui)):
    /// `[UiVisibility::App]` makes an app-only tool, which hosts keep out
    /// of the model's tool list while its app may still call it;
    /// `[UiVisibility::Model]` one the app may not call. What
    /// `#[tool(ui(uri = "ui://…", visibility = "app"))]` sets.
    pub fn ui_visibility(mut self, visibility: impl IntoIterator<Item = UiVisibility>) -> Self {
        let ui = self
            .meta
            .ui
            .take()
            .unwrap_or_else(|| ToolUi::new(String::new()));
        self.meta.ui = Some(ui.with_visibility(visibility));
        self
    }

    /// Records where an imported tool came from (an importer sets it).
    pub fn provenance(mut self, provenance: Provenance) -> Self {
        self.meta.provenance = Some(provenance);
        self
    }

    /// Words tool search ranks the tool by without any surface showing
    /// them: an importer puts an untrusted source's own description here,
    /// so `tools.search` finds the tool by it while models still read the
    /// neutral description.
    pub fn search_text(mut self, text: impl Into<String>) -> Self {
        self.meta.search_text = Some(text.into());
        self
    }

    /// Declares that the handler extracts application state `T`; the
    /// registry refuses to register the tool until it holds a `T`.
    pub fn requires_state<T: Send + Sync + 'static>(mut self) -> Self {
        let entry = (TypeId::of::<T>(), type_name::<T>());
        if !self.required_state.contains(&entry) {
            self.required_state.push(entry);
        }
        self
    }

    /// A handler returning `Result<O, E>`. Sets the input schema from `I`.
    pub fn handler<I, O, E, F, Fut>(self, f: F) -> Self
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + Send + 'static,
        E: Into<ToolError> + Send + 'static,
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
    {
        self.handler_with_output(move |input: I, ctx| f(input, ctx).map(|r| r.map(ToolOutput::new)))
    }

    /// A handler returning `Result<ToolOutput<O>, E>`: data plus a display.
    pub fn handler_with_output<I, O, E, F, Fut>(mut self, f: F) -> Self
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + Send + 'static,
        E: Into<ToolError> + Send + 'static,
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput<O>, E>> + Send + 'static,
    {
        self.meta.input_schema = schema::input_schema_for::<I>();
        self.handler = Some(Arc::new(move |input: Value, ctx: ToolContext| {
            let input: I = decode(input)?;
            let fut = f(input, ctx);
            Ok(HandlerCall::Once(Box::pin(async move {
                match fut.await {
                    Ok(output) => encode(output),
                    Err(e) => Err(e.into()),
                }
            })))
        }));
        self
    }

    /// A streaming handler: an async fn returning a stream of
    /// `ToolEvent<O>` (progress, logs, data chunks, then a result). Events
    /// pass through dispatch in order.
    pub fn stream_handler<I, O, S, F, Fut>(mut self, f: F) -> Self
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + Send + 'static,
        S: Stream<Item = ToolEvent<O>> + Send + 'static,
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = S> + Send + 'static,
    {
        self.meta.input_schema = schema::input_schema_for::<I>();
        self.handler = Some(Arc::new(move |input: Value, ctx: ToolContext| {
            let input: I = decode(input)?;
            let events = f(input, ctx).flatten_stream().map(encode_event);
            Ok(HandlerCall::Stream(Box::pin(events)))
        }));
        self
    }

    /// An untyped handler for tools made at run time: validated JSON in,
    /// JSON out. Give it a schema with [`input_json_schema`](Self::input_json_schema)
    /// (the default accepts any object).
    pub fn raw_handler<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput<Value>, ToolError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(move |input: Value, ctx: ToolContext| {
            Ok(HandlerCall::Once(Box::pin(f(input, ctx))))
        }));
        self
    }

    /// An untyped streaming handler.
    pub fn raw_stream_handler<F, S>(mut self, f: F) -> Self
    where
        F: Fn(Value, ToolContext) -> S + Send + Sync + 'static,
        S: Stream<Item = ToolEvent> + Send + 'static,
    {
        self.handler = Some(Arc::new(move |input: Value, ctx: ToolContext| {
            Ok(HandlerCall::Stream(Box::pin(f(input, ctx))))
        }));
        self
    }

    /// Finishes the definition. Name, description and hand-written schemas
    /// are checked when it is registered, which reports problems as
    /// `Result`s; derived schemas are compiled on the tool's first call.
    pub fn build(mut self) -> ToolDefinition {
        for layer in self.layers {
            self.handler = layer(&mut self.meta, self.handler.take());
        }
        let name: Arc<str> = Arc::from(self.meta.name.as_str());
        let hand_written_schema = self.hand_written_output || self.meta.input_json_schema.is_some();
        // Last, on the final schemas: a handler or an `input_json_schema`
        // set after `mcp_header` must still carry the annotation. The
        // advertised schema (the override, if any) resolves the property
        // names first.
        if !self.meta.mcp_headers.is_empty() {
            let headers = &mut self.meta.mcp_headers;
            if let Some(schema) = &mut self.meta.input_json_schema {
                super::mcp_header::annotate(schema, headers);
            }
            super::mcp_header::annotate(&mut self.meta.input_schema, headers);
        }
        let input_wrapped =
            crate::schema::wrap_non_object(self.meta.effective_input_schema()).is_some();
        ToolDefinition {
            inner: Arc::new(DefinitionInner {
                hand_written_schema,
                root_stack: Arc::from([Arc::clone(&name)]),
                input_wrapped,
                meta: self.meta,
                name,
                handler: self.handler,
                required_state: self.required_state,
                compiled: OnceLock::new(),
                policy: OnceLock::new(),
                primitive: self.primitive,
            }),
        }
    }
}
