//! Shared by the MCP tests: raw JSON-RPC over HTTP and stdio, malformed
//! requests, stateless-era requests, and tools several tests register. The independent MCP clients are
//! `gonk_tools_tests::mcp_clients` (the gateway tests drive them too).

pub mod malformed;
pub mod raw_http;
pub mod raw_stdio;
pub mod stateless;
pub mod tools;
