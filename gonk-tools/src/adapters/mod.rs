//! Surface adapters over the one dispatch path. Each sits behind its own
//! cargo feature; the core never depends on an adapter.

#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "pi")]
pub mod pi;
