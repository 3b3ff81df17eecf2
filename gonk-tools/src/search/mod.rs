//! Tool search for catalogs too large to list to a model: two opt-in
//! meta-tools over an unchanging `tools/list`.
//!
//! * `tools.search` `{query, limit?}` ranks the tools the caller may
//!   discover (BM25 over names, descriptions and input-schema property
//!   names and descriptions: [`ToolIndex`]) and answers
//!   `{"tools": [{name, description, score, input_schema}]}`, best first.
//!   A tool hidden from the caller
//!   ([`ToolRegistry::list_discoverable`](crate::ToolRegistry::list_discoverable))
//!   never appears.
//! * `tools.call` `{name, arguments?}` runs a tool by name through
//!   [`ToolContext::invoke`](crate::ToolContext::invoke) — the same dispatch contract (validation,
//!   authorization, approval, timeouts, metrics) — and answers with that
//!   tool's events and result. A tool the caller may not discover answers
//!   `TOOL_NOT_FOUND`, exactly like a missing one.
//!
//! Both are ordinary tools: every surface lists the same catalog to every
//! connection (nothing is added or removed per caller), which is what the
//! MCP specification asks of `tools/list`. With
//! `ProviderTools::defer_loading` (`adapters::providers`)
//! the Anthropic and OpenAI tool lists mark every other tool
//! `defer_loading: true`, so a model is sent these two up front.
//!
//! The two names are always compiled (a surface that lists the catalog
//! treats them specially); the meta-tools and the index come with the
//! `search` feature.
//!
//! The index is built on the first search and rebuilt when the registry's
//! [`generation`](crate::ToolRegistry::generation) moves.
//!
//! ```
//! use gonk_tools::prelude::*;
//! use gonk_tools::search::{self, SearchOptions};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! registry.register(
//!     ToolDefinition::builder("weather.forecast")
//!         .description("Forecast the weather for a city.")
//!         .raw_handler(|_input, _ctx| async { Ok(ToolOutput::new(json!("sunny"))) })
//!         .build(),
//! )?;
//! search::install(&registry, SearchOptions::default())?;
//!
//! let found = registry.invoke("tools.search", json!({"query": "rain tomorrow in a city"}), ToolContext::new());
//! let found = collect_tool_outcome(found, |_| {}).await?.data;
//! assert_eq!(found["tools"][0]["name"], "weather.forecast");
//!
//! let ran = registry.invoke("tools.call", json!({"name": "weather.forecast", "arguments": {}}), ToolContext::new());
//! assert_eq!(collect_tool_outcome(ran, |_| {}).await?.data, "sunny");
//! # Ok(()) }
//! ```

#[cfg(feature = "search")]
mod index;
#[cfg(feature = "search")]
mod meta_tools;

#[cfg(feature = "search")]
pub use index::{ToolIndex, ToolMatch};
#[cfg(feature = "search")]
pub use meta_tools::{install, SearchOptions};

/// The search tool's name.
pub const SEARCH_TOOL: &str = "tools.search";

/// The call tool's name.
pub const CALL_TOOL: &str = "tools.call";
