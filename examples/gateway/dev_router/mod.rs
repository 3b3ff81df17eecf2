//! The dev router: the gateway as one MCP endpoint in front of several
//! development environments of the same server, one of them active.
//!
//! ```json
//! {"devRouter": {
//!   "active": "alpha",
//!   "server": "dev",
//!   "environments": {
//!     "alpha": {"url": "http://127.0.0.1:9001/mcp", "repo": "git@example.com:app.git",
//!               "branch": "main", "database": "app_alpha",
//!               "headers": {"X-Dev-Token": "${ALPHA_TOKEN}"}},
//!     "beta":  {"command": "app-server", "args": ["--stdio"], "database": "app_beta"}
//!   }
//! }}
//! ```
//!
//! Each environment is one upstream (the fields of an `mcpServers` entry)
//! imported as an [`McpSource`] under the same prefix (`server`, default
//! `dev`), so a tool has one name whichever environment answers it. What
//! the router adds:
//!
//! * **Pinning** ([`front`]): an MCP session (2025 revisions,
//!   `Mcp-Session-Id`) stays on the environment that was active when it
//!   was opened, whatever the selection becomes; a new session goes to the
//!   environment active then. A request without a session (the stateless
//!   2026 revision) goes to the environment it names in the
//!   `Gonk-Dev-Environment` header, else to the active one; every answer
//!   names its environment in that header. An unknown or ended session
//!   gets `404` with a JSON-RPC error saying to reconnect.
//! * **Markers** ([`marking`]): a write tool (every tool whose upstream
//!   does not declare `readOnlyHint`; the hint counts only for an
//!   environment with `"trust": true`, as every remote annotation) is
//!   listed with `DEV TARGET: <env> (database <db>, …)` before its
//!   description, and its results carry `routedTo` and a line saying where
//!   the call ran.
//! * **Credential isolation**: a client's credentials (its API key) end at
//!   the gateway. Calls reach an environment through the gateway's own
//!   connection to it, which sends only the environment's `headers`.
//!
//! The selection changes by editing `active` in the file (the gateway
//! reloads it, [`crate::config_watch`]) or with `gonk-gateway --config
//! FILE dev use ENV` ([`command`]).

pub mod command;
pub mod front;
pub mod marking;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use gonk_tools::adapters::mcp::{McpHttpOptions, McpSource, DEFAULT_SESSION_IDLE_TIMEOUT};
use gonk_tools::ToolRegistry;
use serde::Deserialize;

use crate::config::ServerConfig;
use marking::Target;

/// The tool-name prefix of every environment unless `server` says otherwise.
const DEFAULT_PREFIX: &str = "dev";

/// Past this many pinned sessions, the ones idle for longer than a
/// session may be are forgotten on the next pin.
const PRUNE_THRESHOLD: usize = 256;

/// The `devRouter` section of the config.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DevRouterConfig {
    /// The environment new sessions go to.
    pub active: String,
    /// The prefix of every environment's tools (`<server>.<tool>`).
    #[serde(default = "default_prefix")]
    pub server: String,
    /// The environments by name.
    pub environments: BTreeMap<String, EnvironmentConfig>,
}

fn default_prefix() -> String {
    DEFAULT_PREFIX.to_owned()
}

/// One environment: where its server is (an `mcpServers` entry: `command`
/// or `url`, `headers`, `timeout`, `trust`, …) and what it points at.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct EnvironmentConfig {
    /// The repository the environment runs.
    pub repo: Option<String>,
    /// Its branch.
    pub branch: Option<String>,
    /// The database its writes go to.
    pub database: Option<String>,
    /// The upstream server; its `headers` are the only ones sent to it.
    #[serde(flatten)]
    pub upstream: ServerConfig,
}

/// Checks a `devRouter` section (and that it is alone: the environments
/// are all the router serves); the error says what to fix.
pub fn check(
    dev: &DevRouterConfig,
    servers: &BTreeMap<String, ServerConfig>,
) -> Result<(), String> {
    if !servers.is_empty() {
        return Err(format!(
            "a config with devRouter serves only its environments; move mcpServers ({}) to another gateway's config",
            servers.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if let Err(reason) = gonk_tools::definition::validate_tool_name(&format!("{}.x", dev.server)) {
        return Err(format!(
            "devRouter.server {:?} is not usable as a tool-name prefix: {reason}",
            dev.server
        ));
    }
    let names = || {
        dev.environments
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(active) = dev.environments.get(&dev.active) else {
        return Err(format!(
            "devRouter.active is {:?}, which is not an environment (they are: {})",
            dev.active,
            names()
        ));
    };
    if active.upstream.disabled {
        return Err(format!(
            "devRouter.active is {:?}, which is disabled",
            dev.active
        ));
    }
    for (name, env) in &dev.environments {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "dev environment {name:?}: a name is letters, digits, '-' and '_' (it is sent in a header)"
            ));
        }
        match (&env.upstream.command, &env.upstream.url) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "dev environment {name:?} has both command and url; give one of them"
                ))
            }
            (None, None) => {
                return Err(format!(
                    "dev environment {name:?} has neither command nor url; give one of them"
                ))
            }
            _ => {}
        }
        if let Some(secs) = env.upstream.timeout {
            if !(secs.is_finite() && secs > 0.0) {
                return Err(format!(
                    "dev environment {name:?}: timeout must be a positive number of seconds, not {secs}"
                ));
            }
        }
    }
    Ok(())
}

/// Makes the HTTP options of one environment's MCP endpoint (the gateway's
/// server options and authentication; [`front`] serves them).
pub type HttpOptionsFn = dyn Fn(&Target) -> McpHttpOptions + Send + Sync;

/// One connected environment.
pub struct Environment {
    config: EnvironmentConfig,
    target: Arc<Target>,
    source: McpSource,
    /// What is served: the source's tools, marked ([`marking`]).
    served: ToolRegistry,
    /// Keeps `served` in step with the source's catalog.
    sync: tokio::task::JoinHandle<()>,
    /// Its MCP endpoint, made on first use.
    router: OnceLock<axum::Router>,
}

impl Environment {
    async fn close(&self) {
        self.sync.abort();
        let _ = self.source.close().await;
        self.served.remove_source(self.source.server_id());
    }
}

/// A session's environment and when it was last used.
struct Pin {
    environment: String,
    seen: Instant,
}

/// The router's state; cheap to clone.
#[derive(Clone)]
pub struct DevRouter {
    shared: Arc<Shared>,
}

struct Shared {
    /// The gateway's registry: each environment's registry is derived from
    /// it, sharing its security (callers, approval, audit) and rate limits.
    base: ToolRegistry,
    config: RwLock<DevRouterConfig>,
    environments: RwLock<BTreeMap<String, Arc<Environment>>>,
    /// One apply at a time.
    applying: tokio::sync::Mutex<()>,
    sessions: Mutex<HashMap<String, Pin>>,
    http: OnceLock<Arc<HttpOptionsFn>>,
}

impl DevRouter {
    /// Connects every environment of `config` (one that fails is reported
    /// on stderr and tried again by [`heal`](Self::heal)).
    pub async fn start(config: DevRouterConfig, base: &ToolRegistry) -> DevRouter {
        let router = DevRouter {
            shared: Arc::new(Shared {
                base: base.clone(),
                config: RwLock::new(config.clone()),
                environments: RwLock::default(),
                applying: tokio::sync::Mutex::new(()),
                sessions: Mutex::default(),
                http: OnceLock::new(),
            }),
        };
        router.apply(config).await;
        router
    }

    /// Makes the environments those of `config`: unchanged ones stay
    /// connected (and their sessions with them), changed ones are closed
    /// and connected anew (their sessions end: clients reconnect), removed
    /// ones closed, new ones connected. The selection is `config.active`
    /// from now on.
    pub async fn apply(&self, config: DevRouterConfig) {
        let _one = self.shared.applying.lock().await;
        let previous = self.config();
        let stale: Vec<String> = self
            .environments()
            .iter()
            .filter(|(name, env)| {
                previous.server != config.server
                    || config
                        .environments
                        .get(*name)
                        .is_none_or(|wanted| *wanted != env.config || wanted.upstream.disabled)
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            let removed = self.write_environments().remove(&name);
            if let Some(env) = removed {
                env.close().await;
                eprintln!("gonk-gateway: closed dev environment {name}");
            }
        }
        let present = self.environments();
        let connecting = config
            .environments
            .iter()
            .filter(|(name, env)| !env.upstream.disabled && !present.contains_key(*name))
            .map(|(name, env)| self.connect(&config.server, name, env));
        for (name, connected) in futures::future::join_all(connecting).await {
            match connected {
                Ok(env) => {
                    self.write_environments().insert(name, Arc::new(env));
                }
                Err(error) => {
                    eprintln!("gonk-gateway: {error}; its sessions get 503 until it answers")
                }
            }
        }
        if previous.active != config.active {
            eprintln!(
                "gonk-gateway: dev router: new sessions go to {} (was {})",
                config.active, previous.active
            );
        }
        *self
            .shared
            .config
            .write()
            .unwrap_or_else(|p| p.into_inner()) = config;
    }

    async fn connect(
        &self,
        prefix: &str,
        name: &str,
        config: &EnvironmentConfig,
    ) -> (String, Result<Environment, String>) {
        let imported = ToolRegistry::new();
        let source = match config
            .upstream
            .builder(prefix, false)
            .connect(&imported)
            .await
        {
            Ok(source) => source,
            Err(error) => {
                return (
                    name.to_owned(),
                    Err(format!("dev environment {name}: {error}")),
                )
            }
        };
        let target = Arc::new(Target::of(name, config));
        // Derived with no tools: the gateway's gates, this environment's tools.
        let served = self.shared.base.filter(|_| false);
        let sync = marking::keep_in_step(imported, served.clone(), prefix, Arc::clone(&target));
        let env = Environment {
            config: config.clone(),
            target,
            source,
            served,
            sync,
            router: OnceLock::new(),
        };
        (name.to_owned(), Ok(env))
    }

    /// Reconnects environments whose connection ended and connects the
    /// ones that failed to.
    pub async fn heal(&self) {
        for (name, env) in self.environments() {
            if env.source.is_disconnected() {
                match env.source.reconnect().await {
                    Ok(revision) => eprintln!(
                        "gonk-gateway: reconnected dev environment {name} (catalog revision {revision})"
                    ),
                    Err(error) => eprintln!("gonk-gateway: dev environment {name} is down: {error}"),
                }
            }
        }
        let config = self.config();
        let present = self.environments();
        if config
            .environments
            .iter()
            .any(|(name, env)| !env.upstream.disabled && !present.contains_key(name))
        {
            self.apply(config).await;
        }
    }

    /// Closes every environment.
    pub async fn close(&self) {
        let all = std::mem::take(&mut *self.write_environments());
        for env in all.values() {
            env.close().await;
        }
    }

    /// The config in force.
    pub fn config(&self) -> DevRouterConfig {
        self.shared
            .config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The name of the active environment.
    pub fn active(&self) -> String {
        self.shared
            .config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .active
            .clone()
    }

    /// Whether `name` is a configured environment.
    pub fn has_environment(&self, name: &str) -> bool {
        self.shared
            .config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .environments
            .contains_key(name)
    }

    /// The registry served for the active environment (what a stdio
    /// session or a command-line call uses: pinned for its whole run), if
    /// it is connected.
    pub fn active_registry(&self) -> Option<ToolRegistry> {
        let active = self.active();
        self.environments()
            .get(&active)
            .map(|env| env.served.clone())
    }

    /// How each environment's MCP endpoint is made; set once, before
    /// serving HTTP.
    pub fn set_http_options(&self, make: Arc<HttpOptionsFn>) {
        let _ = self.shared.http.set(make);
    }

    /// The MCP endpoint of environment `name`, if it is connected (and
    /// [`set_http_options`](Self::set_http_options) was called).
    pub fn endpoint(&self, name: &str) -> Option<axum::Router> {
        let make = self.shared.http.get()?;
        let env = self.environments().get(name).cloned()?;
        let router = env.router.get_or_init(|| {
            gonk_tools::adapters::mcp::mcp_router(env.served.clone(), make(&env.target))
        });
        Some(router.clone())
    }

    /// The environment session `id` is pinned to; marks it used.
    pub fn session(&self, id: &str) -> Option<String> {
        let mut sessions = self
            .shared
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let pin = sessions.get_mut(id)?;
        pin.seen = Instant::now();
        Some(pin.environment.clone())
    }

    /// Pins session `id` to `environment`.
    pub fn pin(&self, id: String, environment: String) {
        let mut sessions = self
            .shared
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if sessions.len() >= PRUNE_THRESHOLD {
            // A session idle past the endpoint's timeout is gone there too.
            let bound = DEFAULT_SESSION_IDLE_TIMEOUT + Duration::from_secs(60);
            sessions.retain(|_, pin| pin.seen.elapsed() < bound);
        }
        sessions.insert(
            id,
            Pin {
                environment,
                seen: Instant::now(),
            },
        );
    }

    /// Forgets session `id` (deleted, or unknown to its environment).
    pub fn forget(&self, id: &str) {
        self.shared
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    fn environments(&self) -> BTreeMap<String, Arc<Environment>> {
        self.shared
            .environments
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn write_environments(
        &self,
    ) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Arc<Environment>>> {
        self.shared
            .environments
            .write()
            .unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: serde_json::Value) -> DevRouterConfig {
        serde_json::from_value(text).expect("a devRouter section")
    }

    #[test]
    fn a_section_is_checked_with_errors_that_say_what_to_fix() {
        let good = parse(serde_json::json!({
            "active": "alpha",
            "environments": {
                "alpha": {"url": "http://127.0.0.1:1/mcp", "database": "a", "headers": {"X": "1"}},
                "beta": {"command": "server", "args": ["--stdio"]}
            }
        }));
        assert_eq!(good.server, "dev");
        assert_eq!(good.environments["alpha"].database.as_deref(), Some("a"));
        assert!(check(&good, &BTreeMap::new()).is_ok());

        let mut unknown = good.clone();
        unknown.active = "gamma".into();
        let error = check(&unknown, &BTreeMap::new()).unwrap_err();
        assert!(
            error.contains("\"gamma\", which is not an environment (they are: alpha, beta)"),
            "{error}"
        );

        let mut both = good.clone();
        both.environments.get_mut("beta").unwrap().upstream.url =
            Some("http://127.0.0.1:2/mcp".into());
        let error = check(&both, &BTreeMap::new()).unwrap_err();
        assert!(
            error.contains("\"beta\" has both command and url"),
            "{error}"
        );

        let mut servers = BTreeMap::new();
        servers.insert("fx".to_owned(), good.environments["beta"].upstream.clone());
        let error = check(&good, &servers).unwrap_err();
        assert!(error.contains("move mcpServers (fx)"), "{error}");
    }
}
