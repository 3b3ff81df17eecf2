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
//! ## Map of the crate
//!
//! * [`definition`] — [`ToolDefinition`], its metadata and the
//!   [`ToolBuilder`](definition::ToolBuilder); [`tool`](mod@tool) — the [`Tool`] trait
//!   that `#[tool]` implements, and what a tool's types must be.
//! * [`schema`] — client-ready schemas from `schemars`, compiled once and
//!   enforced on every call.
//! * [`context`] — [`ToolContext`]: cancellation, deadline, logger, cwd/env, scope,
//!   call stack, composition, duplex input; [`state`] — [`State<T>`];
//!   [`scope`] — the five-tier scope store.
//! * [`event`] — [`ToolEvent`] and [`ToolDisplay`] in their JSON wire shape;
//!   [`error`] — [`ToolError`] and [`ErrorCode`]; [`event`] —
//!   [`ToolOutput`] and [`collect_tool_outcome`].
//! * [`registry`] — [`ToolRegistry`]: register, sources, merge / extract /
//!   filter; [`dispatch`] — [`ToolRegistry::invoke`], the one path every
//!   call takes.
//! * [`security`] — authenticated dispatch: principal, auth context and
//!   policy, approval, resource resolution, redacted audit receipts.
//! * [`ask`] — a tool (or the approval gate) asks its caller: elicitation,
//!   sampling, roots, through the [`Asker`](ask::Asker) the surface installs
//!   (`docs/asking.md`).
//! * [`resource`](mod@resource), [`prompt`](mod@prompt), [`completion`] —
//!   MCP's other primitives beside tools: resources by URI or RFC 6570
//!   template ([`#[resource]`](macro@resource)), prompts with typed
//!   arguments ([`#[prompt]`](macro@prompt)), completion of both;
//!   registered on the same registry and run through the same dispatch
//!   (`docs/resources.md`).
//! * [`jobs`] — detached dispatch: heavy tools return a job handle unless
//!   the caller waits (`#[tool(detached)]`, or
//!   [`dispatch_detached_with_wait`](jobs::dispatch_detached_with_wait) in
//!   a hand-written handler); the embedded job runner and the `jobs.*` tools.
//! * [`metrics`] — one [`MetricRecord`](metrics::MetricRecord) per call.
//! * [`surface`] — a registry's advertised surface as stable JSON, and
//!   [`assert_surface!`] to pin it in CI with classified (breaking /
//!   additive) changes.
//! * [`client`] — typed clients over a [`Transport`](client::Transport);
//!   [`InProcess`](client::InProcess) runs them against a registry here.
//! * [`macro@tool`], [`macro@tools`], [`toolset!`] — define tools as async
//!   fns, group them into sets with typed clients, checked at compile time.
//! * [`adapters`] — the surfaces, each reaching the core through its
//!   public API: [`adapters::providers`] (the tools as OpenAI, Anthropic
//!   and Gemini take them, their tool calls run through dispatch; `rig`
//!   with the `rig` feature), [`adapters::ws`] (the WebSocket projection
//!   over any message transport; the socket server and `WsClient` with the
//!   `ws` feature), and behind their features `cli` (every tool a clap
//!   subcommand), `mcp` (stdio and streamable HTTP on rmcp), `pi` (the Pi
//!   coding agent: the projection to Pi's tool shape, the JSON-lines bridge
//!   `serve_pi`, and the TypeScript extension written out by
//!   `write_pi_extension`) and `http` (the Host/Origin/bearer guard MCP and
//!   WebSocket share). Shared by the surfaces: [`adapters::names`] — the
//!   reversible mapping of tool names onto surfaces that cannot carry
//!   them; [`adapters::render`] — results and errors as plain text.
//!
//! **Layering.** The core (definition, schema, context, event, error,
//! outcome, registry, metrics) knows security only by its public types:
//! the registry holds its [`SecurityOptions`](security::SecurityOptions)
//! like its metrics sink, a definition caches the tool as a policy sees it
//! (a [`ResourceRef`](security::ResourceRef), built once and lent to every
//! call), and a context carries a caller's
//! [`AuthContext`](security::AuthContext) in a slot it does not open.
//! [`dispatch`] is the one place that calls into security (its gates, one
//! narrow seam), so the rules of authenticated dispatch live in
//! [`security`] alone and the unauthenticated path never touches them.
//! The contract every call follows — the order of the gates, the outcome
//! rule, every error code, and where it differs from the TypeScript
//! original — is written down in `docs/contract.md`, and the layers in
//! `docs/architecture.md`, in the repository.
//!
//! [`telemetry`] names the `tracing` spans dispatch and the surfaces open
//! with OpenTelemetry's MCP and GenAI conventions, carries W3C trace
//! context in and out, and (feature `otel`) exports spans and metrics over
//! OTLP; without a subscriber the spans cost nothing.
//!
//! [`jobs`] is built on the core, not part of it: a definition only carries
//! the `detached` flag, and `ToolBuilder::detached` (what `#[tool(detached)]`
//! expands to) is defined in [`jobs`] and reaches the tool through the
//! builder's build-time layer; the runner a detached call launches on is
//! registry state that [`jobs::install`] puts there.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod adapters;
pub mod ask;
pub mod changes;
pub mod client;
pub mod completion;
pub mod context;
pub mod definition;
pub mod dispatch;
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
