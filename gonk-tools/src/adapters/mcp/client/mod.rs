//! [`McpClient`]: the client side of the adapter, on rmcp's client. A call
//! is a [`ToolEventStream`], like a call into a local registry: progress
//! and log notifications become `progress` and `log` events, the result
//! becomes a `result` or `error` event, and dropping the stream cancels the
//! call on the server.
//!
//! A connection speaks `2026-07-28` when the server does, and the 2025
//! revisions' `initialize` handshake otherwise ([`McpEra`]); the calls, and
//! the typed clients over them, behave the same either way. So do the
//! hooks of an [`McpClientBuilder`], which answer the server's questions
//! (elicitation, sampling, roots) in both eras.
#![allow(deprecated)] // rmcp marks logging (SEP-2577) deprecated; 2025-era servers use it.

mod answers;
mod builder;
mod http;
mod lifecycle;
#[cfg(feature = "oauth")]
pub mod oauth;
mod routes;
mod skills;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientConfig, ClientRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorCode as JsonRpcCode, Implementation,
    InputRequiredResult, ListRootsResult, ProgressToken, ProtocolVersion, RequestId,
    RequestMetaObject, ServerResult, SetLevelRequestParams, Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::server::content::result_to_outcome;
use super::server::notify::to_mcp_level;
use super::server::tools::WRAPPED_INPUT_META_KEY;
use crate::ask::{InputKind, InputRequest};
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEventStream;
use crate::event::{LogLevel, ToolEvent};
use answers::{Answers, RoundError};
pub use answers::{ElicitationRequest, UrlElicitationRequest};
pub use builder::McpClientBuilder;
pub use lifecycle::McpEra;
use routes::Inbox;
pub use skills::{McpSkillEntry, McpSkillError};

/// Why an MCP client could not connect or answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpClientError {
    /// The server process could not be started.
    #[error("could not start the MCP server process: {0}")]
    Spawn(#[source] std::io::Error),
    /// The connection could not start: neither `server/discover` nor the
    /// `initialize` handshake succeeded (wrong URL, wrong key, not an MCP
    /// server, no protocol version in common, …).
    #[error("could not connect to the MCP server: {0}")]
    Connect(String),
    /// A request failed at the protocol or transport level.
    #[error("MCP request failed: {0}")]
    Request(#[from] ServiceError),
    /// The server asks for an OAuth token and none could be had without a
    /// person (feature `oauth`): an authorization-code client without a
    /// redirect, and no usable token in its store. Log in, then connect
    /// again.
    #[error("{0}")]
    AuthorizationRequired(String),
    /// The OAuth flow failed (feature `oauth`): discovery, registration,
    /// the authorization server's answer or its checks (`iss`, `resource`),
    /// the token exchange; the message says which.
    #[error("{0}")]
    Authorization(String),
}

/// Options of an HTTP connection.
#[derive(Clone, Debug)]
pub struct McpHttpClientOptions {
    api_key: Option<String>,
    headers: HashMap<::http::HeaderName, ::http::HeaderValue>,
    renew_expired_sessions: bool,
    outbound: crate::adapters::http::OutboundHttp,
}

impl Default for McpHttpClientOptions {
    fn default() -> Self {
        McpHttpClientOptions {
            api_key: None,
            headers: HashMap::new(),
            renew_expired_sessions: true,
            outbound: crate::adapters::http::OutboundHttp::new(),
        }
    }
}

impl McpHttpClientOptions {
    /// Default options: no API key; an expired session is renewed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a 2025-revision session the server no longer knows (it
    /// answers `404` to the session id, as a restarted server does) is
    /// renewed by the connection on its own: a new `initialize` with the
    /// same headers, and the request sent again. On by default. Off, the
    /// request fails as a transport error and the holder connects anew —
    /// what [`McpSource`](super::McpSource) does, so that its header
    /// resolver runs again and the remote's catalog is read again.
    ///
    /// ```
    /// use gonk_tools::adapters::mcp::McpHttpClientOptions;
    ///
    /// let options = McpHttpClientOptions::new().renew_expired_sessions(false);
    /// # let _ = options;
    /// ```
    pub fn renew_expired_sessions(mut self, renew: bool) -> Self {
        self.renew_expired_sessions = renew;
        self
    }

    /// Reaches the server (and, with OAuth, its authorization server)
    /// with `outbound`'s TLS roots instead of the platform's alone: an
    /// `https://` server whose certificate a private CA signed.
    ///
    /// ```
    /// use gonk_tools::adapters::http::OutboundHttp;
    /// use gonk_tools::adapters::mcp::McpHttpClientOptions;
    ///
    /// # fn run(private_ca_pem: &str) -> Result<(), Box<dyn std::error::Error>> {
    /// let options = McpHttpClientOptions::new()
    ///     .outbound(OutboundHttp::new().root_certificates_pem(private_ca_pem)?);
    /// # let _ = options;
    /// # Ok(()) }
    /// ```
    pub fn outbound(mut self, outbound: crate::adapters::http::OutboundHttp) -> Self {
        self.outbound = outbound;
        self
    }

    /// Sends `Authorization: Bearer <key>`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sends header `name: value` with every request of the connection
    /// (a gateway's upstream credential, a tenant header). A name or value
    /// HTTP does not allow is refused with the reason.
    ///
    /// ```
    /// use gonk_tools::adapters::mcp::McpHttpClientOptions;
    ///
    /// let options = McpHttpClientOptions::new().header("X-Tenant", "acme").unwrap();
    /// assert!(McpHttpClientOptions::new().header("bad name", "x").is_err());
    /// # let _ = options;
    /// ```
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, String> {
        let name = ::http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("invalid HTTP header name {name:?}: {e}"))?;
        let value = ::http::HeaderValue::from_str(value)
            .map_err(|e| format!("invalid value of HTTP header {name}: {e}"))?;
        if name == ::http::header::AUTHORIZATION {
            // rmcp sends its own Authorization from `api_key`; one wins.
            self.api_key = None;
        }
        self.headers.insert(name, value);
        Ok(self)
    }
}

/// The client handler: it answers the server's requests (elicitation,
/// sampling, roots) through the hooks; notifications are routed by the
/// transport.
#[derive(Clone)]
struct ClientState {
    info: ClientConfig,
    answers: Arc<Answers>,
}

impl ClientState {
    /// The client's identity, and the capabilities of its hooks.
    fn new(answers: Arc<Answers>) -> Self {
        let info = ClientConfig::new(
            answers.capabilities(),
            Implementation::new("gonk-tools", env!("CARGO_PKG_VERSION")),
        );
        ClientState { info, answers }
    }

    /// Answers a session's request of `kind` with the hooks, in rmcp's
    /// result type `R`.
    async fn answer<R: serde::de::DeserializeOwned>(
        &self,
        kind: InputKind,
        params: impl serde::Serialize,
    ) -> Result<R, rmcp::ErrorData> {
        let params = serde_json::to_value(params)
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
        let answer = self.answers.answer(InputRequest { kind, params }).await?;
        serde_json::from_value(answer).map_err(|e| {
            rmcp::ErrorData::internal_error(
                format!("the client's answer to {} is malformed: {e}", kind.method()),
                None,
            )
        })
    }
}

impl ClientHandler for ClientState {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        self.answer(InputKind::Elicitation, request).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        self.answer(InputKind::Sampling, params).await
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        self.answer(InputKind::Roots, json!({})).await
    }
}

/// What every call of one connection shares.
struct Shared {
    era: McpEra,
    /// Which tools take their input wrapped as `{value}`, from the last
    /// listing (`None` before the first, and after the server announced a
    /// change).
    wrapped: Mutex<Option<HashMap<String, bool>>>,
    /// The log level calls ask for in the stateless era.
    log_level: Mutex<LogLevel>,
    /// The hooks that answer the server's questions.
    answers: Arc<Answers>,
    /// How many `tools/call` requests one call sends at most while the
    /// server keeps asking for input.
    max_input_rounds: usize,
}

impl Shared {
    fn learn(&self, tools: &[Tool]) {
        *self.wrapped.lock().unwrap_or_else(|p| p.into_inner()) = Some(wrapped_inputs(tools));
    }

    fn log_level(&self) -> LogLevel {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// An MCP client connection: to a server started as a child process
/// (stdio) or to a streamable-HTTP endpoint.
///
/// [`invoke`](Self::invoke) has the shape of a local
/// [`ToolRegistry::invoke`](crate::ToolRegistry::invoke), and the client is
/// a [`Transport`](crate::client::Transport), so generated typed clients
/// call tools across processes:
///
/// ```no_run
/// use gonk_tools::adapters::mcp::McpClient;
/// use gonk_tools::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let mut command = tokio::process::Command::new("notes");
/// command.arg("mcp");
/// let client = McpClient::connect_stdio(command).await?;
/// let events = client.invoke("notes.search", json!({"query": "rust"}));
/// let output = collect_tool_outcome(events, |_| {}).await?;
/// println!("{}", output.data);
/// # Ok(()) }
/// ```
///
/// # Protocol versions
///
/// Every connection asks `server/discover` first and speaks `2026-07-28`
/// when the server supports it ([`McpEra::Stateless`]): no handshake and no
/// session, each request carries its own `_meta` (protocol version, client
/// info and capabilities, log level) and, over HTTP, the `Mcp-Method`,
/// `Mcp-Name` and `Mcp-Param-*` headers (a tool parameter marked
/// `x-mcp-header` in its input schema is mirrored into its header; a tool
/// whose `x-mcp-header` marks are invalid is left out of the listing). A
/// server of the 2025 revisions (it answers `server/discover` with an
/// error, not within 10 s, or with only handshake versions) gets the
/// `initialize` handshake instead ([`McpEra::Session`]).
/// [`protocol_version`](Self::protocol_version) and [`era`](Self::era) say
/// which one was negotiated.
///
/// # Answering the server
///
/// A server may ask the client something during a call: a form for the
/// human, a completion from the application's model, its roots. A client
/// made by [`McpClient::builder`] answers through the hooks it was given
/// (in `2026-07-28` by retrying the call with the answers, on a 2025
/// session by answering the server's request); the `connect_*` functions
/// here make a client without hooks, which declares no such capability:
/// it declines an elicitation, answers sampling and roots with "method
/// not found", and a `2026-07-28` call that asks ends with
/// `INPUT_UNAVAILABLE`.
///
/// # The tool listing
///
/// [`list_tools`](Self::list_tools) honours the cache hints of a
/// `2026-07-28` listing: within its `ttlMs` the listing is served from
/// memory without a request (one client is one principal, so a `private`
/// listing is kept like a `public` one). A call needs the tool's entry in
/// the listing (for `Mcp-Param-*` headers, and for a tool whose input
/// travels wrapped as `{value}`): it uses the last listing, and lists again
/// when the tool is not in it or the server announced a change
/// (`notifications/tools/list_changed`).
pub struct McpClient {
    service: RunningService<RoleClient, ClientState>,
    inbox: Arc<Inbox>,
    shared: Arc<Shared>,
    version: ProtocolVersion,
    /// The HTTP client of a streamable-HTTP connection, which notices a
    /// server that went away or forgot the session.
    http: Option<http::WatchedHttp>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.server_info().map(|i| i.name.clone()))
            .field("protocol_version", &self.version)
            .finish_non_exhaustive()
    }
}

/// A JSON-RPC error answering a call: the stateless era's missing-capability
/// error (`-32021`) is `INPUT_UNAVAILABLE` with the capabilities it names;
/// a server refusal that names its code in `data.code` (`BUSY`,
/// `SHUTTING_DOWN`) keeps it; anything else is `INTERNAL`.
fn refusal(name: &str, error: &rmcp::ErrorData) -> ToolError {
    if error.code == JsonRpcCode::MISSING_REQUIRED_CLIENT_CAPABILITY {
        let required = error
            .data
            .as_ref()
            .and_then(|data| data.get("requiredCapabilities"))
            .cloned()
            .unwrap_or_else(|| json!({}));
        return ToolError::new(ErrorCode::InputUnavailable, error.message.to_string())
            .with_details(json!({ "requiredCapabilities": required }));
    }
    let message = format!(
        "the MCP server refused the call of {name}: {} (JSON-RPC {})",
        error.message, error.code.0
    );
    match error
        .data
        .as_ref()
        .and_then(|data| data.get("code"))
        .and_then(Value::as_str)
    {
        Some(code) if !code.is_empty() => {
            ToolError::new(ErrorCode::custom(code.to_owned()), message)
        }
        _ => ToolError::internal(message),
    }
}

fn transport_error(error: impl std::fmt::Display) -> ToolError {
    ToolError::internal(format!("MCP transport failed: {error}"))
}

/// The outcome of a `tools/call` answer, by its `resultType`: `complete`
/// (or absent, as in the 2025 era) is the tool's result; anything else
/// (`input_required` is answered before this) is a protocol error.
fn answer(name: &str, result: ServerResult) -> ToolEvent {
    let result = match result {
        ServerResult::CallToolResult(result) => result,
        // A complete result with no known field decodes as one of these.
        ServerResult::EmptyResult(_) => CallToolResult::default(),
        ServerResult::InputRequiredResult(_) => {
            return ToolEvent::error(transport_error(format!(
                "tools/call of {name} still asks for input after the client answered"
            )))
        }
        ServerResult::CustomResult(custom) => {
            let result_type = custom.0.get("resultType").and_then(Value::as_str);
            if let Some(kind) = result_type.filter(|kind| *kind != "complete") {
                return ToolEvent::error(transport_error(format!(
                    "tools/call of {name} answered with resultType `{kind}`, which this client does not handle"
                )));
            }
            match serde_json::from_value::<CallToolResult>(custom.0) {
                Ok(result) => result,
                Err(error) => {
                    return ToolEvent::error(transport_error(format!(
                        "unreadable answer to tools/call of {name}: {error}"
                    )))
                }
            }
        }
        other => {
            return ToolEvent::error(transport_error(format!(
                "unexpected answer to tools/call of {name}: {other:?}"
            )))
        }
    };
    match result_to_outcome(result) {
        Ok(output) => ToolEvent::Result {
            data: output.data,
            display: output.display,
        },
        Err(error) => ToolEvent::error(error),
    }
}

/// How a `tools/call` ended, before it is mapped to an outcome.
pub(crate) enum CallEnd {
    /// The server answered (not `input_required`).
    Answered(Box<ServerResult>),
    /// The server refused the request with a JSON-RPC error.
    Refused(rmcp::ErrorData),
    /// The request could not be sent or its answer never came.
    Broken(String),
}

/// The outcome of a call of a server's tool, as [`McpClient::invoke`]
/// reports it: the tool's own outcome, a refusal, or a transport failure
/// (`INTERNAL`).
fn local_end(name: &str, end: CallEnd) -> ToolEvent {
    match end {
        CallEnd::Answered(result) => answer(name, *result),
        CallEnd::Refused(error) => ToolEvent::error(refusal(name, &error)),
        CallEnd::Broken(error) => ToolEvent::error(transport_error(error)),
    }
}

/// Cancels the call on the server when the stream is dropped early.
struct CallGuard {
    peer: Peer<RoleClient>,
    id: RequestId,
    token: ProgressToken,
    inbox: Arc<Inbox>,
    done: bool,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.inbox.unregister(&self.token);
        if self.done {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            // Over stateless HTTP rmcp cancels by closing the call's
            // response stream; elsewhere this is `notifications/cancelled`.
            let peer = self.peer.clone();
            let param = CancelledNotificationParam::new(
                Some(self.id.clone()),
                Some("the client dropped the call".to_owned()),
            );
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

impl McpClient {
    /// A builder of a connection whose hooks answer the server's questions
    /// (elicitation, sampling, roots).
    pub fn builder() -> McpClientBuilder {
        McpClientBuilder::new()
    }

    /// Starts `command` (e.g. `notes mcp`) and connects to it over its
    /// stdin/stdout. Its stderr is inherited. The process is killed when
    /// the client is dropped. The client answers no questions (see
    /// [`builder`](Self::builder)).
    pub async fn connect_stdio(command: tokio::process::Command) -> Result<Self, McpClientError> {
        McpClientBuilder::new().connect_stdio(command).await
    }

    /// Connects over a pair of byte streams (e.g. a `tokio::io::duplex`
    /// pipe to an in-process [`serve_io`](super::serve_io)). The client
    /// answers no questions (see [`builder`](Self::builder)).
    pub async fn connect_io<R, W>(read: R, write: W) -> Result<Self, McpClientError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        McpClientBuilder::new().connect_io(read, write).await
    }

    /// Connects to a streamable-HTTP endpoint (`http://127.0.0.1:8080/mcp`).
    /// The client answers no questions (see [`builder`](Self::builder)).
    pub async fn connect_http(
        url: &str,
        options: McpHttpClientOptions,
    ) -> Result<Self, McpClientError> {
        McpClientBuilder::new().connect_http(url, options).await
    }

    /// The server's `serverInfo`, from `server/discover` or the handshake.
    pub fn server_info(&self) -> Option<Implementation> {
        self.service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.clone())
    }

    /// The protocol version negotiated with the server: `2026-07-28` when
    /// it speaks it, else the newest handshake version both support.
    pub fn protocol_version(&self) -> &ProtocolVersion {
        &self.version
    }

    /// The generation of the protocol this connection speaks (the era of
    /// [`protocol_version`](Self::protocol_version)).
    pub fn era(&self) -> McpEra {
        self.shared.era
    }

    /// The rmcp peer, for anything beyond tool calls. In the stateless era
    /// it adds the per-request `_meta` to every request it sends.
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// The server's tools (`tools/list`, all pages). Within the `ttlMs` of
    /// the last listing the answer comes from memory without a request.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpClientError> {
        let tools = self.service.peer().list_all_tools().await?;
        self.shared.learn(&tools);
        Ok(tools)
    }

    /// Reads the resource at `uri` (`resources/read`). A server's refusal
    /// comes back with its code (`RESOURCE_NOT_FOUND` for a missing or
    /// hidden resource).
    pub async fn read_resource(
        &self,
        uri: &str,
    ) -> Result<Vec<crate::resource::ResourceContents>, ToolError> {
        let read = self
            .service
            .peer()
            .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
            .await
            .map_err(|error| read_refused(uri, error))?;
        serde_json::to_value(read.contents)
            .and_then(serde_json::from_value)
            .map_err(|e| ToolError::internal(format!("resources/read {uri}: {e}")))
    }

    /// A watch on the server's announcements that its tools changed
    /// (`notifications/tools/list_changed`). In a 2025 session the server
    /// sends them on its own; in `2026-07-28` this opens a
    /// `subscriptions/listen` stream for them (refused when the server
    /// does not offer it).
    pub async fn watch_tools(&self) -> Result<McpToolChanges, McpClientError> {
        let heard = self.inbox.watch_tools_changed();
        let subscription = match self.shared.era {
            McpEra::Session => None,
            McpEra::Stateless => {
                let filter = rmcp::model::SubscriptionFilter::builder()
                    .tools_list_changed()
                    .build();
                Some(self.service.peer().listen(filter).await?)
            }
        };
        Ok(McpToolChanges {
            heard,
            subscription,
        })
    }

    /// Sets the minimum level of the log notifications the server sends:
    /// in the stateless era every later call asks for it in its `_meta`
    /// (the default is `info`); in a session it is `logging/setLevel`.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), McpClientError> {
        *self
            .shared
            .log_level
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = level;
        if self.shared.era == McpEra::Session {
            self.service
                .peer()
                .set_level(SetLevelRequestParams::new(to_mcp_level(level)))
                .await?;
        }
        Ok(())
    }

    /// Calls `name` with `input` and streams its events: `progress` and
    /// `log` events as the server sends them, then one `result` or
    /// `error`. Dropping the stream cancels the call on the server.
    ///
    /// A `2026-07-28` server that answers `input_required` gets the hooks'
    /// answers in a retry of the call (a new request, with the server's
    /// `requestState` as sent), until it completes or
    /// [`McpClientBuilder::max_input_rounds`] requests were sent.
    pub fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        self.call(name, input, local_end)
    }

    /// Calls `name` like [`invoke`](Self::invoke), but ends the stream
    /// with what `finish` makes of how the call ended (the importer maps
    /// a remote's raw result its own way).
    pub(crate) fn call(
        &self,
        name: &str,
        input: Value,
        finish: fn(&str, CallEnd) -> ToolEvent,
    ) -> ToolEventStream {
        let name = name.to_owned();
        let peer = self.service.peer().clone();
        let inbox = Arc::clone(&self.inbox);
        let shared = Arc::clone(&self.shared);
        Box::pin(async_stream::stream! {
            let arguments = if is_wrapped(&peer, &inbox, &shared, &name).await {
                json!({ "value": input })
            } else {
                input
            };
            let Value::Object(arguments) = arguments else {
                yield ToolEvent::error(ToolError::new(
                    ErrorCode::InvalidInput,
                    format!("the input of MCP tool {name} must be a JSON object"),
                ));
                return;
            };
            // The call's CLIENT span; its trace context goes in `_meta`
            // so the server's spans join this trace (both eras).
            let span = super::telemetry::client_span(&name);
            let trace = span.in_scope(crate::telemetry::TraceContext::current);
            let mut params = CallToolRequestParams::new(name.clone()).with_arguments(arguments);
            let mut state_only_rounds = 0u32;
            for round in 1..=shared.max_input_rounds {
                let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
                let options = request_options(&shared, trace.as_ref());
                let mut handle = match peer.send_request_with_option(request, options).await {
                    Ok(handle) => handle,
                    Err(error) => {
                        yield finish(&name, CallEnd::Broken(error.to_string()));
                        return;
                    }
                };
                let (sender, mut events) = mpsc::unbounded_channel();
                inbox.register(handle.progress_token.clone(), sender);
                let mut guard = CallGuard {
                    peer: peer.clone(),
                    id: handle.id.clone(),
                    token: handle.progress_token.clone(),
                    inbox: Arc::clone(&inbox),
                    done: false,
                };
                let response = loop {
                    tokio::select! {
                        biased;
                        Some(event) = events.recv() => yield event,
                        response = &mut handle.rx => break response,
                    }
                };
                guard.done = true;
                while let Ok(event) = events.try_recv() {
                    yield event;
                }
                drop(guard);
                let result = match response {
                    Ok(Ok(result)) => result,
                    Ok(Err(ServiceError::McpError(error))) => {
                        yield finish(&name, CallEnd::Refused(error));
                        return;
                    }
                    Ok(Err(error)) => {
                        yield finish(&name, CallEnd::Broken(error.to_string()));
                        return;
                    }
                    Err(_) => {
                        yield finish(&name, CallEnd::Broken("the connection closed before the call finished".to_owned()));
                        return;
                    }
                };
                let ServerResult::InputRequiredResult(asked) = result else {
                    yield finish(&name, CallEnd::Answered(Box::new(result)));
                    return;
                };
                if round == shared.max_input_rounds {
                    break;
                }
                let state_only = asked.input_requests.as_ref().is_none_or(|asked| asked.is_empty());
                if let Err(error) = prepare_retry(&shared.answers, &name, asked, &mut params).await {
                    yield ToolEvent::error(error);
                    return;
                }
                if state_only {
                    // A server that asks only to be asked again (it sheds
                    // load) gets a growing pause, as rmcp's client gives.
                    let millis = (50u64 << state_only_rounds.min(3)).min(250);
                    tokio::time::sleep(std::time::Duration::from_millis(millis)).await;
                    state_only_rounds += 1;
                } else {
                    state_only_rounds = 0;
                }
            }
            yield ToolEvent::error(ToolError::internal(format!(
                "tools/call of {name} still asked for input after {} rounds (McpClientBuilder::max_input_rounds)",
                shared.max_input_rounds
            )));
        })
    }

    /// Whether the connection's service loop has ended (a stdio server
    /// that exited, a transport that closed): every request fails from now on.
    pub(crate) fn is_transport_closed(&self) -> bool {
        self.service.is_transport_closed()
    }

    /// Whether the connection is no good any more: its transport closed,
    /// or (over HTTP) a request found the server gone (the connection was
    /// refused) or the session unknown to it (`404`). With
    /// [`McpHttpClientOptions::renew_expired_sessions`] on, rmcp may have
    /// renewed such a session since; its holder reconnects either way.
    pub(crate) fn has_failed(&self) -> bool {
        self.is_transport_closed()
            || self
                .http
                .as_ref()
                .is_some_and(http::WatchedHttp::has_failed)
    }

    /// Ends the connection without waiting (over stdio the server's stdin
    /// is closed), for a holder that cannot take the client by value.
    pub(crate) fn shut_down(&self) {
        self.service.cancellation_token().cancel();
    }

    /// Closes the connection (and, over stdio, ends the server process).
    pub async fn close(mut self) -> Result<(), McpClientError> {
        self.service
            .close()
            .await
            .map_err(|e| McpClientError::Connect(e.to_string()))?;
        Ok(())
    }
}

/// Announcements that a server's tools changed, from
/// [`McpClient::watch_tools`].
pub struct McpToolChanges {
    heard: tokio::sync::watch::Receiver<u64>,
    /// The `subscriptions/listen` stream of a `2026-07-28` connection; its
    /// notifications also pass the client's inbox, which counts them.
    subscription: Option<rmcp::service::Subscription>,
}

impl std::fmt::Debug for McpToolChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolChanges")
            .field("subscribed", &self.subscription.is_some())
            .finish_non_exhaustive()
    }
}

impl McpToolChanges {
    /// Resolves at the next announcement after the last one seen (several
    /// at once are seen once); `None` once the connection or the
    /// subscription ended.
    pub async fn changed(&mut self) -> Option<()> {
        loop {
            let drained = match &mut self.subscription {
                None => {
                    return self.heard.changed().await.ok();
                }
                Some(subscription) => tokio::select! {
                    biased;
                    changed = self.heard.changed() => return changed.ok(),
                    next = subscription.next() => next,
                },
            };
            // The inbox counted the notification; an ended stream ends the watch.
            match drained {
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => {
                    self.subscription = None;
                    // What the inbox heard before the end still counts.
                    return self.heard.has_changed().ok().filter(|yes| *yes).map(|_| {
                        self.heard.mark_unchanged();
                    });
                }
            }
        }
    }
}

/// The MCP client is a [`Transport`](crate::client::Transport): a generated
/// typed client (`toolset!`) calls tools on an MCP server through it.
impl crate::client::Transport for McpClient {
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        McpClient::invoke(self, name, input)
    }

    fn read_resource<'a>(&'a self, uri: &'a str) -> crate::client::ReadFuture<'a> {
        Box::pin(async move {
            McpClient::read_resource(self, uri)
                .await
                .map_err(crate::client::ClientError::Tool)
        })
    }
}

/// A refused `resources/read` as our error: the server's own code when it
/// sent one in `data.code` (a gonk-tools server does), else
/// `RESOURCE_NOT_FOUND` for MCP's not-found codes (`-32002`, and `-32602`
/// with the URI in `data`), else `INTERNAL`.
fn read_refused(uri: &str, error: ServiceError) -> ToolError {
    let ServiceError::McpError(error) = error else {
        return ToolError::internal(format!("resources/read {uri}: {error}"));
    };
    let data = error.data.as_ref();
    let code = match data.and_then(|d| d.get("code")).and_then(Value::as_str) {
        Some(code) => ErrorCode::parse(code),
        None if error.code.0 == -32002
            || (error.code.0 == -32602 && data.and_then(|d| d.get("uri")).is_some()) =>
        {
            ErrorCode::ResourceNotFound
        }
        None => ErrorCode::Internal,
    };
    let mut refused = ToolError::new(code, error.message.to_string());
    if let Some(data) = error.data {
        refused = refused.with_details(data);
    }
    refused
}

/// The options of one `tools/call` request: in the stateless era its
/// `_meta` asks for the client's log level.
fn request_options(
    shared: &Shared,
    trace: Option<&crate::telemetry::TraceContext>,
) -> PeerRequestOptions {
    match (shared.era, trace) {
        (McpEra::Stateless, trace) => {
            let mut meta = RequestMetaObject::new();
            meta.set_log_level(to_mcp_level(shared.log_level()));
            if let Some(trace) = trace {
                trace.write_meta(&mut meta);
            }
            PeerRequestOptions::no_options().with_meta(meta)
        }
        (McpEra::Session, Some(trace)) => {
            let mut meta = RequestMetaObject::new();
            trace.write_meta(&mut meta);
            PeerRequestOptions::no_options().with_meta(meta)
        }
        (McpEra::Session, None) => PeerRequestOptions::no_options(),
    }
}

/// Turns `params` into the retry of a call the server answered with
/// `input_required`: the hooks' answers to its `inputRequests`, keyed as
/// the server keyed them (none when it asked nothing), and its
/// `requestState` verbatim (none when it sent none). A question no hook
/// answers ends the call with `INPUT_UNAVAILABLE`, naming what was asked.
async fn prepare_retry(
    answers: &Answers,
    name: &str,
    asked: InputRequiredResult,
    params: &mut CallToolRequestParams,
) -> Result<(), ToolError> {
    let requests = asked.input_requests.unwrap_or_default();
    params.input_responses = if requests.is_empty() {
        None
    } else {
        match answers.answer_round(requests).await {
            Ok(responses) => Some(responses),
            Err(RoundError::Unanswered(methods)) => {
                return Err(ToolError::new(
                    ErrorCode::InputUnavailable,
                    format!(
                        "{name} needs input from the client ({}), which this client cannot give",
                        methods.join(", ")
                    ),
                )
                .with_details(json!({ "inputRequests": methods })))
            }
            Err(RoundError::Unreadable(error)) => {
                return Err(transport_error(format!(
                    "unreadable inputRequests in the answer to tools/call of {name}: {error}"
                )))
            }
            Err(RoundError::Refused(error)) => {
                return Err(ToolError::new(
                    ErrorCode::InputUnavailable,
                    format!(
                        "the client could not answer the input {name} asked for: {}",
                        error.message
                    ),
                ))
            }
        }
    };
    params.request_state = asked.request_state;
    Ok(())
}

/// Which tools take their input wrapped as `{value}`.
fn wrapped_inputs(tools: &[Tool]) -> HashMap<String, bool> {
    tools
        .iter()
        .map(|tool| (tool.name.to_string(), takes_wrapped_input(tool)))
        .collect()
}

/// Whether a listed tool of ours takes its input wrapped as `{value}`.
fn takes_wrapped_input(tool: &Tool) -> bool {
    tool.meta
        .as_ref()
        .and_then(|m| m.0.get(WRAPPED_INPUT_META_KEY))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Whether `name` takes its input wrapped, from the last listing; lists
/// the tools first when `name` is not in it or the server announced a
/// change. Listing also teaches the HTTP transport the tool's
/// `x-mcp-header` parameters.
async fn is_wrapped(peer: &Peer<RoleClient>, inbox: &Inbox, shared: &Shared, name: &str) -> bool {
    if inbox.take_tools_changed() {
        *shared.wrapped.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    let known = shared
        .wrapped
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .and_then(|map| map.get(name).copied());
    if let Some(wrapped) = known {
        return wrapped;
    }
    let Ok(tools) = peer.list_all_tools().await else {
        return false;
    };
    shared.learn(&tools);
    tools
        .iter()
        .find(|tool| tool.name == name)
        .is_some_and(takes_wrapped_input)
}

#[cfg(test)]
mod tests;
