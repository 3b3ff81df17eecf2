//! The gateway's state (one registry, a source per upstream), its audit
//! file, the upkeep while serving (reconnecting dead upstreams, reloading
//! the config on SIGHUP or file change), and the `mcp` and `serve` commands.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use gonk_tools::adapters::cli::clap::{value_parser, Arg, ArgMatches, Command};
use gonk_tools::adapters::cli::exit;
use gonk_tools::adapters::http::oauth::{JwtVerifier, ProtectedResource};
use gonk_tools::adapters::http::HttpServerOptions;
use gonk_tools::adapters::mcp::{
    serve_http, serve_stdio_with_shutdown, McpClientError, McpHttpOptions, McpServerOptions,
    McpSource, McpSourceError, WriteToolPolicy,
};
use gonk_tools::adapters::ws::{ws_router, HookError, WsHandler, WsRejection, WsServerOptions};
use gonk_tools::prelude::*;
use gonk_tools::rate_limit::RateLimits;
use gonk_tools::security::{
    provider_fn, AuditReceipt, AuditSink, AuthContext, SecurityError, SecurityOptions,
};
use gonk_tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

use crate::callers::{self, CallerApproval, Callers};
use crate::config::{self, ApiConfig, ServerConfig};
use crate::config_watch::{self, ConfigWatch};
use crate::dev_router::{self, DevRouter};
use gonk_tools::adapters::openapi::{OpenApiSource, OpenApiSourceError};

/// The port `serve` listens on unless `--port` says otherwise.
const DEFAULT_PORT: u16 = 8809;

/// One upstream (connected, or held while it cannot be reached) and the
/// config it was connected with.
struct Upstream {
    config: ServerConfig,
    source: Arc<McpSource>,
    /// Reconnects that failed in a row, and when the next may be tried:
    /// the health check backs off from a server that stays down.
    backoff: Backoff,
}

/// The health check's backoff for one upstream: after `n` failures in a
/// row the next try waits `interval × 2^n` ticks' worth, at most
/// [`MAX_BACKOFF_TICKS`] health-check intervals.
#[derive(Debug, Default)]
struct Backoff {
    failures: u32,
    skip: u64,
}

/// The most health-check intervals between two tries of a server that
/// stays down.
const MAX_BACKOFF_TICKS: u64 = 8;

impl Backoff {
    /// Whether this tick tries; counts the tick off otherwise.
    fn due(&mut self) -> bool {
        if self.skip == 0 {
            return true;
        }
        self.skip -= 1;
        false
    }

    fn failed(&mut self) {
        self.failures = self.failures.saturating_add(1);
        self.skip = (1u64 << self.failures.min(6)).min(MAX_BACKOFF_TICKS) - 1;
    }

    fn succeeded(&mut self) {
        *self = Backoff::default();
    }
}

/// One HTTP API (`openapiServers`) and the config it was imported with.
struct Api {
    config: ApiConfig,
    /// `None` while its document cannot be read: its namespace is held
    /// (calls answer `REMOTE_UNAVAILABLE`) and `heal` tries again.
    source: Option<OpenApiSource>,
    /// Why its document could not be read, the last time it was tried.
    error: Arc<Mutex<String>>,
    backoff: Backoff,
}

/// The tool answering for every name under API `id` while its document
/// cannot be read (see [`ToolRegistry::hold_source`]): `REMOTE_UNAVAILABLE`
/// with the last error.
fn api_placeholder(id: &str, error: Arc<Mutex<String>>) -> ToolDefinition {
    let api = id.to_owned();
    ToolDefinition::builder(format!("{id}.unavailable"))
        .description(format!(
            "Stands for the operations of HTTP API {id}, whose OpenAPI document cannot be read."
        ))
        .approval(gonk_tools::definition::ApprovalTier::Read)
        .handler(move |_: serde_json::Value, _ctx: ToolContext| {
            let message = error.lock().unwrap_or_else(|p| p.into_inner()).clone();
            std::future::ready(Err::<serde_json::Value, _>(
                ToolError::new(
                    ErrorCode::RemoteUnavailable,
                    format!(
                        "HTTP API {api} is configured but its OpenAPI document cannot be read \
                         ({message}); its operations appear once it can, which is retried in the background"
                    ),
                )
                .with_details(serde_json::json!({"name": api, "message": message})),
            ))
        })
        .input_json_schema(serde_json::json!({"type": "object"}))
        .build()
}

/// The registry the adapters serve and the sources that fill it.
#[derive(Clone)]
pub struct Gateway {
    registry: ToolRegistry,
    upstreams: Arc<tokio::sync::Mutex<BTreeMap<String, Upstream>>>,
    apis: Arc<tokio::sync::Mutex<BTreeMap<String, Api>>>,
    config: Option<PathBuf>,
    trust: Arc<Vec<String>>,
    audited: bool,
    searching: bool,
    callers: Callers,
    /// With a `devRouter` config: its environments ([`crate::dev_router`]).
    dev: Option<DevRouter>,
}

/// Appends each receipt to a file as one JSON line.
struct FileAudit(Mutex<File>);

impl AuditSink for FileAudit {
    fn record(&self, receipt: AuditReceipt) -> BoxFuture<'_, Result<(), SecurityError>> {
        let written = serde_json::to_string(&receipt)
            .map_err(SecurityError::new)
            .and_then(|line| {
                let mut file = self.0.lock().unwrap_or_else(|p| p.into_inner());
                writeln!(file, "{line}")
                    .and_then(|()| file.flush())
                    .map_err(SecurityError::new)
            });
        Box::pin(std::future::ready(written))
    }
}

impl Gateway {
    /// A gateway with no upstreams (for `--help` without a config).
    pub fn empty() -> Gateway {
        Gateway {
            registry: ToolRegistry::new(),
            upstreams: Arc::default(),
            apis: Arc::default(),
            config: None,
            trust: Arc::default(),
            audited: false,
            searching: false,
            callers: Callers::default(),
            dev: None,
        }
    }

    /// Reads `config`, connects every enabled upstream (one that fails is
    /// reported on stderr and left out; the others are served), with
    /// `audit` keeps a receipt of every call in that file, with `limits`
    /// limits each principal's calls, and approves the operator's
    /// `write`/`exec` calls as `approval` says.
    pub async fn start(
        config: PathBuf,
        trust: Vec<String>,
        audit: Option<&Path>,
        limits: Option<RateLimits>,
        approval: CallerApproval,
    ) -> Result<Gateway, String> {
        let loaded = config::load(&config)?;
        let servers = loaded.servers;
        let callers = Callers::default();
        callers.set(&loaded.callers)?;
        callers.set_operator_approval(approval);
        for id in &trust {
            if !servers.contains_key(id) && !loaded.apis.contains_key(id) {
                return Err(format!(
                    "--trust {id}: the config has no server {id:?} (it has: {})",
                    servers
                        .keys()
                        .chain(loaded.apis.keys())
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        // Approval: the operator's calls and reads are approved, a caller's
        // as the config says (only authenticated calls reach the provider).
        let deciding = callers.clone();
        let mut security = SecurityOptions::new()
            .approval_provider(provider_fn(move |request| Ok(deciding.decide(&request))));
        if let Some(path) = audit {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("cannot open the audit file {}: {e}", path.display()))?;
            security = security
                .audit_sink(FileAudit(Mutex::new(file)))
                .mandatory_audit(true);
        }
        let mut registry = ToolRegistry::builder().security(security);
        if let Some(limits) = limits {
            registry = registry.rate_limits(limits);
        }
        let registry = registry.build();
        let mut gateway = Gateway {
            registry,
            upstreams: Arc::default(),
            apis: Arc::default(),
            config: Some(config),
            trust: Arc::new(trust),
            audited: audit.is_some(),
            searching: false,
            callers,
            dev: None,
        };
        crate::login::install(&gateway, &servers)?;
        gateway.apply(servers).await;
        gateway.apply_apis(loaded.apis).await;
        if let Some(dev) = loaded.dev_router {
            gateway.dev = Some(DevRouter::start(dev, &gateway.registry).await);
        }
        Ok(gateway)
    }

    /// Adds `tools.search` and `tools.call` ([`crate::tool_search`]); MCP
    /// then lists only those two.
    pub fn with_search(mut self) -> Result<Gateway, String> {
        if self.dev.is_some() {
            return Err("--search does not apply to a devRouter config".to_owned());
        }
        crate::tool_search::install(&self.registry)?;
        self.searching = true;
        Ok(self)
    }

    /// Whether `--search` is on.
    pub fn searching(&self) -> bool {
        self.searching
    }

    /// The registry holding every upstream's tools.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// What one stdio session or command-line call is served: the
    /// upstreams' tools, or under a dev router the active environment's
    /// (for the whole run).
    pub fn served_registry(&self) -> ToolRegistry {
        self.dev
            .as_ref()
            .and_then(DevRouter::active_registry)
            .unwrap_or_else(|| self.registry.clone())
    }

    /// The context calls start from: the operator's when receipts are kept
    /// or its calls are asked (so the audit and approval gates run), else
    /// a plain one.
    pub fn base_context(&self) -> ToolContext {
        if self.audited || self.callers.operator_asks() {
            ToolContext::new().with_auth(callers::operator())
        } else {
            ToolContext::new()
        }
    }

    /// Makes the upstreams those of `servers`: unchanged ones stay
    /// connected, changed ones are closed and connected anew, removed ones
    /// closed, new ones connected. Failures are reported on stderr.
    async fn apply(&self, servers: BTreeMap<String, ServerConfig>) {
        let mut upstreams = self.upstreams.lock().await;
        let wanted: BTreeMap<String, ServerConfig> = servers
            .into_iter()
            .filter(|(_, server)| !server.disabled)
            .collect();
        let stale: Vec<String> = upstreams
            .iter()
            .filter(|(id, up)| wanted.get(*id) != Some(&up.config))
            .map(|(id, _)| id.clone())
            .collect();
        for id in stale {
            if let Some(up) = upstreams.remove(&id) {
                let _ = up.source.close().await;
                eprintln!("gonk-gateway: closed {id}");
            }
        }
        let to_connect: Vec<(String, ServerConfig)> = wanted
            .into_iter()
            .filter(|(id, _)| !upstreams.contains_key(id))
            .collect();
        let connecting = to_connect.into_iter().map(|(id, server)| {
            let trusted = self.trust.contains(&id);
            let registry = self.registry.clone();
            async move {
                // One that cannot be reached keeps its namespace (calls
                // answer REMOTE_UNAVAILABLE) and is retried by `heal`.
                let result = server
                    .builder(&id, trusted)
                    .connect_or_hold(&registry)
                    .await;
                (id, server, result)
            }
        });
        for (id, server, result) in futures::future::join_all(connecting).await {
            match result {
                Ok(source) => {
                    if let Some(error) = source.unreachable() {
                        eprintln!(
                            "gonk-gateway: {} until it answers (retried in the background): calls under {id}. answer REMOTE_UNAVAILABLE",
                            self.not_served(&id, &error)
                        );
                    }
                    upstreams.insert(
                        id,
                        Upstream {
                            config: server,
                            source: Arc::new(source),
                            backoff: Backoff::default(),
                        },
                    );
                }
                Err(error) => eprintln!("gonk-gateway: {}", self.not_served(&id, &error)),
            }
        }
    }

    /// Makes the HTTP APIs those of `apis`: unchanged ones stay, changed
    /// ones are imported anew, removed ones closed, new ones imported. One
    /// whose document is refused is reported on stderr and not served; the
    /// others are.
    async fn apply_apis(&self, apis: BTreeMap<String, ApiConfig>) {
        let mut current = self.apis.lock().await;
        let wanted: BTreeMap<String, ApiConfig> =
            apis.into_iter().filter(|(_, api)| !api.disabled).collect();
        let stale: Vec<String> = current
            .iter()
            .filter(|(id, api)| wanted.get(*id) != Some(&api.config))
            .map(|(id, _)| id.clone())
            .collect();
        for id in stale {
            if let Some(api) = current.remove(&id) {
                match api.source {
                    Some(source) => source.close(),
                    None => {
                        self.registry.remove_source(&id);
                    }
                }
                eprintln!("gonk-gateway: closed {id}");
            }
        }
        let importing = wanted
            .into_iter()
            .filter(|(id, _)| !current.contains_key(id))
            .map(|(id, config)| {
                let trusted = self.trust.contains(&id);
                let registry = self.registry.clone();
                async move {
                    let result = config.builder(&id, trusted).connect(&registry).await;
                    (id, config, result)
                }
            });
        for (id, config, result) in futures::future::join_all(importing).await {
            match result {
                Ok(source) => {
                    report_skipped(&id, &source);
                    current.insert(
                        id,
                        Api {
                            config,
                            source: Some(source),
                            error: Arc::default(),
                            backoff: Backoff::default(),
                        },
                    );
                }
                // A document that cannot be read yet (the API still
                // starting, a network error) is tried again while serving;
                // one that is refused waits for a fixed config.
                Err(error @ OpenApiSourceError::Read { .. }) => {
                    eprintln!(
                        "gonk-gateway: {error}; its tools are served once it can be read (retried in the background): calls under {id}. answer REMOTE_UNAVAILABLE"
                    );
                    let last = Arc::new(Mutex::new(error.to_string()));
                    if let Err(held) = self
                        .registry
                        .hold_source(&id, api_placeholder(&id, Arc::clone(&last)))
                    {
                        eprintln!("gonk-gateway: {id}: its namespace cannot be held: {held}");
                    }
                    let mut backoff = Backoff::default();
                    backoff.failed();
                    current.insert(
                        id,
                        Api {
                            config,
                            source: None,
                            error: last,
                            backoff,
                        },
                    );
                }
                Err(error) => eprintln!("gonk-gateway: {error}; its tools are not served"),
            }
        }
    }

    /// Imports the APIs whose document could not be read, each when its
    /// backoff is due: the first import that succeeds serves its tools
    /// (clients get `tools/list_changed`).
    async fn heal_apis(&self) {
        let due: Vec<(String, ApiConfig)> = self
            .apis
            .lock()
            .await
            .iter_mut()
            .filter(|(_, api)| api.source.is_none())
            .filter_map(|(id, api)| api.backoff.due().then(|| (id.clone(), api.config.clone())))
            .collect();
        for (id, config) in due {
            let trusted = self.trust.contains(&id);
            let result = config.builder(&id, trusted).connect(&self.registry).await;
            let mut apis = self.apis.lock().await;
            let Some(api) = apis.get_mut(&id).filter(|api| api.source.is_none()) else {
                continue;
            };
            match result {
                Ok(source) => {
                    eprintln!(
                        "gonk-gateway: imported {id} (catalog revision {})",
                        source.revision()
                    );
                    report_skipped(&id, &source);
                    api.source = Some(source);
                    api.backoff.succeeded();
                }
                Err(error) => {
                    eprintln!("gonk-gateway: {id} is still not served: {error}");
                    *api.error.lock().unwrap_or_else(|p| p.into_inner()) = error.to_string();
                    api.backoff.failed();
                }
            }
        }
    }

    /// What to say of upstream `id` that could not be connected: an
    /// upstream that needs a login says how to log in.
    fn not_served(&self, id: &str, error: &McpSourceError) -> String {
        let needs_login = matches!(
            error,
            McpSourceError::Connect {
                source: McpClientError::AuthorizationRequired(_),
                ..
            }
        );
        match (&self.config, needs_login) {
            (Some(config), true) => format!(
                "{id} needs a login: run `gonk-gateway --config {} login {id}`; its tools are not served",
                config.display()
            ),
            _ => format!("{error}; its tools are not served"),
        }
    }

    /// The config file it serves.
    pub fn config_path(&self) -> Option<&Path> {
        self.config.as_deref()
    }

    /// Whether upstream `id` is connected (its tools served): not held
    /// unreachable, e.g. waiting for a login.
    pub async fn is_connected(&self, id: &str) -> bool {
        self.upstreams
            .lock()
            .await
            .get(id)
            .is_some_and(|up| up.source.unreachable().is_none())
    }

    /// Connects the upstreams of the config file that are not connected
    /// (one that just got its token, after a login); the connected ones
    /// stay as they are.
    pub async fn connect_missing(&self) {
        // The ones held since start (no token yet) try again now rather
        // than at their next health check.
        let held: Vec<(String, Arc<McpSource>)> = self
            .upstreams
            .lock()
            .await
            .iter()
            .filter(|(_, up)| up.source.unreachable().is_some())
            .map(|(id, up)| (id.clone(), Arc::clone(&up.source)))
            .collect();
        for (id, source) in held {
            match source.reconnect().await {
                Ok(revision) => {
                    eprintln!("gonk-gateway: connected {id} (catalog revision {revision})")
                }
                Err(error) => eprintln!("gonk-gateway: {id} is still not served: {error}"),
            }
        }
        let Some(path) = &self.config else { return };
        match config::load(path) {
            Ok(config) => {
                let missing: BTreeMap<String, ServerConfig> = {
                    let upstreams = self.upstreams.lock().await;
                    config
                        .servers
                        .into_iter()
                        .filter(|(id, _)| !upstreams.contains_key(id))
                        .collect()
                };
                let mut wanted: BTreeMap<String, ServerConfig> = self
                    .upstreams
                    .lock()
                    .await
                    .iter()
                    .map(|(id, up)| (id.clone(), up.config.clone()))
                    .collect();
                wanted.extend(missing);
                self.apply(wanted).await;
            }
            Err(error) => eprintln!("gonk-gateway: {error}"),
        }
    }

    /// The upstreams not reached since start and the APIs whose document
    /// could not be read, with their last errors (what `list` marks).
    pub async fn unreachable(&self) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = self
            .upstreams
            .lock()
            .await
            .iter()
            .filter_map(|(id, up)| {
                let error = up.source.unreachable()?;
                Some((id.clone(), error.to_string()))
            })
            .collect();
        for (id, api) in self.apis.lock().await.iter() {
            if api.source.is_none() {
                let error = api.error.lock().unwrap_or_else(|p| p.into_inner()).clone();
                found.push((id.clone(), error));
            }
        }
        found
    }

    /// Rereads the config file and applies it.
    async fn reload(&self) {
        let Some(path) = &self.config else { return };
        match config::load(path) {
            Ok(config) => {
                if self.dev.is_some() != config.dev_router.is_some() {
                    eprintln!("gonk-gateway: reload refused, the old config stays: a devRouter section cannot be added or removed while the gateway runs (restart it)");
                    return;
                }
                if let Err(error) = self.callers.set(&config.callers) {
                    eprintln!("gonk-gateway: reload refused, the old config stays: {error}");
                    return;
                }
                self.apply(config.servers).await;
                self.apply_apis(config.apis).await;
                if let (Some(dev), Some(wanted)) = (&self.dev, config.dev_router) {
                    dev.apply(wanted).await;
                }
                eprintln!("gonk-gateway: reloaded {}", path.display());
            }
            Err(error) => eprintln!("gonk-gateway: reload refused, the old config stays: {error}"),
        }
    }

    /// Reconnects every upstream whose connection is no good any more
    /// ([`McpSource::is_disconnected`]): one still down stays as it is.
    async fn heal(&self) {
        if let Some(dev) = &self.dev {
            dev.heal().await;
        }
        self.heal_apis().await;
        let sources: Vec<(String, Arc<McpSource>)> = self
            .upstreams
            .lock()
            .await
            .iter_mut()
            .filter(|(_, up)| up.source.is_disconnected())
            .filter_map(|(id, up)| {
                up.backoff
                    .due()
                    .then(|| (id.clone(), Arc::clone(&up.source)))
            })
            .collect();
        for (id, source) in sources {
            let reconnected = source.reconnect().await;
            match &reconnected {
                Ok(revision) => {
                    eprintln!("gonk-gateway: reconnected {id} (catalog revision {revision})")
                }
                Err(error) => eprintln!("gonk-gateway: {id} is down: {error}"),
            }
            if let Some(up) = self.upstreams.lock().await.get_mut(&id) {
                match reconnected {
                    Ok(_) => up.backoff.succeeded(),
                    Err(_) => up.backoff.failed(),
                }
            }
        }
    }

    /// Until `stop`: reconnects dead upstreams every `interval`, and
    /// reloads the config on SIGHUP or when the file changes
    /// ([`crate::config_watch`]).
    fn keep_up(&self, interval: Duration, stop: CancellationToken) {
        let gateway = self.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            let mut hangup =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
            let mut watch = gateway.config.clone().map(ConfigWatch::new);
            let mut heal =
                tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
            let mut poll = tokio::time::interval(config_watch::POLL);
            heal.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                #[cfg(unix)]
                let reload = async {
                    match hangup.as_mut() {
                        Some(signal) => {
                            signal.recv().await;
                        }
                        None => std::future::pending().await,
                    }
                };
                #[cfg(not(unix))]
                let reload = std::future::pending::<()>();
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = heal.tick() => gateway.heal().await,
                    _ = poll.tick() => {
                        if watch.as_mut().is_some_and(ConfigWatch::changed) {
                            gateway.reload().await;
                        }
                    }
                    () = reload => gateway.reload().await,
                }
            }
        });
    }

    /// Closes every upstream.
    pub async fn close(&self) {
        for (id, api) in std::mem::take(&mut *self.apis.lock().await) {
            match api.source {
                Some(source) => source.close(),
                None => {
                    self.registry.remove_source(&id);
                }
            }
        }
        let mut upstreams = self.upstreams.lock().await;
        for (_, up) in std::mem::take(&mut *upstreams) {
            let _ = up.source.close().await;
        }
        if let Some(dev) = &self.dev {
            dev.close().await;
        }
    }
}

/// Reports the operations of `source` left out as not supported.
fn report_skipped(id: &str, source: &OpenApiSource) {
    for (route, why) in source.skipped() {
        eprintln!("gonk-gateway: {id}: {route} is not served: {why}");
    }
}

/// Resolves on SIGTERM or Ctrl-C.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

fn failure(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(exit::FAILURE)
}

/// The MCP options both transports share: every imported tool is exposed
/// (they are `exec` tools; the operator chose them by configuring the
/// upstream, and `serve` puts an API key in front). Under `--search` only
/// the always-visible meta-tools are listed; the imported (on-demand)
/// tools stay callable by name.
fn server_options(gateway: &Gateway) -> McpServerOptions {
    let context = gateway.base_context();
    McpServerOptions::new("gonk-gateway", env!("CARGO_PKG_VERSION"))
        .title("gonk-tools gateway")
        .instructions("The tools of several MCP servers, each named <server>.<tool>.")
        .write_policy(WriteToolPolicy::Permissive)
        .only_always_visible(gateway.searching)
        .base_context(move || context.clone())
}

fn interval(matches: &ArgMatches) -> Duration {
    Duration::from_secs(
        matches
            .get_one::<u64>("health-interval")
            .copied()
            .unwrap_or(2),
    )
}

/// `gonk-gateway mcp`.
pub fn stdio_command() -> Command {
    Command::new("mcp").about("Serve the upstreams' tools over MCP on stdin/stdout")
}

/// Runs `gonk-gateway mcp` until the client disconnects (or SIGTERM / Ctrl-C).
pub async fn run_stdio(gateway: Gateway, matches: ArgMatches) -> ExitCode {
    let stop = CancellationToken::new();
    gateway.keep_up(interval(&matches), stop.clone());
    let served = serve_stdio_with_shutdown(
        gateway.served_registry(),
        server_options(&gateway),
        terminated(),
    )
    .await;
    stop.cancel();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(error),
    }
}

/// `gonk-gateway serve`.
pub fn serve_command() -> Command {
    Command::new("serve")
        .about("Serve the upstreams' tools over MCP streamable HTTP at http://HOST:PORT/mcp and WebSocket at ws://HOST:PORT/ws")
        .arg(
            Arg::new("host")
                .long("host")
                .value_name("H")
                .value_parser(value_parser!(IpAddr))
                .default_value("127.0.0.1")
                .help("The address to bind; anything but loopback needs --api-key"),
        )
        .arg(
            Arg::new("port")
                .long("port")
                .value_name("N")
                .value_parser(value_parser!(u16))
                .default_value(DEFAULT_PORT.to_string())
                .help("The port to listen on (0 picks a free one)"),
        )
        .arg(
            Arg::new("api-key")
                .long("api-key")
                .value_name("K")
                .help("Require `Authorization: Bearer K` on every request [env: GONK_GATEWAY_API_KEY]"),
        )
        .arg(
            Arg::new("auth-issuer")
                .long("auth-issuer")
                .value_name("URL")
                .conflicts_with("api-key")
                .help(
                    "Accept OAuth access tokens (JWTs) of this issuer on /mcp and /ws, verified \
                     against the keys its metadata publishes (the gateway's own callers' tokens: \
                     never passed to an upstream)",
                ),
        )
        .arg(
            Arg::new("auth-audience")
                .long("auth-audience")
                .value_name("URL")
                .requires("auth-issuer")
                .help(
                    "The resource URI tokens must be issued for [default: the gateway's own MCP \
                     URL, http://HOST:PORT/mcp]",
                ),
        )
}

/// The resource server `--auth-issuer` asks for, if it does.
fn oauth_resource(matches: &ArgMatches, host: IpAddr) -> Result<Option<ProtectedResource>, String> {
    let Some(issuer) = matches.get_one::<String>("auth-issuer") else {
        return Ok(None);
    };
    let verifier = JwtVerifier::new(issuer).map_err(|error| format!("--auth-issuer: {error}"))?;
    let resource = ProtectedResource::new(verifier).authorization_server(issuer);
    match matches.get_one::<String>("auth-audience") {
        Some(audience) => resource
            .resource(audience)
            .map(Some)
            .map_err(|error| format!("--auth-audience: {error}")),
        None if !host.is_loopback() => Err(
            "--auth-issuer on a non-loopback --host needs --auth-audience: the URL clients reach \
             the gateway's /mcp at (tokens are issued for it)"
                .to_owned(),
        ),
        None => Ok(Some(resource)),
    }
}

/// Runs `gonk-gateway serve` until SIGTERM / Ctrl-C.
pub async fn run_serve(gateway: Gateway, matches: ArgMatches) -> ExitCode {
    let host = matches
        .get_one::<IpAddr>("host")
        .copied()
        .unwrap_or(IpAddr::from([127, 0, 0, 1]));
    let port = matches
        .get_one::<u16>("port")
        .copied()
        .unwrap_or(DEFAULT_PORT);
    let key = matches.get_one::<String>("api-key").cloned().or_else(|| {
        std::env::var("GONK_GATEWAY_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
    });
    let oauth = match oauth_resource(&matches, host) {
        Ok(oauth) => oauth,
        Err(error) => return failure(error),
    };
    if let Some(resource) = oauth {
        if gateway.dev.is_some() || gateway.callers.any() {
            return failure(
                "--auth-issuer and the config's callers (or devRouter) both say who calls; use one",
            );
        }
        return run_oauth_serve(gateway, SocketAddr::new(host, port), resource, &matches).await;
    }
    if let Some(dev) = gateway.dev.clone() {
        return run_dev_serve(gateway, dev, SocketAddr::new(host, port), key, &matches).await;
    }
    // One shutdown for /mcp and /ws.
    let stop = CancellationToken::new();
    let shared = HttpServerOptions::new().shutdown_token(stop.clone());
    let mut ws = shared.clone();
    if let Some(key) = &key {
        ws = ws.api_key(key);
    }
    // With callers, WebSocket takes only the operator's key (per-caller
    // views are MCP's): without one it is not served at all.
    let per_caller = gateway.callers.any();
    let ws_served = !(per_caller && key.is_none());
    let mut http = shared;
    if per_caller || key.is_some() {
        http = http.authenticate(gateway.callers.authenticator(key));
    } else {
        gateway.callers.mark_unenforced();
    }
    let mut options = McpHttpOptions::new(server_options(&gateway)).http(http);
    if !ws_served {
        eprintln!(
            "gonk-gateway: callers are configured and --api-key is not: WebSocket is not served"
        );
    } else {
        let ws = WsServerOptions::new().http(ws);
        options = options.also_serve(ws_router(WsHandler::builder(gateway.registry()), ws));
    }
    let server = match serve_http(
        SocketAddr::new(host, port),
        gateway.registry().clone(),
        options,
    )
    .await
    {
        Ok(server) => server,
        Err(error) => return failure(error),
    };
    eprintln!("gonk-gateway: serving MCP at {}", server.url());
    if ws_served {
        eprintln!(
            "gonk-gateway: serving WebSocket at ws://{}/ws",
            server.local_addr()
        );
    }
    // `stop` is the server's shutdown token: it also closes the sockets.
    gateway.keep_up(interval(&matches), stop.clone());
    tokio::spawn(async move {
        terminated().await;
        stop.cancel();
    });
    match server.wait().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(error),
    }
}

/// `serve --auth-issuer`: MCP and WebSocket behind the issuer's tokens;
/// each call runs as the token's principal (its receipt names issuer,
/// subject and client id).
async fn run_oauth_serve(
    gateway: Gateway,
    addr: SocketAddr,
    resource: ProtectedResource,
    matches: &ArgMatches,
) -> ExitCode {
    let stop = CancellationToken::new();
    let http = HttpServerOptions::new()
        .shutdown_token(stop.clone())
        .protected_resource(resource);
    let handler =
        WsHandler::<AuthContext>::builder(gateway.registry()).context(|auth: &AuthContext| {
            Ok::<_, HookError>(ToolContext::new().with_auth(auth.clone()))
        });
    let ws = WsServerOptions::new().http(http.clone()).identify(
        |request: &axum::http::request::Parts| {
            let auth = request.extensions.get::<AuthContext>().cloned();
            async move { auth.ok_or_else(|| WsRejection::unauthorized("send an access token")) }
        },
    );
    let options = McpHttpOptions::new(server_options(&gateway))
        .http(http)
        .also_serve(ws_router(handler, ws));
    let server = match serve_http(addr, gateway.registry().clone(), options).await {
        Ok(server) => server,
        Err(error) => return failure(error),
    };
    eprintln!("gonk-gateway: serving MCP at {}", server.url());
    eprintln!(
        "gonk-gateway: serving WebSocket at ws://{}/ws",
        server.local_addr()
    );
    gateway.keep_up(interval(matches), stop.clone());
    tokio::spawn(async move {
        terminated().await;
        stop.cancel();
    });
    match server.wait().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(error),
    }
}

/// `serve` with a `devRouter` config: MCP at `/mcp`, each session pinned to
/// an environment ([`crate::dev_router::front`]); no WebSocket (a
/// WebSocket connection is not an MCP session to pin).
async fn run_dev_serve(
    gateway: Gateway,
    dev: DevRouter,
    addr: SocketAddr,
    key: Option<String>,
    matches: &ArgMatches,
) -> ExitCode {
    let authenticated = gateway.callers.any() || key.is_some();
    if !authenticated {
        gateway.callers.mark_unenforced();
    }
    let options_of = {
        let gateway = gateway.clone();
        move |target: &dev_router::marking::Target| {
            let server = server_options(&gateway).instructions(target.instructions());
            let options = McpHttpOptions::new(server);
            if authenticated {
                let http = HttpServerOptions::new()
                    .authenticate(gateway.callers.authenticator(key.clone()));
                options.http(http)
            } else {
                options
            }
        }
    };
    dev.set_http_options(Arc::new(options_of));
    let server = match dev_router::front::bind(dev, addr, "/mcp").await {
        Ok(server) => server,
        Err(error) => return failure(error),
    };
    eprintln!("gonk-gateway: serving MCP at {}", server.url());
    let stop = server.shutdown_token();
    gateway.keep_up(interval(matches), stop.clone());
    tokio::spawn(async move {
        terminated().await;
        stop.cancel();
    });
    match server.wait().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(error),
    }
}
