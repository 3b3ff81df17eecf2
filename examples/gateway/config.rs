//! The gateway's config file: the `mcpServers` JSON that MCP clients
//! already use (Claude Desktop, Cursor, VS Code), with a few optional
//! fields of our own per server, and `openapiServers`: HTTP APIs imported
//! from their OpenAPI documents.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gonk_tools::adapters::mcp::oauth::{FileCredentialStore, OAuthOptions};
use gonk_tools::adapters::mcp::{McpEndpoint, McpSource, McpSourceBuilder};
use gonk_tools::adapters::openapi::{OpenApiSource, OpenApiSourceBuilder, OpenApiSpec, RouteMap};
use gonk_tools::definition::{ApprovalTier, ArgTransform, ToolTransform, TransformSet};
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
    /// HTTP APIs by id (the prefix of their tools' names), each from its
    /// OpenAPI document.
    #[serde(default, rename = "openapiServers")]
    pub apis: BTreeMap<String, ApiConfig>,
    /// Changes to served tools, by the name they are imported under; each
    /// is handed to its server's entry at load.
    #[serde(default)]
    pub transforms: BTreeMap<String, TransformConfig>,
}

/// `"transforms": {"todo.create_todo": {…}}`: the tool served instead of
/// the imported one.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransformConfig {
    /// Its new name.
    pub name: Option<String>,
    /// Its new description (what models read).
    pub description: Option<String>,
    /// Its tier: `read`, `write` or `exec`.
    pub approval: Option<String>,
    /// Changes to its arguments, by their imported name.
    #[serde(default)]
    pub arguments: BTreeMap<String, ArgumentConfig>,
}

/// One argument's change: `{"hide": true, "default": …}` (hidden behind a
/// fixed value), `{"default": …}` (shown, with a default), `{"rename":
/// "…"}`, `{"description": "…"}`, `{"schema": {…}}` (a narrower schema).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArgumentConfig {
    /// Hidden from callers; the original gets `default`, if given.
    #[serde(default)]
    pub hide: bool,
    /// The value it gets when hidden or left out.
    pub default: Option<serde_json::Value>,
    /// The name callers give it under.
    pub rename: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// Its schema for callers (checked, then the original's).
    pub schema: Option<serde_json::Value>,
}

impl TransformConfig {
    /// The transform of tool `tool`, or what to fix.
    fn transform(&self, tool: &str) -> Result<ToolTransform, String> {
        let mut transform = ToolTransform::new();
        if let Some(name) = &self.name {
            gonk_tools::definition::validate_tool_name(name)
                .map_err(|reason| format!("transforms {tool:?}: name {name:?}: {reason}"))?;
            transform = transform.name(name);
        }
        if let Some(text) = &self.description {
            transform = transform.description(text);
        }
        if let Some(tier) = &self.approval {
            let tier = ApprovalTier::parse(tier).ok_or_else(|| {
                format!(
                    "transforms {tool:?}: approval {tier:?}; use \"read\", \"write\" or \"exec\""
                )
            })?;
            transform = transform.approval(tier);
        }
        for (arg, change) in &self.arguments {
            let mut made = ArgTransform::new();
            if change.hide {
                if change.rename.is_some()
                    || change.description.is_some()
                    || change.schema.is_some()
                {
                    return Err(format!(
                        "transforms {tool:?}: argument {arg:?} is hidden, so it has no rename, description or schema; give only \"default\""
                    ));
                }
                made = match &change.default {
                    Some(value) => made.hide_with(value.clone()),
                    None => made.hide(),
                };
            } else {
                if let Some(value) = &change.default {
                    made = made.default_value(value.clone());
                }
                if let Some(name) = &change.rename {
                    made = made.rename(name);
                }
                if let Some(text) = &change.description {
                    made = made.description(text);
                }
                if let Some(schema) = &change.schema {
                    gonk_tools::schema::CompiledSchema::compile(schema).map_err(|e| {
                        format!("transforms {tool:?}: the schema of argument {arg:?} does not compile: {e}")
                    })?;
                    made = made.schema(schema.clone());
                }
            }
            transform = transform.argument(arg, made);
        }
        Ok(transform)
    }
}

/// One HTTP API: `{"spec": "URL|FILE", "baseUrl": …, "headers": {…},
/// "include": […], "exclude": […]}`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiConfig {
    /// Where its OpenAPI 3.0/3.1 document is: an `http(s)://` URL, or a
    /// file (relative to the config file's directory).
    pub spec: String,
    /// The API's base URL, if not the document's first server.
    pub base_url: Option<String>,
    /// Headers sent with every call (its credentials); `${NAME}` is
    /// replaced by the environment variable `NAME` on every call.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Import only the operations matching one of these routes
    /// (`"GET /todos/*"`, `"tag:todos"`, `"DELETE"`).
    #[serde(default)]
    pub include: Vec<String>,
    /// Leave out the operations matching one of these routes.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Tiers by operation id, instead of the method's
    /// (`{"archive_todo": "write"}`).
    #[serde(default)]
    pub approval: BTreeMap<String, String>,
    /// Seconds a call may take (`REMOTE_TIMEOUT` past it; default 30).
    pub timeout: Option<f64>,
    /// Trust its summaries and descriptions (as `--trust ID`).
    #[serde(default)]
    pub trust: bool,
    /// Skip this API.
    #[serde(default)]
    pub disabled: bool,
    /// Its tools' transforms (from the config's `transforms`).
    #[serde(skip)]
    pub transforms: TransformSet,
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
    /// How the gateway authorizes with an HTTP server that asks for a
    /// token: `{"oauth": {…}}`.
    pub auth: Option<UpstreamAuth>,
    /// Its tools' transforms (from the config's `transforms`).
    #[serde(skip)]
    pub transforms: TransformSet,
}

/// `"auth"` of an upstream: OAuth 2.1 (the only kind for now).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UpstreamAuth {
    /// The OAuth client the gateway is to the upstream's authorization
    /// server.
    pub oauth: Option<OAuthConfig>,
}

/// `"auth": {"oauth": {…}}`: who the gateway is to the upstream's
/// authorization server, what it asks for, and where its token is kept.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OAuthConfig {
    /// A client id registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// Its secret, for a confidential client; `${NAME}` is read from the
    /// environment.
    pub client_secret: Option<String>,
    /// The HTTPS URL of the gateway's Client ID Metadata Document, used as
    /// its client id where the authorization server supports those.
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for (default: those the upstream asks for).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The file the token is kept in (`login` writes it; every run reads
    /// and refreshes it); relative to the config file's directory.
    pub token_store: Option<PathBuf>,
    /// `authorizationCode` (default: a person logs in once with `login`)
    /// or `clientCredentials` (the gateway is a machine client: `clientId`
    /// and `clientSecret`, no login).
    #[serde(default)]
    pub grant: OAuthGrant,
}

/// How the gateway gets its upstream token.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum OAuthGrant {
    /// A person logs in once (`gonk-gateway --config F login SERVER`).
    #[default]
    AuthorizationCode,
    /// The gateway's own client credentials.
    ClientCredentials,
}

impl OAuthConfig {
    /// The token file (made absolute at load).
    pub fn token_file(&self) -> &Path {
        self.token_store.as_deref().unwrap_or(Path::new(""))
    }

    /// The client options: the token from the token file, refreshed there;
    /// a person's authorization only with a redirect added (`login`).
    pub fn options(&self) -> OAuthOptions {
        let mut options = match self.grant {
            OAuthGrant::ClientCredentials => OAuthOptions::client_credentials(
                self.client_id.clone().unwrap_or_default(),
                self.client_secret
                    .as_deref()
                    .map(expand)
                    .unwrap_or_default(),
            ),
            OAuthGrant::AuthorizationCode => {
                let mut options = OAuthOptions::new().client_name("gonk-gateway");
                if let Some(id) = &self.client_id {
                    options = options.client_id(id);
                    if let Some(secret) = &self.client_secret {
                        options = options.client_secret(expand(secret));
                    }
                }
                if let Some(url) = &self.client_metadata_url {
                    options = options.client_metadata_url(url);
                }
                options
            }
        };
        if !self.scopes.is_empty() {
            options = options.scopes(self.scopes.clone());
        }
        options.credential_store(FileCredentialStore::new(self.token_file()))
    }

    /// Checks the entry of server `id`; the error says what to fix.
    fn check(&self, id: &str) -> Result<(), String> {
        if self.token_store.is_none() {
            return Err(format!(
                "server {id:?}: auth.oauth needs \"tokenStore\", the file where the token is kept (e.g. \"tokens/{id}.json\")"
            ));
        }
        if self.client_id.is_some() && self.client_metadata_url.is_some() {
            return Err(format!(
                "server {id:?}: auth.oauth has both clientId and clientMetadataUrl; give one (or neither, to register dynamically)"
            ));
        }
        if self.client_secret.is_some() && self.client_id.is_none() {
            return Err(format!(
                "server {id:?}: auth.oauth has a clientSecret without the clientId it belongs to"
            ));
        }
        if let Some(url) = &self.client_metadata_url {
            let path = url
                .strip_prefix("https://")
                .and_then(|rest| rest.split_once('/'));
            if !path.is_some_and(|(host, path)| !host.is_empty() && !path.is_empty()) {
                return Err(format!(
                    "server {id:?}: auth.oauth clientMetadataUrl must be an https:// URL with a path (the client metadata document), not {url:?}"
                ));
            }
        }
        if self.grant == OAuthGrant::ClientCredentials
            && (self.client_id.is_none() || self.client_secret.is_none())
        {
            return Err(format!(
                "server {id:?}: auth.oauth grant \"clientCredentials\" needs clientId and clientSecret"
            ));
        }
        Ok(())
    }
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
        None if config.dev_router.is_some() || !config.apis.is_empty() => BTreeMap::new(),
        None => {
            return Err(format!(
                "the config {} has no \"mcpServers\" object (nor \"openapiServers\" or a \"devRouter\" section); \
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
        if let Some(auth) = &server.auth {
            check_auth(id, server, auth)?;
        }
    }
    let base = path.parent().unwrap_or(Path::new(""));
    for (id, api) in config.apis.iter_mut() {
        if config.servers.contains_key(id) {
            return Err(format!(
                "{id:?} is both an mcpServers and an openapiServers entry; the id is the prefix of its tools' names, give each its own"
            ));
        }
        api.check(id)?;
        let is_url = api.spec.starts_with("http://") || api.spec.starts_with("https://");
        if !is_url && Path::new(&api.spec).is_relative() {
            api.spec = base.join(&api.spec).display().to_string();
        }
    }
    for server in config.servers.values_mut() {
        if let Some(oauth) = server.auth.as_mut().and_then(|auth| auth.oauth.as_mut()) {
            if let Some(store) = oauth.token_store.as_mut() {
                if store.is_relative() {
                    *store = base.join(&*store);
                }
            }
        }
    }
    for (tool, change) in &config.transforms {
        let transform = change.transform(tool)?;
        let id = tool.split('.').next().unwrap_or_default();
        let (server, api) = (config.servers.get_mut(id), config.apis.get_mut(id));
        let set = match (server, api) {
            (Some(server), _) => &mut server.transforms,
            (None, Some(api)) => &mut api.transforms,
            (None, None) => {
                return Err(format!(
                    "transforms {tool:?}: no server {id:?} serves it; a transform is keyed by the imported name, <server>.<tool>"
                ))
            }
        };
        *set = std::mem::take(set).with(tool, transform);
    }
    if let Some(dev) = &config.dev_router {
        crate::dev_router::check(dev, &config.servers)?;
    }
    Ok(config)
}

/// Checks the `auth` of server `id`: OAuth, for an HTTP server, whose
/// token no header also sets.
fn check_auth(id: &str, server: &ServerConfig, auth: &UpstreamAuth) -> Result<(), String> {
    let Some(oauth) = &auth.oauth else {
        return Err(format!(
            "server {id:?}: auth must be {{\"oauth\": {{…}}}} (tokenStore, and clientId or clientMetadataUrl if the authorization server does not register clients dynamically)"
        ));
    };
    if server.url.is_none() {
        return Err(format!(
            "server {id:?}: auth applies to an HTTP server (url); a command server gets its credentials through env"
        ));
    }
    if server
        .headers
        .keys()
        .any(|name| name.eq_ignore_ascii_case("authorization"))
    {
        return Err(format!(
            "server {id:?}: has both auth.oauth and an Authorization header; the OAuth token is the Authorization, remove the header"
        ));
    }
    oauth.check(id)
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

impl ApiConfig {
    /// Checks the entry of API `id`; the error says what to fix.
    fn check(&self, id: &str) -> Result<(), String> {
        if self.spec.trim().is_empty() {
            return Err(format!(
                "openapiServers {id:?}: \"spec\" is empty; give the URL or file of its OpenAPI document"
            ));
        }
        for route in self.include.iter().chain(&self.exclude) {
            RouteMap::parse(route).map_err(|e| format!("openapiServers {id:?}: {e}"))?;
        }
        for (operation, tier) in &self.approval {
            if ApprovalTier::parse(tier).is_none() {
                return Err(format!(
                    "openapiServers {id:?}: approval of {operation:?} is {tier:?}; use \"read\", \"write\" or \"exec\""
                ));
            }
        }
        if let Some(secs) = self.timeout {
            if !(secs.is_finite() && secs > 0.0) {
                return Err(format!(
                    "openapiServers {id:?}: timeout must be a positive number of seconds, not {secs}"
                ));
            }
        }
        Ok(())
    }

    /// The source builder of API `id` (checked at load); `trusted` adds
    /// `--trust`.
    pub fn builder(&self, id: &str, trusted: bool) -> OpenApiSourceBuilder {
        let mut builder = OpenApiSource::builder(id, OpenApiSpec::file_or_url(&self.spec))
            .trust(trusted || self.trust);
        if let Some(url) = &self.base_url {
            builder = builder.base_url(expand(url));
        }
        for route in &self.include {
            if let Ok(route) = RouteMap::parse(route) {
                builder = builder.include(route);
            }
        }
        for route in &self.exclude {
            if let Ok(route) = RouteMap::parse(route) {
                builder = builder.exclude(route);
            }
        }
        for (operation, tier) in &self.approval {
            if let Some(tier) = ApprovalTier::parse(tier) {
                builder = builder.approval(operation, tier);
            }
        }
        if let Some(secs) = self.timeout {
            builder = builder.timeout(Duration::from_secs_f64(secs));
        }
        if !self.headers.is_empty() {
            let headers = self.headers.clone();
            builder = builder.headers(move || {
                Ok(headers
                    .iter()
                    .map(|(k, v)| (k.clone(), expand(v)))
                    .collect())
            });
        }
        builder.transforms(self.transforms.clone())
    }
}

impl ServerConfig {
    /// Its OAuth entry, if it has one.
    pub fn oauth(&self) -> Option<&OAuthConfig> {
        self.auth.as_ref().and_then(|auth| auth.oauth.as_ref())
    }

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
        let mut builder = McpSource::builder(id, endpoint)
            .trust(trusted || self.trust)
            .transforms(self.transforms.clone());
        if let Some(secs) = self.timeout {
            builder = builder.call_timeout(Duration::from_secs_f64(secs));
        }
        if let Some(tools) = &self.tools {
            builder = builder.allow(tools.clone());
        }
        if let Some(oauth) = self.oauth() {
            builder = builder.oauth(oauth.options());
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
    use super::*;

    /// Loads `config` from a file in a fresh directory (kept alive with it).
    fn load_json(config: serde_json::Value) -> (Result<GatewayConfig, String>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.json");
        std::fs::write(&path, config.to_string()).unwrap();
        (load(&path), dir)
    }

    fn with_auth(server: serde_json::Value) -> Result<GatewayConfig, String> {
        load_json(serde_json::json!({"mcpServers": {"notes": server}})).0
    }

    #[test]
    fn oauth_entries_are_checked_at_load_saying_what_to_fix() {
        let url = "https://notes.example/mcp";
        let cases = [
            (
                serde_json::json!({"url": url, "auth": {"oauth": {}}}),
                "needs \"tokenStore\"",
            ),
            (
                serde_json::json!({"url": url, "auth": {}}),
                "auth must be {\"oauth\"",
            ),
            (
                serde_json::json!({"command": "notes", "auth": {"oauth": {"tokenStore": "t.json"}}}),
                "auth applies to an HTTP server",
            ),
            (
                serde_json::json!({"url": url, "headers": {"authorization": "Bearer x"},
                                   "auth": {"oauth": {"tokenStore": "t.json"}}}),
                "remove the header",
            ),
            (
                serde_json::json!({"url": url, "auth": {"oauth": {"tokenStore": "t.json",
                    "clientId": "a", "clientMetadataUrl": "https://gw.example/client.json"}}}),
                "give one",
            ),
            (
                serde_json::json!({"url": url, "auth": {"oauth": {"tokenStore": "t.json",
                    "clientSecret": "s"}}}),
                "without the clientId",
            ),
            (
                serde_json::json!({"url": url, "auth": {"oauth": {"tokenStore": "t.json",
                    "clientMetadataUrl": "http://gw.example/client.json"}}}),
                "must be an https:// URL with a path",
            ),
            (
                serde_json::json!({"url": url, "auth": {"oauth": {"tokenStore": "t.json",
                    "grant": "clientCredentials", "clientId": "a"}}}),
                "needs clientId and clientSecret",
            ),
            (
                serde_json::json!({"url": url, "auth": {"oauth": {"tokenStore": "t.json",
                    "clientID": "a"}}}),
                "unknown field `clientID`",
            ),
        ];
        for (server, expected) in cases {
            let error = with_auth(server.clone()).expect_err("refused");
            assert!(error.contains(expected), "{server}: {error}");
        }
    }

    #[test]
    fn an_oauth_entry_loads_with_its_token_store_beside_the_config() {
        let (config, dir) = load_json(serde_json::json!({"mcpServers": {"notes": {
            "url": "https://notes.example/mcp",
            "auth": {"oauth": {"clientId": "gw", "scopes": ["notes:read"], "tokenStore": "tokens/notes.json"}},
        }}}));
        let config = config.expect("loads");
        let oauth = config.servers["notes"].oauth().expect("an oauth entry");
        assert_eq!(oauth.token_file(), dir.path().join("tokens/notes.json"));
        assert_eq!(oauth.grant, OAuthGrant::AuthorizationCode);
        assert_eq!(oauth.scopes, ["notes:read"]);
        assert!(
            !oauth.options().can_authorize(),
            "serving never waits for a person"
        );
    }

    #[test]
    fn openapi_servers_and_transforms_are_checked_at_load_saying_what_to_fix() {
        let api = serde_json::json!({"spec": "todo.json"});
        let cases = [
            (
                serde_json::json!({"openapiServers": {"todo": {"spec": ""}}}),
                "\"spec\" is empty",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": {"spec": "x.json", "include": ["FETCH /x"]}}}),
                "not an HTTP method",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": {"spec": "x.json", "approval": {"a": "admin"}}}}),
                "use \"read\"",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": {"spec": "x.json", "baseURL": "x"}}}),
                "unknown field `baseURL`",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": api}, "mcpServers": {"todo": {"command": "x"}}}),
                "is both an mcpServers and an openapiServers entry",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": api}, "transforms": {"other.x": {"name": "y"}}}),
                "no server \"other\" serves it",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": api}, "transforms": {"todo.x": {"name": "9"}}}),
                "name \"9\"",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": api}, "transforms": {"todo.x": {"arguments": {"a": {"hide": true, "rename": "b"}}}}}),
                "is hidden, so it has no rename",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": api}, "transforms": {"todo.x": {"arguments": {"a": {"hidden": true}}}}}),
                "unknown field `hidden`",
            ),
            (
                serde_json::json!({"openapiServers": {"todo": api}, "transforms": {"todo.x": {"approval": "maybe"}}}),
                "approval \"maybe\"",
            ),
        ];
        for (config, expected) in cases {
            let error = load_json(config.clone()).0.expect_err("refused");
            assert!(error.contains(expected), "{config}: {error}");
        }
        let (config, dir) = load_json(serde_json::json!({
            "openapiServers": {"todo": {"spec": "todo.json"}},
            "transforms": {"todo.create_todo": {"name": "todo.add", "arguments": {"done": {"hide": true, "default": false}}}},
        }));
        let config = config.expect("loads");
        let todo = &config.apis["todo"];
        assert_eq!(
            todo.spec,
            dir.path().join("todo.json").display().to_string()
        );
        assert_eq!(
            todo.transforms.names().collect::<Vec<_>>(),
            ["todo.create_todo"]
        );
    }

    #[test]
    fn variables_in_headers_are_expanded() {
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(expand("Bearer ${PATH}!"), format!("Bearer {path}!"));
        assert_eq!(expand("a ${unclosed"), "a ${unclosed");
    }
}
