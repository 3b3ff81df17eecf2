//! The MCP adapter: the tools/list projection and the tools/call mapping,
//! the Rust MCP client, stdio and streamable HTTP on the wire (auth, host
//! checks, limits, hostile input, shutdown, closed connections), tasks,
//! `McpSource` importing a remote server's tools, and the real `notes`
//! binary driven by independent clients and the official conformance
//! suite. The gateway built on `McpSource` has its own area, `gateway`.

mod support;

mod approval_ask;
mod apps;
mod base_context_auth;
mod client_conformance;
mod client_killed;
mod conformance;
mod connection_close;
mod detached_schema;
mod era_clients;
mod hostile_2026;
mod hostile_http;
mod hostile_stdio;
mod http_auth;
mod http_limits;
mod http_nodelay;
mod http_security;
mod mapping;
mod notes_clients;
mod notes_resources;
mod oauth_client;
mod oauth_e2e;
mod otel;
mod param_headers;
mod pressure;
mod rate_limit;
mod replay;
mod request_head;
mod request_state;
mod rust_client;
mod rust_client_asks;
mod session_calls;
mod sessionless;
mod shutdown;
mod skills;
mod source;
mod source_hostile;
mod stdio_eof;
mod stdio_wire;
mod tasks;
mod tasks_2026;
mod url_elicitation;
