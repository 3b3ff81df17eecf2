//! The gateway's config file: the `mcpServers` JSON that MCP clients
//! already use (Claude Desktop, Cursor, VS Code), with a few optional
//! fields of our own per server.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use gonk_tools::adapters::mcp::{McpEndpoint, McpSource, McpSourceBuilder};
use serde::Deserialize;

use crate::callers::CallerConfig;

/// The whole file: `{"mcpServers": {"<id>": {…}, …}}` (or a `devRouter`
/// section instead, [`crate::dev_router`]).
#[derive(Debug, Deserialize)]
pub struct GatewayConfig {
    /// The upstream servers by id (the prefix of their tools' names);
    /// may be left out only when `devRouter` is given.
    #[serde(rename = "mcpServers")]
    servers_given: Option<BTreeMap<String, ServerConfig>>,
    /// [`Self::servers_given`], empty when left out.
    #[serde(skip)]
    pub servers: BTreeMap<String, ServerConfig>,
    /// The dev router's environments ([`crate::dev_router`]).
    #[serde(rename = "devRouter")]
    pub dev_router: Option<crate::dev_router::DevRouterConfig>,
    /// Who may call over HTTP, by name ([`crate::callers`]).
    #[serde(default)]
    pub callers: BTreeMap<String, CallerConfig>,
}

/// One upstream: `command` (+ `args`, `env`) for stdio, or `url` (+
/// `headers`) for streamable HTTP.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServerConfig {
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to its environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The URL of a streamable-HTTP server.
    pub url: Option<String>,
    /// Headers sent to it; `${NAME}` is replaced by the environment
    /// variable `NAME` on every connect.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Seconds a call to one of its tools may take (`REMOTE_TIMEOUT` past it).
    pub timeout: Option<f64>,
    /// Trust its descriptions and annotations (as `--trust ID`).
    #[serde(default)]
    pub trust: bool,
    /// Import only these remote tools (remote names).
    pub tools: Option<Vec<String>>,
    /// Skip this server.
    #[serde(default)]
    pub disabled: bool,
}

/// Reads and checks `path`; the error says what to fix.
pub fn load(path: &Path) -> Result<GatewayConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the config {}: {e}", path.display()))?;
    let mut config: GatewayConfig = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the config {} is not a valid mcpServers file: {e} \
             (expected {{\"mcpServers\": {{\"id\": {{\"command\": …}} | {{\"url\": …}}}}}})",
            path.display()
        )
    })?;
    config.servers = match config.servers_given.take() {
        Some(servers) => servers,
        None if config.dev_router.is_some() => BTreeMap::new(),
        None => {
            return Err(format!(
                "the config {} has no \"mcpServers\" object (nor a \"devRouter\" section); \
                 expected {{\"mcpServers\": {{\"id\": {{\"command\": …}} | {{\"url\": …}}}}}}",
                path.display()
            ))
        }
    };
    for (id, server) in &config.servers {
        match (&server.command, &server.url) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "server {id:?} has both command and url; give one of them"
                ))
            }
            (None, None) => {
                return Err(format!(
                    "server {id:?} has neither command nor url; give one of them"
                ))
            }
            _ => {}
        }
        if let Some(secs) = server.timeout {
            if !(secs.is_finite() && secs > 0.0) {
                return Err(format!(
                    "server {id:?}: timeout must be a positive number of seconds, not {secs}"
                ));
            }
        }
    }
    if let Some(dev) = &config.dev_router {
        crate::dev_router::check(dev, &config.servers)?;
    }
    Ok(config)
}

/// `${NAME}` replaced by the variable `NAME` (empty when unset).
pub fn expand(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find('}') {
            Some(end) => {
                let name = &rest[start + 2..start + 2 + end];
                out.push_str(&std::env::var(name).unwrap_or_default());
                rest = &rest[start + 2 + end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

impl ServerConfig {
    /// The source builder of server `id`; `trusted` adds `--trust`.
    pub fn builder(&self, id: &str, trusted: bool) -> McpSourceBuilder {
        let endpoint = match (&self.command, &self.url) {
            (Some(program), _) => self
                .env
                .iter()
                .fold(McpEndpoint::command(program, &self.args), |e, (k, v)| {
                    e.env(k, v)
                }),
            (None, Some(url)) => McpEndpoint::http(url),
            (None, None) => McpEndpoint::http(""),
        };
        let mut builder = McpSource::builder(id, endpoint).trust(trusted || self.trust);
        if let Some(secs) = self.timeout {
            builder = builder.call_timeout(Duration::from_secs_f64(secs));
        }
        if let Some(tools) = &self.tools {
            builder = builder.allow(tools.clone());
        }
        if !self.headers.is_empty() {
            let headers = self.headers.clone();
            builder = builder.headers(move || {
                let resolved = headers
                    .iter()
                    .map(|(k, v)| (k.clone(), expand(v)))
                    .collect();
                std::future::ready(Ok(resolved))
            });
        }
        builder
    }
}

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn variables_in_headers_are_expanded() {
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(expand("Bearer ${PATH}!"), format!("Bearer {path}!"));
        assert_eq!(expand("a ${unclosed"), "a ${unclosed");
    }
}
