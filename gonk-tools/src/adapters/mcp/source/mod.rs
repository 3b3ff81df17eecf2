//! [`McpSource`]: a remote MCP server's tools imported into a registry as
//! one source catalog, governed like local tools.

mod call;
mod catalog;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::client::{McpClient, McpClientError, McpEra, McpHttpClientOptions, McpSkillEntry};
use crate::definition::{ApprovalTier, AuthorizationSpec, TransformSet, Visibility};
use crate::registry::{RegistryError, ToolRegistry};
use crate::skill::Skill;

/// How long connecting waits for the remote to start announcing tool
/// changes (a `subscriptions/listen` acknowledgement) before it goes on.
const WATCH_READY_BOUND: Duration = Duration::from_secs(10);

/// The most characters of a trusted remote description that are kept.
const TRUSTED_DESCRIPTION_LIMIT: usize = 4096;

/// Where a remote MCP server is: a command started as a child process
/// (stdio) or a streamable-HTTP URL.
#[derive(Clone, Debug)]
pub enum McpEndpoint {
    /// A command whose stdin/stdout speak MCP; started again on reconnect.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: Vec<(String, String)>,
    },
    /// A streamable-HTTP endpoint. `https://`, or `http://` on a loopback
    /// address only.
    Http {
        /// The URL.
        url: String,
    },
}

impl McpEndpoint {
    /// A command to start: `McpEndpoint::command("npx", ["-y", "server"])`.
    pub fn command<S: Into<String>>(
        program: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        McpEndpoint::Stdio {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// A streamable-HTTP URL.
    pub fn http(url: impl Into<String>) -> Self {
        McpEndpoint::Http { url: url.into() }
    }

    /// Adds an environment variable to a command (no effect on a URL).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpEndpoint::Stdio { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// The endpoint as provenance shows it: a URL without its query string
    /// (nor fragment or user info), or `stdio:<program>` (arguments and
    /// environment may hold secrets).
    pub fn display(&self) -> String {
        match self {
            McpEndpoint::Stdio { program, .. } => format!("stdio:{program}"),
            McpEndpoint::Http { url } => match url.parse::<::http::Uri>() {
                Ok(uri) => {
                    let authority = uri
                        .authority()
                        .map(|a| a.as_str().rsplit('@').next().unwrap_or_default().to_owned())
                        .unwrap_or_default();
                    format!(
                        "{}://{authority}{}",
                        uri.scheme_str().unwrap_or("http"),
                        uri.path()
                    )
                }
                Err(_) => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
            },
        }
    }
}

/// Why an HTTP endpoint may not be used: not a URL, not HTTP(S), or plain
/// `http://` to a host that is not loopback.
fn check_http_url(url: &str) -> Result<(), (bool, String)> {
    let uri: ::http::Uri = url
        .parse()
        .map_err(|e| (false, format!("not a URL: {e}")))?;
    let host = uri.host().unwrap_or_default();
    match uri.scheme_str() {
        Some("https") => Ok(()),
        Some("http") if is_loopback(host) => Ok(()),
        Some("http") => Err((true, String::new())),
        other => Err((
            false,
            format!("the scheme must be https (or http on loopback), not {other:?}"),
        )),
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The headers an HTTP connection sends, from
/// [`McpSourceBuilder::headers`]: called on every (re)connect, so a
/// rotating bearer token is fresh each time.
type HeaderResolver =
    Arc<dyn Fn() -> BoxFuture<'static, Result<Vec<(String, String)>, String>> + Send + Sync>;

/// Why a source could not connect, refresh or close.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpSourceError {
    /// Plain `http://` to a host that is not loopback; nothing was sent
    /// and no header was resolved.
    #[error("MCP server {server_id}: {url} must use HTTPS (plain http:// is allowed only for loopback addresses)")]
    InsecureEndpoint {
        /// The source's id.
        server_id: String,
        /// The refused URL.
        url: String,
    },
    /// The endpoint is not usable (not a URL, an unknown scheme).
    #[error("MCP server {server_id}: invalid endpoint {url}: {reason}")]
    InvalidEndpoint {
        /// The source's id.
        server_id: String,
        /// The endpoint.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The header resolver failed or gave a header HTTP does not allow.
    #[error("MCP server {server_id}: could not resolve the connection headers: {reason}")]
    Headers {
        /// The source's id.
        server_id: String,
        /// The resolver's error.
        reason: String,
    },
    /// The connection could not be opened.
    #[error("MCP server {server_id}: could not connect: {source}")]
    Connect {
        /// The source's id.
        server_id: String,
        /// The client's error.
        #[source]
        source: McpClientError,
    },
    /// `tools/list` failed.
    #[error("MCP server {server_id}: tools/list failed: {source}; the previous catalog stays")]
    List {
        /// The source's id.
        server_id: String,
        /// The client's error.
        #[source]
        source: McpClientError,
    },
    /// The remote's catalog cannot be imported as it is (an unsupported
    /// schema keyword, a name that breaks the naming rule, a clash with a
    /// local tool); the previous catalog and revision stay.
    #[error(
        "MCP server {server_id}: refresh refused, catalog revision {revision} stays: {reason}"
    )]
    Refused {
        /// The source's id.
        server_id: String,
        /// The revision that stays.
        revision: u64,
        /// What is wrong.
        reason: String,
    },
    /// The source was closed or reconnected while a refresh ran; the
    /// refresh registered nothing.
    #[error("MCP server {server_id}: lifecycle changed during refresh (the source was closed or reconnected); nothing from that refresh was registered")]
    LifecycleChanged {
        /// The source's id.
        server_id: String,
    },
    /// A held source ([`McpSourceBuilder::connect_or_hold`]) could still
    /// not be reached.
    #[error("{last}")]
    Unreachable {
        /// The source's id.
        server_id: String,
        /// The connection error.
        last: Arc<McpSourceError>,
    },
    /// The source is closed.
    #[error("MCP server {server_id}: the source is closed; connect a new one")]
    Closed {
        /// The source's id.
        server_id: String,
    },
    /// The server id is not a usable tool-name prefix.
    #[error("MCP server id {server_id:?} is not usable as a tool-name prefix: {reason}")]
    InvalidServerId {
        /// The id.
        server_id: String,
        /// Why.
        reason: String,
    },
}

/// How a source imports and gates its tools.
#[derive(Clone)]
struct SourceOptions {
    allow: Option<Vec<String>>,
    trusted: bool,
    visibility: Visibility,
    approval: ApprovalTier,
    authorization: Option<AuthorizationSpec>,
    call_timeout: Option<Duration>,
    era: Option<McpEra>,
    headers: Option<HeaderResolver>,
    transforms: TransformSet,
    #[cfg(feature = "oauth")]
    oauth: Option<super::client::oauth::OAuthOptions>,
}

/// One open connection, and the token that cancels the calls running on
/// it when it is replaced or closed.
struct Connection {
    client: Arc<McpClient>,
    ended: CancellationToken,
    /// Set when a request on it failed in transport (the remote is gone or
    /// restarted) or its change announcements ended:
    /// [`McpSource::is_disconnected`] then says so, and a reconnect
    /// replaces it.
    failed: Arc<AtomicBool>,
    protocol_version: String,
}

/// What a call needs of the open connection.
pub(super) struct Live {
    pub(super) client: Arc<McpClient>,
    pub(super) ended: CancellationToken,
    pub(super) failed: Arc<AtomicBool>,
}

impl Live {
    /// Whether this connection is no good any more (see [`Connection::failed`]).
    pub(super) fn is_broken(&self) -> bool {
        self.ended.is_cancelled() || self.failed.load(Ordering::Acquire) || self.client.has_failed()
    }
}

/// What the source's tools, its watcher and its handle share.
pub(super) struct SourceShared {
    id: String,
    endpoint: McpEndpoint,
    options: SourceOptions,
    registry: ToolRegistry,
    connection: Mutex<Option<Connection>>,
    /// Bumped by every close and reconnect: a refresh that started in an
    /// older lifecycle must not commit.
    lifecycle: AtomicU64,
    closed: AtomicBool,
    /// The committed revision; held while a refresh commits and while
    /// `close` unregisters, so the two never interleave.
    revision: Mutex<u64>,
    /// One refresh at a time.
    refreshing: tokio::sync::Mutex<()>,
    /// How many connections were opened (each may be closed once).
    opened: AtomicU64,
    /// One reconnect at a time (two at once replace the connection one
    /// after the other, each closing its old one once).
    reconnecting: tokio::sync::Mutex<()>,
    /// The task refreshing on the open connection's announcements.
    watcher: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// While the server has never been reached
    /// ([`McpSourceBuilder::connect_or_hold`]): the last connection error,
    /// which the namespace's placeholder reports.
    unreachable: Arc<Mutex<Option<Arc<McpSourceError>>>>,
    /// The remote's skill entries whose files the registry serves now, all
    /// of them loaded and verified: a refresh that lists the same entries
    /// (each file's digest included) downloads nothing again.
    imported_skills: Mutex<Option<Vec<McpSkillEntry>>>,
}

impl SourceShared {
    /// The open connection.
    pub(super) fn connection(&self) -> Option<Live> {
        self.connection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|c| Live {
                client: Arc::clone(&c.client),
                ended: c.ended.clone(),
                failed: Arc::clone(&c.failed),
            })
    }

    fn revision(&self) -> u64 {
        *self.revision.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a new connection (resolving the headers first).
    async fn open(&self) -> Result<Connection, McpSourceError> {
        let mut builder = McpClient::builder();
        if let Some(era) = self.options.era {
            builder = builder.era(era);
        }
        #[cfg(feature = "oauth")]
        if let (Some(oauth), McpEndpoint::Http { .. }) = (&self.options.oauth, &self.endpoint) {
            builder = builder.oauth(oauth.clone());
        }
        let connect = |source| McpSourceError::Connect {
            server_id: self.id.clone(),
            source,
        };
        let client = match &self.endpoint {
            McpEndpoint::Stdio { program, args, env } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().cloned());
                builder.connect_stdio(command).await.map_err(connect)?
            }
            McpEndpoint::Http { url } => {
                self.check_url(url)?;
                let mut options = McpHttpClientOptions::new();
                if let Some(resolve) = &self.options.headers {
                    let headers = resolve().await.map_err(|reason| McpSourceError::Headers {
                        server_id: self.id.clone(),
                        reason,
                    })?;
                    for (name, value) in headers {
                        options = options.header(&name, &value).map_err(|reason| {
                            McpSourceError::Headers {
                                server_id: self.id.clone(),
                                reason,
                            }
                        })?;
                    }
                }
                // A session the remote forgot (it restarted) fails the
                // request, and the source connects anew: new headers, a
                // new session, the catalog read again.
                options = options.renew_expired_sessions(false);
                builder.connect_http(url, options).await.map_err(connect)?
            }
        };
        self.opened.fetch_add(1, Ordering::AcqRel);
        Ok(Connection {
            protocol_version: client.protocol_version().to_string(),
            client: Arc::new(client),
            ended: CancellationToken::new(),
            failed: Arc::default(),
        })
    }

    fn check_url(&self, url: &str) -> Result<(), McpSourceError> {
        check_http_url(url).map_err(|(insecure, reason)| {
            if insecure {
                McpSourceError::InsecureEndpoint {
                    server_id: self.id.clone(),
                    url: McpEndpoint::http(url).display(),
                }
            } else {
                McpSourceError::InvalidEndpoint {
                    server_id: self.id.clone(),
                    url: McpEndpoint::http(url).display(),
                    reason,
                }
            }
        })
    }

    fn lifecycle_changed(&self) -> McpSourceError {
        McpSourceError::LifecycleChanged {
            server_id: self.id.clone(),
        }
    }
}

/// Closes a replaced or closed connection: its calls end with
/// `REMOTE_CANCELLED`, then the connection closes (gracefully when nothing
/// else holds it; a refresh still listing over it sees it end).
async fn close_connection(connection: Connection) {
    connection.ended.cancel();
    match Arc::try_unwrap(connection.client) {
        Ok(client) => {
            if let Err(error) = client.close().await {
                tracing::debug!(target: "gonk_tools::mcp::source", %error, "closing an MCP connection failed");
            }
        }
        Err(shared) => shared.shut_down(),
    }
}

/// Reads the remote's catalog and replaces the source's with it
/// (revision + 1), or leaves the previous one and says why.
async fn refresh(shared: &Arc<SourceShared>) -> Result<u64, McpSourceError> {
    let _one = shared.refreshing.lock().await;
    let lifecycle = shared.lifecycle.load(Ordering::Acquire);
    if shared.closed.load(Ordering::Acquire) {
        return Err(McpSourceError::Closed {
            server_id: shared.id.clone(),
        });
    }
    let (client, failed, protocol_version) = {
        let slot = shared.connection.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            Some(c) => (
                Arc::clone(&c.client),
                Arc::clone(&c.failed),
                c.protocol_version.clone(),
            ),
            None => return Err(shared.lifecycle_changed()),
        }
    };
    let listed = client.list_tools().await;
    drop(client);
    let changed = || shared.lifecycle.load(Ordering::Acquire) != lifecycle;
    let tools = match listed {
        Ok(tools) => tools,
        Err(_) if changed() => return Err(shared.lifecycle_changed()),
        Err(source) => {
            // A refusal is the remote's answer; anything else is the
            // connection failing.
            if !matches!(
                source,
                McpClientError::Request(rmcp::service::ServiceError::McpError(_))
            ) {
                failed.store(true, Ordering::Release);
            }
            return Err(McpSourceError::List {
                server_id: shared.id.clone(),
                source,
            });
        }
    };
    let previous = shared.revision();
    let reading = catalog::Reading {
        shared,
        protocol_version,
        revision: previous + 1,
        discovered_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
    let refused = |reason: String| McpSourceError::Refused {
        server_id: shared.id.clone(),
        revision: previous,
        reason,
    };
    let mut defs = Vec::new();
    for tool in &tools {
        if let Some(allow) = &shared.options.allow {
            if !allow.iter().any(|name| *name == tool.name) {
                continue;
            }
        }
        defs.push(catalog::import(&reading, tool).map_err(refused)?);
    }
    let defs = shared.options.transforms.apply_all(defs).map_err(refused)?;
    let current = {
        let mut revision = shared.revision.lock().unwrap_or_else(|p| p.into_inner());
        if changed() || shared.closed.load(Ordering::Acquire) {
            return Err(shared.lifecycle_changed());
        }
        shared
            .registry
            .replace_source(&shared.id, defs)
            .map_err(|e: RegistryError| refused(e.to_string()))?;
        *revision = previous + 1;
        *revision
    };
    import_skills(shared).await;
    Ok(current)
}

/// The remote's skills, under the source's id as their namespace
/// (`skill://<serverId>/<name>/SKILL.md`): each one loaded and verified
/// (sizes, digests, frontmatter) by the client, so what the registry serves
/// is what the remote published. A skill that fails is left out, with a
/// warning; a remote without the extension has none. Entries the registry
/// already serves, unchanged, are not downloaded again.
async fn import_skills(shared: &Arc<SourceShared>) {
    let Some(live) = shared.connection() else {
        return;
    };
    let client = live.client;
    let declared = client
        .peer()
        .peer_info()
        .is_some_and(|info| info.capabilities.supports_skills());
    let entries = if declared {
        match client.list_skills().await {
            Ok(entries) => entries,
            Err(error) => {
                tracing::warn!(
                    server_id = %shared.id, %error, "the remote server's skills cannot be listed"
                );
                return import_failed(shared, Vec::new());
            }
        }
    } else {
        Vec::new()
    };
    let unchanged = shared
        .imported_skills
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        == Some(&entries);
    if unchanged {
        return;
    }
    let mut skills = Vec::new();
    let mut every_one = true;
    for entry in &entries {
        match client.load_skill(entry).await {
            Ok(skill) => skills.push(skill),
            Err(error) => {
                every_one = false;
                tracing::warn!(
                    server_id = %shared.id, skill = %entry.uri, %error,
                    "a skill of the remote server is left out"
                );
            }
        }
    }
    if every_one {
        if let Err(error) = shared.registry.replace_namespace_skills(&shared.id, skills) {
            tracing::warn!(server_id = %shared.id, %error, "the remote server's skills are not served");
            return import_failed(shared, Vec::new());
        }
        *shared
            .imported_skills
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(entries);
    } else {
        import_failed(shared, skills);
    }
}

/// Serves the skills that loaded and forgets what was imported, so the
/// next refresh tries the listed ones again.
fn import_failed(shared: &SourceShared, skills: Vec<Skill>) {
    *shared
        .imported_skills
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = None;
    if let Err(error) = shared.registry.replace_namespace_skills(&shared.id, skills) {
        tracing::warn!(server_id = %shared.id, %error, "the remote server's skills are not served");
    }
}

/// Refreshes on every announcement of the current connection until it
/// ends; holds the source weakly (dropping the source ends it). `ready`
/// fires once the announcements are being heard (or cannot be).
async fn watch(
    shared: Weak<SourceShared>,
    ended: CancellationToken,
    ready: tokio::sync::oneshot::Sender<()>,
) {
    let Some((client, failed, id)) = shared.upgrade().and_then(|s| {
        s.connection()
            .map(|live| (live.client, live.failed, s.id.clone()))
    }) else {
        return;
    };
    let changes = tokio::select! {
        _ = ended.cancelled() => return,
        changes = client.watch_tools() => changes,
    };
    drop(client);
    let _ = ready.send(());
    let mut changes = match changes {
        Ok(changes) => changes,
        Err(error) => {
            tracing::warn!(target: "gonk_tools::mcp::source", server = %id, %error, "the server does not announce tool changes; call refresh() to pick them up");
            return;
        }
    };
    loop {
        let heard = tokio::select! {
            _ = ended.cancelled() => return,
            heard = changes.changed() => heard,
        };
        if heard.is_none() {
            // The announcements stopped while the connection was meant to
            // be open: the remote went away (a `2026-07-28` subscription
            // stream ends with its server). Reconnecting listens again.
            failed.store(true, Ordering::Release);
            return;
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if let Err(error) = refresh(&shared).await {
            tracing::warn!(target: "gonk_tools::mcp::source", server = %id, %error, "refreshing after a tools/list_changed failed");
        }
    }
}

/// A remote MCP server's tools, kept as one source catalog of a
/// [`ToolRegistry`] and governed like local tools.
///
/// ```no_run
/// use gonk_tools::adapters::mcp::{McpEndpoint, McpSource};
/// use gonk_tools::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = ToolRegistry::new();
/// let time = McpSource::builder("time", McpEndpoint::command("uvx", ["mcp-server-time"]))
///     .allow(["get_current_time"])
///     .connect(&registry)
///     .await?;
/// // Listed as `time.get_current_time`, "Remote MCP tool time/get_current_time".
/// let events = registry.invoke("time.get_current_time", json!({"timezone": "UTC"}), ToolContext::new());
/// let output = collect_tool_outcome(events, |_| {}).await?;
/// println!("{}", output.data["content"][0]["text"]);
/// time.close().await?;
/// # Ok(()) }
/// ```
///
/// # The catalog
///
/// Every page of the remote's `tools/list` is read; each tool (of the
/// [`allow`](McpSourceBuilder::allow) list, if one is given) becomes
/// `<serverId>.<remoteName>` in the registry's source catalog `serverId`,
/// replaced atomically ([`ToolRegistry::replace_source`]) by each
/// [`refresh`](Self::refresh). A refresh starts by itself when the remote
/// announces a change (`notifications/tools/list_changed` in a 2025
/// session; a `subscriptions/listen` stream in `2026-07-28`). Each refresh
/// is a new catalog revision (1, 2, …), recorded with the protocol
/// version, the endpoint (without its query string) and the time in each
/// definition's [`provenance`](crate::definition::ToolMetadata::provenance).
///
/// # What is trusted
///
/// Nothing the remote says, unless the host opts in
/// ([`trust`](McpSourceBuilder::trust)): a tool is described as `Remote MCP
/// tool <serverId>/<name>`, its input schema loses its titles and
/// descriptions, and its annotation hints are dropped. Every tool is
/// listed on demand, needs `exec` approval and carries the
/// [`authorization`](McpSourceBuilder::authorization) spec, unless the
/// builder says otherwise. The remote's input schema is enforced here
/// before the remote is called; a schema using a keyword outside the
/// supported set (`oneOf`, `if`, …) or a `$ref` that is not local refuses
/// the refresh (`Unsupported MCP input schema keyword oneOf at $`) and the
/// previous catalog and revision stay.
///
/// # Calls
///
/// A call's result data is `{content, structuredContent?, provenance}`:
/// the content blocks without their `annotations` and `_meta`, the
/// structured content as sent, the result's `_meta` dropped; text blocks
/// are also the display. What went wrong on the other side has its own
/// code: `REMOTE_TOOL_ERROR` (`isError`, the content in `details`),
/// `REMOTE_OUTPUT_INVALID` (structured content against the remote's output
/// schema), `REMOTE_TRANSPORT_ERROR` (details `{name, message}`),
/// `REMOTE_CANCELLED`, `REMOTE_TIMEOUT`
/// ([`call_timeout`](McpSourceBuilder::call_timeout)) and
/// `REMOTE_PROTOCOL_ERROR` (a result without content, a JSON-RPC refusal).
/// Our cancellation and deadline reach the remote as
/// `notifications/cancelled`; the remote's progress and logs arrive as our
/// progress and log events. (A call cancelled or timed out by the
/// registry itself still ends with `ABORTED` / `TIMEOUT`: dispatch decides
/// first.)
///
/// # Connections
///
/// [`reconnect`](Self::reconnect) opens a new connection — calling the
/// [`headers`](McpSourceBuilder::headers) resolver again — closes the old
/// one once (its running calls end with `REMOTE_CANCELLED`) and refreshes.
/// [`close`](Self::close) unregisters every tool and closes the
/// connection; a refresh that was running fails with "lifecycle changed
/// during refresh" and registers nothing. Dropping the source does the
/// same without waiting for the connection to close. A plain `http://`
/// endpoint that is not loopback is refused (`must use HTTPS`) before any
/// header is resolved.
pub struct McpSource {
    shared: Arc<SourceShared>,
}

impl std::fmt::Debug for McpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSource")
            .field("server_id", &self.shared.id)
            .field("endpoint", &self.shared.endpoint.display())
            .field("revision", &self.shared.revision())
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpSource`]; see there for what each default means.
#[must_use = "call .connect(&registry) to import the tools"]
pub struct McpSourceBuilder {
    id: String,
    endpoint: McpEndpoint,
    options: SourceOptions,
}

impl std::fmt::Debug for McpSourceBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSourceBuilder")
            .field("server_id", &self.id)
            .field("endpoint", &self.endpoint.display())
            .finish_non_exhaustive()
    }
}

impl McpSourceBuilder {
    /// Imports only the remote tools named here (remote names, without the
    /// prefix); by default every tool.
    pub fn allow<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.options.allow = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Trusts the remote's descriptions (cut to 4,096 characters), schema
    /// prose and annotation hints, which are otherwise dropped.
    pub fn trust(mut self, trusted: bool) -> Self {
        self.options.trusted = trusted;
        self
    }

    /// Transforms applied to the imported tools, by their imported name
    /// (`<serverId>.<remoteName>`): the transformed tool replaces the
    /// original. One that does not fit its tool (an argument the remote
    /// no longer has) refuses the refresh, and the previous catalog stays.
    pub fn transforms(mut self, transforms: TransformSet) -> Self {
        self.options.transforms = transforms;
        self
    }

    /// The visibility of every imported tool (default on demand).
    pub fn visibility(mut self, visibility: Visibility) -> Self {
        self.options.visibility = visibility;
        self
    }

    /// The approval tier of every imported tool (default `exec`).
    pub fn approval(mut self, tier: ApprovalTier) -> Self {
        self.options.approval = tier;
        self
    }

    /// The authorization spec every imported tool carries.
    pub fn authorization(mut self, spec: AuthorizationSpec) -> Self {
        self.options.authorization = Some(spec);
        self
    }

    /// How long a remote call may take before it is cancelled on the
    /// remote and ends with `REMOTE_TIMEOUT` (default: no limit of the
    /// source's own; the call's deadline, if any, is passed on either way).
    pub fn call_timeout(mut self, limit: Duration) -> Self {
        self.options.call_timeout = Some(limit);
        self
    }

    /// Speaks only this protocol era with the remote (by default
    /// `2026-07-28` when the remote speaks it, else the 2025 handshake).
    pub fn era(mut self, era: McpEra) -> Self {
        self.options.era = Some(era);
        self
    }

    /// Headers of an HTTP connection, resolved on every connect and
    /// reconnect (a rotating bearer token: `("Authorization", "Bearer
    /// …")`). Not called for a stdio endpoint, nor for an endpoint that is
    /// refused.
    pub fn headers<F, Fut>(mut self, resolve: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<(String, String)>, String>> + Send + 'static,
    {
        self.options.headers = Some(Arc::new(move || Box::pin(resolve())));
        self
    }

    /// Authorizes with OAuth 2.1 when the HTTP server asks for a token
    /// (feature `oauth`; see [`McpClientBuilder::oauth`](super::McpClientBuilder::oauth)).
    /// Every connect and reconnect uses the same options, so a reconnect
    /// keeps the token (the options' credential store holds it). A source
    /// that serves other callers (a gateway) gives options without a
    /// redirect: it uses the stored token, refreshed, and fails to connect
    /// with [`McpClientError::AuthorizationRequired`](super::McpClientError::AuthorizationRequired)
    /// when someone must log in. Its callers' own credentials never reach
    /// the remote. Not used for a stdio endpoint.
    ///
    /// ```no_run
    /// use gonk_tools::adapters::mcp::oauth::{FileCredentialStore, OAuthOptions};
    /// use gonk_tools::adapters::mcp::{McpEndpoint, McpSource};
    /// use gonk_tools::ToolRegistry;
    ///
    /// # async fn run(registry: &ToolRegistry) -> Result<(), Box<dyn std::error::Error>> {
    /// let oauth = OAuthOptions::new()
    ///     .credential_store(FileCredentialStore::new("tokens/linear.json"));
    /// let source = McpSource::builder("linear", McpEndpoint::http("https://mcp.linear.app/mcp"))
    ///     .oauth(oauth)
    ///     .connect(registry)
    ///     .await?;
    /// # let _ = source;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, options: super::client::oauth::OAuthOptions) -> Self {
        self.options.oauth = Some(options);
        self
    }

    /// Connects, reads the catalog (revision 1) into `registry` as source
    /// `serverId`, and starts watching for changes. On any error nothing is
    /// registered and the connection is closed.
    pub async fn connect(self, registry: &ToolRegistry) -> Result<McpSource, McpSourceError> {
        let probe = format!("{}.x", self.id);
        if let Err(reason) = crate::definition::validate_tool_name(&probe) {
            return Err(McpSourceError::InvalidServerId {
                server_id: self.id,
                reason,
            });
        }
        let shared = self.into_shared(registry, Arc::default());
        let connection = shared.open().await?;
        *shared.connection.lock().unwrap_or_else(|p| p.into_inner()) = Some(connection);
        let source = McpSource { shared };
        // Watching first: a change during the first listing is not missed.
        start_watching(&source.shared).await;
        if let Err(error) = refresh(&source.shared).await {
            let _ = source.close().await;
            return Err(error);
        }
        Ok(source)
    }
}

impl McpSourceBuilder {
    /// [`connect`](Self::connect), except that a server that cannot be
    /// reached (it refuses connections, its command does not start, its
    /// headers or login fail) still gives a source: its namespace is held
    /// ([`ToolRegistry::hold_source`]) — a call of any `serverId.NAME`
    /// answers `REMOTE_UNAVAILABLE` naming the server and the last
    /// connection error, not "Unknown tool" — and the source
    /// [`is_disconnected`](McpSource::is_disconnected), so whoever keeps
    /// sources up [`reconnect`](McpSource::reconnect)s it; the first
    /// reconnect that succeeds imports its tools (a catalog change, so MCP
    /// clients get `tools/list_changed`). [`unreachable`](McpSource::unreachable)
    /// says whether it is still waiting. A configuration that can never
    /// work (an invalid server id or endpoint, plain `http://` to a remote
    /// host) and a catalog that cannot be imported are still errors.
    pub async fn connect_or_hold(
        self,
        registry: &ToolRegistry,
    ) -> Result<McpSource, McpSourceError> {
        let id = self.id.clone();
        let (endpoint, options) = (self.endpoint.clone(), self.options.clone());
        match self.connect(registry).await {
            Ok(source) => Ok(source),
            Err(error @ (McpSourceError::Connect { .. } | McpSourceError::Headers { .. })) => {
                let builder = McpSourceBuilder {
                    id,
                    endpoint,
                    options,
                };
                builder.hold(registry, error)
            }
            Err(other) => Err(other),
        }
    }

    /// The state a source shares with its watcher, not connected yet;
    /// `unreachable` holds the last connection error while it is held.
    fn into_shared(
        self,
        registry: &ToolRegistry,
        unreachable: Arc<Mutex<Option<Arc<McpSourceError>>>>,
    ) -> Arc<SourceShared> {
        Arc::new(SourceShared {
            id: self.id,
            endpoint: self.endpoint,
            options: self.options,
            registry: registry.clone(),
            connection: Mutex::new(None),
            lifecycle: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            revision: Mutex::new(0),
            refreshing: tokio::sync::Mutex::new(()),
            opened: AtomicU64::new(0),
            reconnecting: tokio::sync::Mutex::new(()),
            watcher: Mutex::new(None),
            unreachable,
            imported_skills: Mutex::new(None),
        })
    }

    /// A source with no connection whose namespace is held.
    fn hold(
        self,
        registry: &ToolRegistry,
        error: McpSourceError,
    ) -> Result<McpSource, McpSourceError> {
        let unreachable = Arc::new(Mutex::new(Some(Arc::new(error))));
        let placeholder = unreachable_placeholder(&self.id, Arc::clone(&unreachable));
        registry
            .hold_source(&self.id, placeholder)
            .map_err(|error| McpSourceError::Refused {
                server_id: self.id.clone(),
                revision: 0,
                reason: error.to_string(),
            })?;
        let shared = self.into_shared(registry, unreachable);
        Ok(McpSource { shared })
    }
}

/// The tool answering for every name under a held source: a
/// `REMOTE_UNAVAILABLE` error naming the server and its last connection
/// error. It takes any input (its schema is an open object) and is a read
/// (it does nothing), so only the discover and invoke gates apply.
fn unreachable_placeholder(
    id: &str,
    last_error: Arc<Mutex<Option<Arc<McpSourceError>>>>,
) -> crate::definition::ToolDefinition {
    let server = id.to_owned();
    crate::definition::ToolDefinition::builder(format!("{id}.unavailable"))
        .description(format!(
            "Stands for the tools of MCP server {id}, which cannot be reached."
        ))
        .approval(ApprovalTier::Read)
        .visibility(Visibility::OnDemand)
        .handler(
            move |_: serde_json::Value, _ctx: crate::context::ToolContext| {
                let message = last_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .as_ref()
                    .map_or_else(|| "not connected yet".to_owned(), |e| e.to_string());
                std::future::ready(Err::<serde_json::Value, _>(unavailable_error(
                    &server, &message,
                )))
            },
        )
        .input_json_schema(serde_json::json!({"type": "object"}))
        .build()
}

/// `REMOTE_UNAVAILABLE` for server `server`, whose last connection error
/// was `message`.
fn unavailable_error(server: &str, message: &str) -> crate::error::ToolError {
    crate::error::ToolError::new(
        crate::error::ErrorCode::RemoteUnavailable,
        format!(
            "MCP server {server} is configured but unreachable (last connection error: \
             {message}); its tools appear once it answers, which is retried in the background"
        ),
    )
    .with_details(serde_json::json!({"name": server, "message": message}))
}

impl McpSource {
    /// Whether the server has never been reached since
    /// [`connect_or_hold`](McpSourceBuilder::connect_or_hold), and the last
    /// connection error if so.
    pub fn unreachable(&self) -> Option<Arc<McpSourceError>> {
        self.shared
            .unreachable
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A source of server `server_id` (the tool-name prefix and the
    /// registry's source id) at `endpoint`.
    pub fn builder(server_id: impl Into<String>, endpoint: McpEndpoint) -> McpSourceBuilder {
        McpSourceBuilder {
            id: server_id.into(),
            endpoint,
            options: SourceOptions {
                allow: None,
                trusted: false,
                visibility: Visibility::OnDemand,
                approval: ApprovalTier::Exec,
                authorization: None,
                call_timeout: None,
                era: None,
                headers: None,
                transforms: TransformSet::new(),
                #[cfg(feature = "oauth")]
                oauth: None,
            },
        }
    }

    /// The server id: the prefix of the tool names and the source id.
    pub fn server_id(&self) -> &str {
        &self.shared.id
    }

    /// The current catalog revision (1 after connecting, +1 per refresh).
    pub fn revision(&self) -> u64 {
        self.shared.revision()
    }

    /// The protocol version of the open connection (`None` once closed).
    pub fn protocol_version(&self) -> Option<String> {
        self.shared
            .connection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|c| c.protocol_version.clone())
    }

    /// Whether the connection is no good any more: a stdio remote that
    /// exited, an HTTP remote that refuses connections or no longer knows
    /// the session (it restarted), a request that failed in transport, the
    /// remote's change announcements that stopped — or the source is
    /// closed. Its tools then fail with `REMOTE_TRANSPORT_ERROR` until
    /// [`reconnect`](Self::reconnect) succeeds (once the remote is back);
    /// a host keeps its sources up by reconnecting the ones this says are
    /// disconnected, as `gonk-gateway` does every few seconds.
    pub fn is_disconnected(&self) -> bool {
        self.shared.connection().is_none_or(|live| live.is_broken())
    }

    /// How many connections this source has opened (1, +1 per reconnect).
    pub fn connections_opened(&self) -> u64 {
        self.shared.opened.load(Ordering::Acquire)
    }

    /// Reads the remote's catalog again and replaces the source's with it;
    /// the new revision. On error the previous catalog and revision stay.
    pub async fn refresh(&self) -> Result<u64, McpSourceError> {
        refresh(&self.shared).await
    }

    /// Opens a new connection (the header resolver is called again),
    /// closes the old one once, and refreshes; the new revision. On error
    /// the old connection stays (and its tools fail as it does).
    pub async fn reconnect(&self) -> Result<u64, McpSourceError> {
        let _one = self.shared.reconnecting.lock().await;
        reconnect(&self.shared).await
    }

    /// Unregisters every tool of the source and closes the connection. A
    /// refresh running meanwhile fails with "lifecycle changed during
    /// refresh". Closing again does nothing.
    pub async fn close(&self) -> Result<(), McpSourceError> {
        let connection = self.unregister();
        if let Some(connection) = connection {
            close_connection(connection).await;
        }
        Ok(())
    }

    /// Marks the source closed, removes its catalog and takes its
    /// connection (what `close` and drop share).
    fn unregister(&self) -> Option<Connection> {
        {
            let _commit = self
                .shared
                .revision
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            self.shared.closed.store(true, Ordering::Release);
            self.shared.lifecycle.fetch_add(1, Ordering::AcqRel);
            self.shared.registry.remove_source(&self.shared.id);
            let _ = self
                .shared
                .registry
                .replace_namespace_skills(&self.shared.id, []);
        }
        stop_watching(&self.shared);
        self.shared
            .connection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

/// Replaces the connection (the caller holds `reconnecting`): a new one
/// is opened first, so a remote that is still down leaves the old one in
/// place; the old one is closed once; the catalog is read again.
async fn reconnect(shared: &Arc<SourceShared>) -> Result<u64, McpSourceError> {
    if shared.closed.load(Ordering::Acquire) {
        return Err(McpSourceError::Closed {
            server_id: shared.id.clone(),
        });
    }
    let fresh = match shared.open().await {
        Ok(fresh) => fresh,
        Err(error) => {
            let mut unreachable = shared.unreachable.lock().unwrap_or_else(|p| p.into_inner());
            if unreachable.is_some() {
                let error = Arc::new(error);
                *unreachable = Some(Arc::clone(&error));
                return Err(McpSourceError::Unreachable {
                    server_id: shared.id.clone(),
                    last: error,
                });
            }
            return Err(error);
        }
    };
    let swapped = {
        let mut slot = shared.connection.lock().unwrap_or_else(|p| p.into_inner());
        if shared.closed.load(Ordering::Acquire) {
            Err(fresh)
        } else {
            shared.lifecycle.fetch_add(1, Ordering::AcqRel);
            Ok(slot.replace(fresh))
        }
    };
    let old = match swapped {
        Ok(old) => old,
        Err(unused) => {
            // Closed while connecting: the new connection is not used.
            close_connection(unused).await;
            return Err(McpSourceError::Closed {
                server_id: shared.id.clone(),
            });
        }
    };
    stop_watching(shared);
    if let Some(old) = old {
        close_connection(old).await;
    }
    start_watching(shared).await;
    let revision = refresh(shared).await?;
    // Reached at last: its namespace is its catalog's now (even an empty
    // one).
    if shared
        .unreachable
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .is_some()
    {
        shared.registry.release_source_hold(&shared.id);
    }
    Ok(revision)
}

/// Starts the watcher of the open connection and waits until it hears
/// announcements, so a change after this is never missed.
async fn start_watching(shared: &Arc<SourceShared>) {
    let Some(live) = shared.connection() else {
        return;
    };
    let (ready, heard) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(watch(Arc::downgrade(shared), live.ended, ready));
    if let Some(old) = shared
        .watcher
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .replace(task)
    {
        old.abort();
    }
    // Dropped unsent when the watcher ends early: nothing to wait for.
    // A remote that never acknowledges the subscription does not hold
    // the connect up for longer than the bound.
    let _ = tokio::time::timeout(WATCH_READY_BOUND, heard).await;
}

fn stop_watching(shared: &SourceShared) {
    if let Some(task) = shared
        .watcher
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        task.abort();
    }
}

impl Drop for McpSource {
    fn drop(&mut self) {
        if let Some(connection) = self.unregister() {
            connection.ended.cancel();
            // The last holder of the client ends its connection on drop.
            connection.client.shut_down();
        }
    }
}
