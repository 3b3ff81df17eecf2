//! # gonk-tools
//!
//! Define a tool for an LLM agent **once** — an `async fn` — and serve it
//! **everywhere** (MCP, a command line, Pi, WebSocket, typed Rust clients)
//! through **one dispatch contract**: the input schema you advertise is the
//! schema that is enforced, cancellation drops the handler, a panic is an
//! `INTERNAL` error and never a crash, and every call records one metric.
//!
//! ## Quick start
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
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! registry.register(
//!     ToolDefinition::builder("notes.search")
//!         .description("Search notes.")
//!         .approval(ApprovalTier::Read)
//!         .handler(|input: SearchNotes, _ctx| async move {
//!             let limit = input.limit.unwrap_or(10) as usize;
//!             Ok::<_, ToolError>(vec![input.query; 1].into_iter().take(limit).collect::<Vec<_>>())
//!         })
//!         .build(),
//! )?;
//!
//! // The schema is enforced before the handler runs: two violations, two issues.
//! let events = registry.invoke("notes.search", json!({"query": "", "limit": 99}), ToolContext::new());
//! let error = collect_tool_outcome(events, |_| {}).await.unwrap_err();
//! assert_eq!(error.code, ErrorCode::InvalidInput);
//! let paths: Vec<_> = error.issues().into_iter().map(|i| i.path).collect();
//! assert_eq!(paths, ["/limit", "/query"]);
//! # Ok(()) }
//! ```
//!
//! ## Map of the crate
//!
//! * [`definition`] — [`ToolDefinition`], its metadata and the
//!   [`ToolBuilder`](definition::ToolBuilder); [`tool`](mod@tool) — the [`Tool`] trait
//!   that `#[tool]` implements.
//! * [`schema`] — client-ready schemas from `schemars`, compiled once and
//!   enforced on every call.
//! * [`context`] — [`ToolContext`]: cancellation, logger, cwd/env, scope,
//!   call stack, composition, duplex input; [`state`] — [`State<T>`];
//!   [`scope`] — the five-tier scope store.
//! * [`event`] — [`ToolEvent`] and [`ToolDisplay`] in the seed's wire shape;
//!   [`error`] — [`ToolError`] and [`ErrorCode`]; [`outcome`] —
//!   [`ToolOutput`] and [`collect_tool_outcome`].
//! * [`registry`] — [`ToolRegistry`]: register, sources, merge / extract /
//!   filter; [`dispatch`] — [`ToolRegistry::invoke`], the one path every
//!   call takes.
//! * [`security`] — authenticated dispatch: principal, auth context and
//!   policy, approval, resource resolution, redacted audit receipts.
//! * [`metrics`] — one [`MetricRecord`](metrics::MetricRecord) per call.
//! * [`client`] — typed clients over a [`Transport`](client::Transport);
//!   [`InProcess`](client::InProcess) runs them against a registry here.
//! * [`macro@tool`], [`macro@tools`], [`toolset!`] — define tools as async
//!   fns, group them into sets with typed clients, checked at compile time.
//! * `adapters` — the surfaces, each behind its cargo feature: `cli` (every
//!   tool a clap subcommand), `mcp` (stdio and streamable HTTP on rmcp) and
//!   `pi` (the Pi coding agent: the projection to Pi's tool shape, the
//!   JSON-lines bridge `serve_pi`, and the TypeScript extension that ships
//!   with the crate, written out by `write_pi_extension`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(any(feature = "cli", feature = "mcp", feature = "pi"))]
pub mod adapters;
pub mod client;
pub mod context;
pub mod definition;
pub mod dispatch;
pub mod error;
pub mod event;
pub mod metrics;
pub mod outcome;
pub mod registry;
pub mod schema;
pub mod scope;
pub mod security;
pub mod state;
pub mod tool;

pub use context::ToolContext;
pub use definition::ToolDefinition;
pub use dispatch::ToolEventStream;
pub use error::{ErrorCode, ToolError, ValidationIssue};
pub use event::{DisplayBlock, LogLevel, ToolDisplay, ToolEvent};
pub use outcome::{collect_tool_outcome, ToolOutput};
pub use registry::{RegistryError, ToolRegistry};
pub use state::State;
pub use tool::{MethodTool, NoInput, StaticTool, Tool};

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
    pub use crate::event::{DisplayBlock, LogLevel, ToolDisplay, ToolEvent};
    pub use crate::outcome::{collect_tool_outcome, ToolOutput};
    pub use crate::registry::ToolRegistry;
    pub use crate::state::State;
    pub use crate::tool::{MethodTool, NoInput, StaticTool, Tool};
    pub use crate::{tool, tools, toolset};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::json;
}

/// Re-exports and helpers for generated code; not a public API.
#[doc(hidden)]
pub mod __private;
