//! The notes tools over WebSocket, next to MCP on `notes serve`'s port:
//! `/ws` (the `gonk_tools::adapters::ws` projection) and, at `/`, a small page that
//! lists, searches and creates notes over that socket and updates live
//! from broadcasts (`page/index.html`, plain HTML + JS).

use std::net::IpAddr;

use axum::response::Html;
use gonk_tools::adapters::http::HttpServerOptions;
use gonk_tools::adapters::mcp::is_write_tool;
use gonk_tools::adapters::ws::WsHandler;
use gonk_tools::adapters::ws::{ws_router, WsServerOptions};
use gonk_tools::ToolRegistry;

/// The page served at `/`.
const PAGE: &str = include_str!("page/index.html");

/// How `notes serve` exposes the WebSocket endpoint.
pub struct WsSettings {
    /// Expose the write tools (as `--allow-writes` does for MCP).
    pub allow_writes: bool,
    /// The API key (the page passes it as `?access_token=`, from `#key=`).
    pub api_key: Option<String>,
    /// The bound IP: allowed in `Host` (and as the page's origin) when it is
    /// neither loopback nor a wildcard.
    pub bind: IpAddr,
    /// What `/ws` shares with `/mcp`: the `--allow-host` names and the
    /// shutdown token (cancelled, it closes every socket).
    pub http: HttpServerOptions,
}

/// `/ws` and the page at `/`.
pub fn routes(registry: &ToolRegistry, settings: WsSettings) -> axum::Router {
    let allow_writes = settings.allow_writes;
    // Write tools follow the same rule as over MCP HTTP: withheld unless
    // `--allow-writes` (a request for one answers `No such op`).
    let handler =
        WsHandler::builder(registry).filter(move |tool| allow_writes || !is_write_tool(tool));
    let ip = settings.bind;
    let mut http = settings.http;
    if !ip.is_loopback() && !ip.is_unspecified() {
        http = http.allowed_hosts([match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        }]);
    }
    if let Some(key) = settings.api_key {
        http = http.api_key(key);
    }
    axum::Router::new()
        .route("/", axum::routing::get(|| async { Html(PAGE) }))
        .merge(ws_router(handler, WsServerOptions::new().http(http)))
}
