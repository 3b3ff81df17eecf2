//! The same tool definitions, straight to a model: the `tools` entries of
//! the OpenAI, Anthropic and Gemini APIs, and the way back — a tool call
//! from the model runs through [`ToolRegistry::invoke`](crate::ToolRegistry::invoke)
//! (validation, auth, approval, metrics: the one dispatch path) and comes
//! back as the message that provider expects.
//!
//! No network and no provider SDK: projections are JSON values you put in
//! your own request body, calls are the JSON the model sent you.
//!
//! ```
//! use gonk_tools::prelude::*;
//! use gonk_tools::adapters::providers::{OpenAi, ProviderTools};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Search {
//!     /// Free-text query.
//!     query: String,
//!     limit: Option<u32>,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! registry.register(
//!     ToolDefinition::builder("notes.search")
//!         .description("Search notes.")
//!         .approval(ApprovalTier::Read)
//!         .handler(|input: Search, _ctx| async move {
//!             Ok::<_, ToolError>(format!("{} (limit {:?})", input.query, input.limit))
//!         })
//!         .build(),
//! )?;
//!
//! let openai = ProviderTools::new(registry, OpenAi::chat_completions());
//! // The `tools` of a Chat Completions request: strict, every property
//! // required, the optional `limit` as a nullable union, the name without its dot.
//! let tools = openai.tools()?;
//! assert_eq!(tools[0]["function"]["name"], "notes_search");
//! assert_eq!(tools[0]["function"]["strict"], true);
//! assert_eq!(tools[0]["function"]["parameters"]["required"], json!(["query", "limit"]));
//!
//! // A tool call from the model's reply → the `role: tool` message to send back.
//! let call = json!({
//!     "id": "call_1", "type": "function",
//!     "function": {"name": "notes_search", "arguments": "{\"query\":\"rust\",\"limit\":null}"}
//! });
//! let message = openai.call(&call, ToolContext::new()).await?;
//! assert_eq!(message, json!({"role": "tool", "tool_call_id": "call_1", "content": "rust (limit None)"}));
//! # Ok(()) }
//! ```
//!
//! ## The providers and the rules each projection follows
//!
//! * [`OpenAi`] — Chat Completions (`{type: "function", function: {name,
//!   description, parameters, strict}}`) or Responses (`{type: "function",
//!   name, …}`). With `strict: true` (the default wherever the schema
//!   allows) the parameters follow the Structured Outputs subset: every
//!   object has `additionalProperties: false`, every property is listed in
//!   `required`, an optional field becomes a union with `null`; the root is
//!   an object and not an `anyOf`; `oneOf` is advertised as `anyOf`;
//!   keywords outside the subset (`minLength`, `maxLength`, `default`,
//!   unsupported `format`s, …) are removed and restated in the property's
//!   description; at most 5,000 properties, 10 levels of nesting and 1,000
//!   enum values. A schema that cannot be made strict without changing what
//!   it accepts (a map, a tuple, an open object, a Rust enum as the whole
//!   input, …) is sent with `strict: false` and its reason is logged and
//!   kept in [`ToolProjection::notes`]. Sources:
//!   <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>,
//!   <https://platform.openai.com/docs/guides/function-calling> (strict
//!   mode; names `^[a-zA-Z0-9_-]{1,64}$`; tool results as `role: "tool"`
//!   messages with the `tool_call_id`, or `function_call_output` items with
//!   the `call_id` on the Responses API).
//! * [`Anthropic`] — `{name, description, input_schema}`; the input schema
//!   is the JSON Schema dispatch enforces, its root always `type: "object"`.
//!   Calls are `tool_use` blocks; results are `tool_result` blocks with the
//!   `tool_use_id`, `is_error: true` on failure, all of a turn's results in
//!   one `user` message. Source:
//!   <https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview>
//!   and `…/tool-use/handle-tool-calls` (names `^[a-zA-Z0-9_-]{1,64}$`).
//! * [`Gemini`] — `functionDeclarations` entries `{name, description,
//!   parameters}` whose parameters are the OpenAPI 3.0 subset of Gemini's
//!   `Schema` object: `type` (`STRING`, `INTEGER`, `NUMBER`, `BOOLEAN`,
//!   `ARRAY`, `OBJECT`, `NULL`), `format`, `title`, `description`,
//!   `nullable`, `enum` (strings), `properties`, `required`, `items`,
//!   `anyOf`, `minItems`/`maxItems`, `minLength`/`maxLength`, `pattern`,
//!   `minimum`/`maximum`, `minProperties`/`maxProperties`, `default`,
//!   `example` — no `$ref`, no `oneOf`, no `additionalProperties`, no
//!   `const`. Definitions are inlined; a schema the subset cannot express
//!   (a recursive type, a map, a tuple) is sent as `parametersJsonSchema`
//!   instead, with the reason logged. Calls are `functionCall` parts;
//!   results are `functionResponse` parts whose `response` holds `output`
//!   or `error`. Sources: <https://ai.google.dev/api/caching#Schema>,
//!   <https://ai.google.dev/api/caching#FunctionDeclaration>,
//!   <https://ai.google.dev/api/caching#FunctionResponse>,
//!   <https://ai.google.dev/gemini-api/docs/function-calling>. Google's
//!   pages disagree on whether a function name may contain `.` (the
//!   `FunctionDeclaration` reference allows it, `FunctionCall` and the
//!   Firebase SDK do not), so names follow the narrower rule, like OpenAI.
//!
//! ## Names
//!
//! Function names may not contain `.` on any of the three, so
//! `notes.search` is offered as `notes_search` and a call of `notes_search`
//! runs `notes.search` ([`crate::adapters::names`]). Two tools that would share a
//! name make [`ProviderTools::tools`] fail with an error naming both.
//!
//! ## The way back
//!
//! [`ProviderTools::call`] takes one call as the model sent it and returns
//! that provider's result message; [`ProviderTools::call_all`] runs a
//! turn's calls concurrently and returns what to append to the
//! conversation. Before dispatch the arguments are read the way a model
//! writes them: an OpenAI `arguments` string is parsed (`""` and `null`
//! mean no arguments), a non-object input is unwrapped from `{"value": …}`,
//! and `null` sent for an optional field that does not accept `null`
//! (what strict mode makes models do) is read as the field being absent —
//! so the projection accepts exactly what dispatch accepts. Results are the
//! display rendered to text ([`crate::adapters::render`]), else the data as JSON;
//! errors are `Error [CODE]: message` with the details.
//!
//! Projections are computed once per tool and cached; [`ProviderTools::tools`]
//! recomputes only what the registry changed since the last call.
//! Duplex tools are never offered (a model cannot stream input to them).
//!
//! ## Deferred loading
//!
//! [`ProviderTools::defer_loading`] marks every entry but the tool-search
//! meta-tools (`tools.search`, `tools.call`: `gonk_tools::search`, feature
//! `search`) `defer_loading: true`, so Anthropic and OpenAI load a tool's
//! definition only when the model looks for it and a catalog of a
//! thousand tools costs a few hundred tokens up front. Sources:
//! <https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>,
//! <https://developers.openai.com/api/docs/guides/tools-tool-search>.
//! Gemini has no such mark; its entries are unchanged.
//! The list is not filtered per principal: when the registry is
//! authenticated, give the model only what it may see (with
//! [`ProviderTools::filter`]) — calls still pass every auth gate, and a
//! hidden tool answers exactly like a missing one.

mod anthropic;
pub(crate) mod args;
mod gemini;
mod keywords;
mod openai;
mod openapi;
mod provider_tools;
pub(crate) mod reply;
#[cfg(feature = "rig")]
pub mod rig;
mod strict;

pub use anthropic::Anthropic;
pub use gemini::Gemini;
pub use openai::OpenAi;
pub use provider_tools::ProviderTools;

use std::sync::Arc;

use serde_json::Value;

use crate::adapters::names::SurfaceNameRules;
use crate::definition::{SurfaceProfile, ToolDefinition, ToolPredicate};
use crate::error::ToolError;
use crate::event::ToolOutput;

/// One model provider's tool format: how a definition is offered, how a
/// call is read, how a result is written. Implemented by [`OpenAi`],
/// [`Anthropic`] and [`Gemini`]; [`ProviderTools`] does the rest (names,
/// caching, dispatch).
pub trait Provider: Send + Sync + 'static {
    /// The names the provider accepts (its label is used in messages).
    fn name_rules(&self) -> SurfaceNameRules;

    /// The provider's tool entry for `def`, offered as `name` with
    /// `description`.
    fn project(&self, def: &ToolDefinition, name: &str, description: &str) -> ToolProjection;

    /// Reads one tool call as the model sent it.
    fn read_call(&self, payload: &Value) -> Result<ToolCall, CallError>;

    /// The result message (or block, or part) for `call`'s outcome.
    fn result(&self, call: &ToolCall, outcome: &Result<ToolOutput<Value>, ToolError>) -> Value;

    /// What to append to the conversation for one turn's results, in order.
    fn reply(&self, results: Vec<Value>) -> Vec<Value>;

    /// Marks a tool entry as loaded only when the model searches for it
    /// (`defer_loading: true` on Anthropic and OpenAI); `false` when the
    /// provider has no such mark (Gemini; the default), leaving the entry
    /// as it was.
    fn defer_loading(&self, entry: &mut Value) -> bool {
        let _ = entry;
        false
    }
}

/// Adds `defer_loading: true` at the top of a tool entry (where Anthropic
/// and both OpenAI APIs read it).
fn mark_deferred(entry: &mut Value) -> bool {
    match entry.as_object_mut() {
        Some(entry) => {
            entry.insert("defer_loading".to_owned(), Value::Bool(true));
            true
        }
        None => false,
    }
}

/// One tool as a provider sees it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolProjection {
    /// The registry name (`notes.search`).
    pub tool: String,
    /// The name the provider sees (`notes_search`).
    pub name: String,
    /// The provider's tool entry, ready for a request body.
    pub entry: Value,
    /// What the projection had to change, and why (e.g. why a tool is not
    /// strict, or which constraint moved into a description).
    pub notes: Vec<String>,
}

/// A tool call read from a model's reply.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The provider's id for the call (OpenAI `id` / `call_id`, Anthropic
    /// `id`, Gemini `id` when present); the result carries it back.
    pub id: Option<String>,
    /// The function name the model used.
    pub name: String,
    /// The arguments, or why they could not be read (answered with
    /// `INVALID_INPUT`).
    pub arguments: Result<Value, String>,
    pub(crate) form: CallForm,
}

/// Which wire shape a call came in, so its result goes back in the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallForm {
    ChatCompletions,
    Responses,
    ToolUse,
    FunctionCall,
}

/// A payload that is not a tool call of the provider: nothing can be
/// answered, because there is no call id to answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The payload does not have the provider's tool-call shape.
    #[error("not {expected}: {problem}")]
    NotACall {
        /// What was expected, e.g. "an OpenAI tool call".
        expected: &'static str,
        /// What is wrong with the payload.
        problem: String,
    },
    /// The tools cannot be offered at all (e.g. two share a name).
    #[error(transparent)]
    Names(#[from] crate::adapters::names::SurfaceNameError),
}

/// The tools of `registry` a model may be offered, in registration order:
/// every tool `filter` keeps, duplex ones never (a model cannot stream
/// input to them), nor tools only an MCP App may call (no app renders
/// here). Visibility does not narrow the offer: a model can call only
/// what it is offered.
pub(crate) fn offered(
    registry: &crate::registry::ToolRegistry,
    filter: Option<&Arc<ToolPredicate>>,
) -> Vec<ToolDefinition> {
    let profile = SurfaceProfile::new()
        .for_model(true)
        .filter(filter.map(|keep| &**keep));
    registry
        .list()
        .into_iter()
        .filter(|def| profile.exposure(def).is_listed())
        .collect()
}

/// `payload[key]` as a string, or a [`CallError`] saying the payload is not
/// `expected` (whose shape is `shape`).
pub(crate) fn required_str<'a>(
    payload: &'a Value,
    key: &str,
    expected: &'static str,
    shape: &str,
) -> Result<&'a str, CallError> {
    payload
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| CallError::NotACall {
            expected,
            problem: format!("it has no string `{key}`; {shape}"),
        })
}

/// The input schema as a provider takes it: the schema dispatch enforces,
/// an open one as an open object, another non-object one wrapped as
/// `{"value": …}` (calls are unwrapped before dispatch).
pub(crate) fn input_parameters(def: &ToolDefinition) -> Value {
    crate::schema::object_input_schema(def.effective_input_schema())
        .0
        .into_owned()
}
