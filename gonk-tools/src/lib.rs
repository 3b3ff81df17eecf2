//! # gonk-tools
//!
//! Define a tool for an LLM agent **once** — an `async fn` with
//! [`#[tool]`](macro@tool) — and serve it on every surface (MCP over stdio
//! and streamable HTTP, a command line, the Pi coding agent, a WebSocket
//! projection, the tool formats of LLM provider APIs, typed Rust clients)
//! through **one dispatch contract**: the input schema you advertise is the
//! schema that is enforced, cancellation drops the handler, a panic is an
//! `INTERNAL` error and never a crash, and every call records one metric.
//!
//! ## Quick start
//!
//! Add the crates a tool needs (serde and schemars for the derives, tokio
//! to run it):
//!
//! ```sh
//! cargo add gonk-tools serde schemars tokio -F tokio/macros,tokio/rt-multi-thread
//! ```
//!
//! A tool is an `async fn` with `#[tool]`: the doc comment is its
//! description, the input type's schema is what clients see and what
//! every call is checked against.
//!
//! ```
//! use gonk_tools::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Person {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! /// Greet someone by name.
//! #[tool]
//! async fn greet(person: Person) -> String {
//!     format!("Hello, {}!", person.name)
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! registry.register(Greet::definition())?;
//! let events = registry.invoke("greet", json!({"name": "Ada"}), ToolContext::new());
//! assert_eq!(collect_tool_outcome(events, |_| {}).await?.data, "Hello, Ada!");
//! # Ok(()) }
//! ```
//!
//! ## Add what you need
//!
//! Attributes add metadata; `schemars` attributes add constraints, and the
//! schema is enforced before the handler runs:
//!
//! ```
//! use gonk_tools::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct SearchNotes {
//!     /// Free-text query.
//!     #[schemars(length(min = 1))]
//!     query: String,
//!     #[schemars(range(min = 1, max = 20))]
//!     limit: Option<u32>,
//! }
//!
//! /// Search the notes.
//! #[tool(name = "notes.search", approval = "read",
//!        capabilities(reads_fs, idempotent), mcp(read_only, idempotent))]
//! async fn notes_search(input: SearchNotes) -> Vec<String> {
//!     vec![input.query; input.limit.unwrap_or(1) as usize]
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! registry.register(NotesSearch::definition())?;
//!
//! // Two violations, two issues.
//! let events = registry.invoke("notes.search", json!({"query": "", "limit": 99}), ToolContext::new());
//! let error = collect_tool_outcome(events, |_| {}).await.unwrap_err();
//! assert_eq!(error.code, ErrorCode::InvalidInput);
//! let paths: Vec<_> = error.issues().into_iter().map(|i| i.path).collect();
//! assert_eq!(paths, ["/limit", "/query"]);
//! # Ok(()) }
//! ```
//!
//! From there: [`State<T>`] for application state, [`toolset!`] for a set
//! registered in one call with a typed client, [`client`] for clients over
//! any transport, [`adapters::providers`] for OpenAI, Anthropic and Gemini,
//! the `mcp`, `cli`, `pi`, `ws` and `rig` features for the surfaces. Tools known
//! only at run time use the builder the macro expands to,
//! [`ToolDefinition::builder`].
//!
//! ## Map of the crate, bottom-up
//!
//! Each group uses only the groups before it (and the crate's own
//! dependencies); nothing in the core names an adapter.
//!
//! 1. **Vocabulary.** [`error`] — [`ToolError`], [`ErrorCode`];
//!    [`event`] — what a call streams ([`ToolEvent`], [`ToolDisplay`], the
//!    [`ToolEventStream`] every surface consumes) and what it comes to
//!    ([`ToolOutput`], [`collect_tool_outcome`]); [`state`] — [`State<T>`];
//!    [`scope`] — the five-tier scope store; [`metrics`] — one
//!    [`MetricRecord`](metrics::MetricRecord) per call; [`rate_limit`] —
//!    per-principal, per-tool and global budgets.
//! 2. **Schemas and traces.** [`schema`] — client-ready schemas from
//!    `schemars`, compiled once and enforced on every call; [`telemetry`]
//!    — the spans dispatch and the surfaces open, named by OpenTelemetry's
//!    MCP and GenAI conventions, W3C trace context in and out, and (feature
//!    `otel`) the OTLP export.
//! 3. **What a handler gets.** [`context`] — [`ToolContext`]:
//!    cancellation, deadline, logger, cwd/env, scope, call stack, duplex
//!    input, notifications, host values. It reaches the registry running
//!    the call only through a narrow dispatch seam (composition, state,
//!    resource updates), and carries the caller's identity in a slot only
//!    [`security`] opens. [`ask`] — a tool (or the approval gate) asks its
//!    caller: elicitation, sampling, roots, through the
//!    [`Asker`](ask::Asker) the surface installs.
//! 4. **What a tool is.** [`definition`] — [`ToolDefinition`], its
//!    metadata, the [`ToolBuilder`](definition::ToolBuilder) and the one
//!    exposure rule every surface asks; [`tool`](mod@tool) — the [`Tool`]
//!    trait `#[tool]` implements, what a tool's types must be, and typed
//!    composition ([`ToolContext::call`]); [`resource`](mod@resource),
//!    [`prompt`](mod@prompt), [`completion`] — MCP's other primitives
//!    ([`#[resource]`](macro@resource), [`#[prompt]`](macro@prompt));
//!    [`app`] — MCP Apps: a tool linked to a `ui://` HTML resource a host
//!    renders ([`AppResource`](app::AppResource), `#[tool(ui = ..)]`);
//!    [`security`] — authenticated dispatch: principal, auth context and
//!    policy, approval, resource resolution, redacted audit receipts, and
//!    the gates dispatch runs; [`changes`] — every succeeded call told to
//!    listeners, and the bus replicas share.
//! 5. **The catalog.** [`registry`] — [`ToolRegistry`]: register, source
//!    catalogs, merge / extract / filter, resources and prompts, change
//!    notifications shared between processes.
//! 6. **The one path.** [`dispatch`] — [`ToolRegistry::invoke`]: look-up,
//!    cycle check, gates, validation, the handler raced against
//!    cancellation and its time limit, the outcome rule, one metric.
//! 7. **Built on it.** [`client`] — typed clients over a
//!    [`Transport`](client::Transport); [`jobs`] — detached dispatch, the
//!    job runners and the `jobs.*` tools; [`surface`] — the advertised
//!    surface as stable JSON and [`assert_surface!`]; [`search`] —
//!    `tools.search` and `tools.call` for large catalogs.
//! 8. **Surfaces.** [`adapters`] — each reaching the core through its
//!    public API only, as an adapter in another crate would:
//!    [`adapters::providers`] (OpenAI, Anthropic, Gemini; `rig`),
//!    [`adapters::ws`] (the WebSocket projection; the socket server and
//!    `WsClient` with `ws`), and behind their features `cli`, `mcp`, `pi`
//!    and `http` (the options, guard and server handle MCP and WebSocket share), with
//!    [`adapters::names`] and [`adapters::render`] shared between them.
//!
//! [`macro@tool`], [`macro@tools`], [`toolset!`], [`macro@resource`] and
//! [`macro@prompt`] define tools, sets with typed clients, resources and
//! prompts as async fns, checked at compile time; they expand to the
//! public builders.
//!
//! The long-form documentation is in [`docs`] (the same pages as `docs/`
//! in the repository): the dispatch contract — the order of the gates, the
//! outcome rule, every error code, and where gonk-tools differs from the
//! TypeScript original — the architecture, asking, jobs, resources, rate
//! limits and each surface.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod adapters;
pub mod app;
pub mod ask;
pub mod changes;
pub mod client;
pub mod completion;
pub mod context;
pub mod definition;
pub mod dispatch;
#[cfg(doc)]
pub mod docs;
pub mod error;
pub mod event;
pub mod jobs;
pub mod metrics;
pub mod prompt;
pub mod rate_limit;
pub mod registry;
pub mod resource;
pub mod schema;
pub mod scope;
pub mod search;
pub mod security;
pub mod skill;
pub mod state;
pub mod surface;
pub mod telemetry;
pub mod tool;

pub use context::ToolContext;
pub use definition::ToolDefinition;
pub use error::{ErrorCode, ToolError, ValidationIssue};
pub use event::{collect_tool_outcome, ToolEventStream, ToolOutput};
pub use event::{DisplayBlock, LogLevel, ToolDisplay, ToolEvent};
pub use registry::{CompletionTarget, PrimitiveChanges, ResourceNotifier, ResourceUpdates};
pub use registry::{RegistryError, ToolRegistry};
pub use state::State;
pub use tool::{MethodTool, NoInput, StaticTool, Tool};

/// `embed_skills!("skills")`: a folder of skills embedded at compile time.
#[doc(inline)]
pub use gonk_tools_macros::embed_skills;
/// `#[resource]` and `#[prompt]`: MCP resources and prompts from `async fn`s.
#[doc(inline)]
pub use gonk_tools_macros::{prompt, resource};
/// Attribute and function-like macros: `#[tool]`, `#[tools]`, `toolset!`.
#[doc(inline)]
pub use gonk_tools_macros::{tool, tools, toolset};

/// Writes a streaming tool's body: `yield` events, the stream ends when
/// the block does. A re-export of [`async_stream::stream!`]; see
/// [`tool`](macro@tool) for a streaming tool.
#[doc(inline)]
pub use async_stream::stream;

/// Everything a tool author usually needs, plus the serde / schemars
/// derives and `json!`.
pub mod prelude {
    pub use crate::context::ToolContext;
    pub use crate::definition::{
        ApprovalSpec, ApprovalTier, Capabilities, ToolDefinition, ValidateOutput, Visibility,
    };
    pub use crate::error::{ErrorCode, ToolError};
    pub use crate::event::{collect_tool_outcome, ToolOutput};
    pub use crate::event::{DisplayBlock, LogLevel, ToolDisplay, ToolEvent};
    pub use crate::registry::ToolRegistry;
    pub use crate::state::State;
    pub use crate::tool::{MethodTool, NoInput, StaticTool, Tool};
    pub use crate::{prompt, resource, tool, tools, toolset};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::json;
}

/// Re-exports and helpers for generated code; not a public API.
#[doc(hidden)]
pub mod __private;
