//! `gonk-gateway` (examples/gateway) as a real process in front of real
//! upstream MCP servers: the namespaced union and its upstreams failing,
//! restarting and misbehaving; callers with their own keys, unions and
//! approval; the development router; rate limits; config reloads; and
//! tool search over a large catalog. `McpSource`, the importer the
//! gateway is built on, is tested in the `mcp` area.

mod callers;
mod dev_router;
mod limits;
mod oauth;
mod oauth_e2e;
mod reload;
mod search;
mod skills;
mod upstreams;
