//! The notes tools over WebSocket, next to MCP on `notes serve`'s port:
//! `/ws` (the `gonk_tools::adapters::ws` projection) and, at `/`, a small page that
//! lists, searches and creates notes over that socket and updates live
//! from broadcasts (`page/index.html`, plain HTML + JS).

use std::net::IpAddr;

use axum::response::Html;
use gonk_tools::adapters::http::oauth::ProtectedResource;
use gonk_tools::adapters::http::HttpServerOptions;
use gonk_tools::adapters::mcp::is_write_tool;
use gonk_tools::adapters::ws::WsHandler;
use gonk_tools::adapters::ws::{ws_router, HookError, WsRejection, WsServerOptions};
use gonk_tools::security::AuthContext;
use gonk_tools::{ToolContext, ToolRegistry};

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
    /// `--auth-issuer`: without an API key, the upgrade takes the same
    /// OAuth tokens as `/mcp`, and each socket's calls run as the token's
    /// principal.
    pub oauth: Option<ProtectedResource>,
}

/// `/ws` and the page at `/`.
pub fn routes(registry: &ToolRegistry, settings: WsSettings) -> axum::Router {
    let allow_writes = settings.allow_writes;
    // Write tools follow the same rule as over MCP HTTP: withheld unless
    // `--allow-writes` (a request for one answers `No such op`).
    // The caller is the token's principal when the upgrade carried one.
    let handler = WsHandler::<Option<AuthContext>>::builder(registry)
        .filter(move |tool| allow_writes || !is_write_tool(tool))
        .context(|auth: &Option<AuthContext>| {
            Ok::<_, HookError>(match auth {
                Some(auth) => ToolContext::new().with_auth(auth.clone()),
                None => ToolContext::new(),
            })
        });
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
    } else if let Some(resource) = settings.oauth {
        http = http.protected_resource(resource);
    }
    let options =
        WsServerOptions::new()
            .http(http)
            .identify(|request: &axum::http::request::Parts| {
                let auth = request.extensions.get::<AuthContext>().cloned();
                async move { Ok::<_, WsRejection>(auth) }
            });
    axum::Router::new()
        .route("/", axum::routing::get(|| async { Html(PAGE) }))
        .merge(ws_router(handler, options))
}
