//! [`McpServerOptions`]: a server's identity, which tools it exposes and
//! how, its bounds (calls in flight, line size, shutdown grace) and how it
//! asks its client; and [`WriteToolPolicy`], what it does with write tools.

use crate::adapters::http::session_table::SessionLimits;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::asking::DEFAULT_ASK_TIMEOUT;
use super::inflight::DEFAULT_MAX_IN_FLIGHT_CALLS;
use super::request_state::{RequestStateKeys, SingleUseStore, DEFAULT_REQUEST_STATE_TTL};
use crate::adapters::mcp::DEFAULT_MAX_LINE_BYTES;
use crate::context::{ContextFactory, ToolContext};
use crate::definition::{ToolDefinition, ToolPredicate};
use crate::event::LogLevel;

/// What the server does with write tools (a tool that writes the file
/// system or uses the network, has a dynamic approval, or a static approval
/// tier of `write` or above — including no declared approval, which
/// resolves to `exec`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WriteToolPolicy {
    /// Advertise them, and log a warning naming them when the server
    /// starts (the stdio default: the user launched the server locally).
    #[default]
    Warn,
    /// Withhold every write tool that is not in the allow-list
    /// ([`McpServerOptions::allow_write_tools`]): it is not listed and a call
    /// gets `Unknown tool: NAME` (the HTTP default).
    RequireAllowlist,
    /// Advertise them without a warning.
    Permissive,
}

/// The default grace period of a graceful shutdown: 10 s.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Options of an MCP server: its identity and which tools it exposes.
///
/// ```
/// use gonk_tools::adapters::mcp::{McpServerOptions, WriteToolPolicy};
///
/// let options = McpServerOptions::new("notes", "1.2.0")
///     .write_policy(WriteToolPolicy::RequireAllowlist)
///     .allow_write_tools(["notes.create"]);
/// assert_eq!(options.name(), "notes");
/// ```
#[derive(Clone)]
pub struct McpServerOptions {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) title: Option<String>,
    pub(crate) instructions: Option<String>,
    pub(crate) write_policy: Option<WriteToolPolicy>,
    pub(crate) allow_write_tools: HashSet<String>,
    pub(crate) tasks_required: HashSet<String>,
    pub(crate) filter: Option<Arc<ToolPredicate>>,
    pub(crate) only_always_visible: bool,
    pub(crate) default_log_level: LogLevel,
    pub(crate) base_context: Option<Arc<ContextFactory>>,
    pub(crate) max_line_bytes: usize,
    pub(crate) max_in_flight_calls: usize,
    pub(crate) shutdown_grace: Duration,
    pub(crate) request_state_keys: Option<RequestStateKeys>,
    pub(crate) request_state_ttl: Duration,
    pub(crate) request_state_store: Option<Arc<dyn SingleUseStore>>,
    pub(crate) ask_timeout: Duration,
    /// The cap on open `subscriptions/listen` streams and one principal's
    /// share (set by `McpHttpOptions::max_listen_streams`).
    pub(crate) listen_limits: SessionLimits,
}

impl fmt::Debug for McpServerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerOptions")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("write_policy", &self.write_policy)
            .field("allow_write_tools", &self.allow_write_tools)
            .field("tasks_required", &self.tasks_required)
            .field("only_always_visible", &self.only_always_visible)
            .field("default_log_level", &self.default_log_level)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("max_in_flight_calls", &self.max_in_flight_calls)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("request_state_keys", &self.request_state_keys)
            .field("request_state_ttl", &self.request_state_ttl)
            .field("ask_timeout", &self.ask_timeout)
            .field("listen_limits", &self.listen_limits)
            .finish_non_exhaustive()
    }
}

impl McpServerOptions {
    /// A server named `name` at `version` (what `initialize` reports as
    /// `serverInfo`).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        McpServerOptions {
            name: name.into(),
            version: version.into(),
            title: None,
            instructions: None,
            write_policy: None,
            allow_write_tools: HashSet::new(),
            tasks_required: HashSet::new(),
            filter: None,
            only_always_visible: false,
            default_log_level: LogLevel::Info,
            base_context: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_in_flight_calls: DEFAULT_MAX_IN_FLIGHT_CALLS,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            request_state_keys: None,
            request_state_ttl: DEFAULT_REQUEST_STATE_TTL,
            request_state_store: None,
            ask_timeout: DEFAULT_ASK_TIMEOUT,
            listen_limits: SessionLimits::new(crate::adapters::mcp::DEFAULT_MAX_SESSIONS),
        }
    }

    /// The server name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// A human-readable title for `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Instructions for the model, sent in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The write-tool policy. Unset, it is [`WriteToolPolicy::Warn`] over
    /// stdio and [`WriteToolPolicy::RequireAllowlist`] over HTTP.
    pub fn write_policy(mut self, policy: WriteToolPolicy) -> Self {
        self.write_policy = Some(policy);
        self
    }

    /// Write tools exposed under [`WriteToolPolicy::RequireAllowlist`], by
    /// registry name or MCP name.
    pub fn allow_write_tools<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.allow_write_tools
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Detached tools a client may call only as a task, by registry name or
    /// MCP name: work whose job handle alone is of no use to the caller.
    /// A client that did not declare the tasks extension
    /// (`io.modelcontextprotocol/tasks`) gets the protocol's
    /// missing-capability error (`-32021`) in the stateless era, an
    /// `INPUT_UNAVAILABLE` error result on a 2025 session; the tool does
    /// not run. Other detached tools give such a client the job handle.
    /// Without a job runner installed no tool is a task and this does
    /// nothing.
    ///
    /// ```
    /// use gonk_tools::adapters::mcp::McpServerOptions;
    ///
    /// let options = McpServerOptions::new("builds", "1.0.0").tasks_required(["build.release"]);
    /// # let _ = options;
    /// ```
    pub fn tasks_required<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.tasks_required
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Exposes only the tools for which `keep` is true. Others are hidden:
    /// not listed, and a call gets `Unknown tool: NAME`.
    pub fn filter(
        mut self,
        keep: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some(Arc::new(keep));
        self
    }

    /// Lists only tools whose MCP visibility (the `mcp` hint, else the
    /// tool's) is `always`; on-demand tools stay callable by name. Off by
    /// default: MCP has no on-demand discovery, so every tool is listed.
    pub fn only_always_visible(mut self, only: bool) -> Self {
        self.only_always_visible = only;
        self
    }

    /// The log level in force until the client sends `logging/setLevel`
    /// (default `info`).
    pub fn default_log_level(mut self, level: LogLevel) -> Self {
        self.default_log_level = level;
        self
    }

    /// Over stdio, the longest accepted line (one JSON-RPC message) in
    /// bytes; default [`DEFAULT_MAX_LINE_BYTES`] (16 MiB). A longer line is
    /// skipped and answered with a `-32600` error (with the request's id
    /// when it appears in the line's first 4 KiB). Over HTTP the limit is
    /// [`McpHttpOptions::max_body_bytes`](crate::adapters::mcp::McpHttpOptions::max_body_bytes).
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// The most `tools/call`s running at once, server-wide (over HTTP,
    /// across every session); default [`DEFAULT_MAX_IN_FLIGHT_CALLS`]. A
    /// call past the limit is refused at once with a JSON-RPC error
    /// (`-32000`, "Server busy: …", `data.code` = `"BUSY"`); the typed
    /// [`McpClient`](crate::adapters::mcp::McpClient) reports it as a `BUSY` error.
    pub fn max_in_flight_calls(mut self, max: usize) -> Self {
        self.max_in_flight_calls = max.max(1);
        self
    }

    /// How long a graceful shutdown lets running calls finish before it
    /// cancels them (default 10 s). A call cancelled by the shutdown ends
    /// with an `ABORTED` error saying so; new calls during the shutdown
    /// are refused (`-32000`, `data.code` = `"SHUTTING_DOWN"`).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The keys that seal `requestState` when a `2026-07-28` call asks its
    /// client (see [`crate::ask`]). Give every process of a deployment the
    /// same ring (e.g. [`RequestStateKeys::from_env`]) so a retry can land
    /// on any of them; unset, each server seals with a random key of its
    /// own.
    pub fn request_state_keys(mut self, keys: RequestStateKeys) -> Self {
        self.request_state_keys = Some(keys);
        self
    }

    /// How long a sealed `requestState` stays good (default
    /// [`DEFAULT_REQUEST_STATE_TTL`], 10 minutes): a retry after that is
    /// refused and the client calls again from the start.
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }

    /// Where used `requestState`s are remembered, so each opens once
    /// (default: in this process, [`InMemorySingleUseStore`](super::request_state::InMemorySingleUseStore)). Give every
    /// process that shares the [keys](Self::request_state_keys) one shared
    /// store (`RedisSingleUseStore`, feature `redis`), or a state used on
    /// one replica opens again on another.
    pub fn request_state_store(mut self, store: Arc<dyn SingleUseStore>) -> Self {
        self.request_state_store = Some(store);
        self
    }

    /// How long a 2025 session waits for the client to answer a question
    /// (elicitation, sampling, roots) before the call goes on without it
    /// (default [`DEFAULT_ASK_TIMEOUT`], 5 minutes): an approval question
    /// becomes `APPROVAL_REQUIRED`, a tool's own question
    /// `INPUT_UNAVAILABLE`. A `2026-07-28` request holds nothing: it
    /// answers `input_required` at once.
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// Makes the base context of every request (cwd, env, scope, host
    /// values, …). A host value it carries reaches the tool beside the
    /// adapter's own [`McpRequestContext`](crate::adapters::mcp::McpRequestContext):
    /// each is found by its type with [`ToolContext::host`].
    ///
    /// Auth it carries ([`ToolContext::with_auth`]) applies to listing and
    /// calling alike: `tools/list` shows only the tools its policy lets the
    /// principal discover, and a hidden tool is `Unknown tool` when called.
    /// Over HTTP the authentication hook's auth, when it gives one, wins.
    pub fn base_context(mut self, make: impl Fn() -> ToolContext + Send + Sync + 'static) -> Self {
        self.base_context = Some(Arc::new(make));
        self
    }
}
