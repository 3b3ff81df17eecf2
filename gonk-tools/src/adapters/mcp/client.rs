//! [`McpClient`]: the client side of the adapter, on rmcp's client. A call
//! is a [`ToolEventStream`], like a call into a local registry: progress
//! and log notifications become `progress` and `log` events, the result
//! becomes a `result` or `error` event, and dropping the stream sends
//! `notifications/cancelled`.
#![allow(deprecated)] // rmcp marks logging (SEP-2577) deprecated; 2025-era servers use it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, GetMeta, Implementation, JsonRpcMessage, ProgressToken, RequestId,
    ServerNotification, ServerResult, SetLevelRequestParams, Tool,
};
use rmcp::service::{
    Peer, PeerRequestOptions, RunningService, RxJsonRpcMessage, ServiceError, TxJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess, Transport};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::content::result_to_outcome;
use super::notify::{from_mcp_level, to_mcp_level, PROGRESS_TOKEN_META_KEY};
use super::tools::WRAPPED_INPUT_META_KEY;
use crate::dispatch::ToolEventStream;
use crate::error::{ErrorCode, ToolError};
use crate::event::{LogLevel, ToolEvent};

/// Notifications for a token that is not registered yet are kept this many
/// at most (they can arrive before the call registers its token).
const EARLY_BUFFER: usize = 64;

/// Why an MCP client could not connect or answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpClientError {
    /// The server process could not be started.
    #[error("could not start the MCP server process: {0}")]
    Spawn(#[source] std::io::Error),
    /// The initialize handshake failed (wrong URL, wrong key, not an MCP
    /// server, …).
    #[error("could not connect to the MCP server: {0}")]
    Connect(String),
    /// A request failed at the protocol or transport level.
    #[error("MCP request failed: {0}")]
    Request(#[from] ServiceError),
}

/// Options of an HTTP connection.
#[derive(Clone, Debug, Default)]
pub struct McpHttpClientOptions {
    api_key: Option<String>,
}

impl McpHttpClientOptions {
    /// Default options: no API key.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `Authorization: Bearer <key>`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
}

type CallSender = mpsc::UnboundedSender<ToolEvent>;

#[derive(Default)]
struct Routes {
    calls: HashMap<ProgressToken, CallSender>,
    early: VecDeque<(ProgressToken, ToolEvent)>,
}

impl Routes {
    fn deliver(&mut self, token: ProgressToken, event: ToolEvent) {
        match self.calls.get(&token) {
            Some(sender) => {
                let _ = sender.send(event);
            }
            None => {
                if self.early.len() == EARLY_BUFFER {
                    self.early.pop_front();
                }
                self.early.push_back((token, event));
            }
        }
    }

    fn register(&mut self, token: ProgressToken, sender: CallSender) {
        let early = std::mem::take(&mut self.early);
        for (t, event) in early {
            if t == token {
                let _ = sender.send(event);
            } else {
                self.early.push_back((t, event));
            }
        }
        self.calls.insert(token, sender);
    }
}

/// The client handler (notifications are routed by the transport).
#[derive(Clone)]
struct ClientState {
    info: ClientConfig,
}

impl ClientHandler for ClientState {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}

impl Routes {
    /// Routes a progress or log notification to its call, in the order the
    /// transport received it (before the response that follows it).
    fn route(&mut self, notification: &ServerNotification) {
        match notification {
            ServerNotification::ProgressNotification(n) => {
                let params = &n.params;
                let percent = match params.total {
                    Some(total) if total > 0.0 => Some(params.progress / total * 100.0),
                    _ => None,
                };
                self.deliver(
                    params.progress_token.clone(),
                    ToolEvent::Progress {
                        percent,
                        message: params.message.clone(),
                    },
                );
            }
            ServerNotification::LoggingMessageNotification(n) => {
                let params = &n.params;
                // rmcp moves a notification's `_meta` into its extensions.
                let token = notification
                    .get_meta()
                    .0
                     .0
                    .get(PROGRESS_TOKEN_META_KEY)
                    .or_else(|| {
                        params
                            .meta
                            .as_ref()
                            .and_then(|meta| meta.0 .0.get(PROGRESS_TOKEN_META_KEY))
                    })
                    .and_then(|token| serde_json::from_value::<ProgressToken>(token.clone()).ok());
                let (message, meta) = match &params.data {
                    Value::String(message) => (message.clone(), None),
                    Value::Object(object) if object.contains_key("message") => {
                        let message = match object.get("message") {
                            Some(Value::String(message)) => message.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        (message, object.get("meta").cloned())
                    }
                    other => (other.to_string(), None),
                };
                match token {
                    Some(token) => self.deliver(
                        token,
                        ToolEvent::Log {
                            level: from_mcp_level(&params.level),
                            message,
                            meta,
                        },
                    ),
                    None => tracing::info!(
                        target: "gonk_tools::mcp::client",
                        logger = params.logger.as_deref().unwrap_or(""),
                        "{message}"
                    ),
                }
            }
            _ => {}
        }
    }
}

/// A client transport that routes progress and log notifications to their
/// calls as they are received, so a call sees them before its result.
struct RoutingTransport<T> {
    inner: T,
    routes: Arc<Mutex<Routes>>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for RoutingTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message {
            self.routes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .route(&notification.notification);
        }
        Some(message)
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
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
pub struct McpClient {
    service: RunningService<RoleClient, ClientState>,
    routes: Arc<Mutex<Routes>>,
    wrapped: Arc<Mutex<Option<HashMap<String, bool>>>>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.server_info().map(|i| i.name.clone()))
            .finish_non_exhaustive()
    }
}

fn client_state() -> ClientState {
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("gonk-tools", env!("CARGO_PKG_VERSION")),
    );
    ClientState { info }
}

/// A JSON-RPC error answering a call: a server refusal that names its
/// code in `data.code` (`BUSY`, `SHUTTING_DOWN`) keeps it; anything else
/// is `INTERNAL`.
fn refusal(name: &str, error: &rmcp::ErrorData) -> ToolError {
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

/// Cancels the call on the server when the stream is dropped early.
struct CallGuard {
    peer: Peer<RoleClient>,
    id: RequestId,
    token: ProgressToken,
    routes: Arc<Mutex<Routes>>,
    done: bool,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .calls
            .remove(&self.token);
        if self.done {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
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
    async fn connect<T, E, A>(transport: T) -> Result<Self, McpClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let state = client_state();
        let routes: Arc<Mutex<Routes>> = Arc::default();
        let transport = RoutingTransport {
            inner: transport.into_transport(),
            routes: Arc::clone(&routes),
        };
        let service = state
            .serve(transport)
            .await
            .map_err(|e| McpClientError::Connect(e.to_string()))?;
        Ok(McpClient {
            service,
            routes,
            wrapped: Arc::default(),
        })
    }

    /// Starts `command` (e.g. `notes mcp`) and connects to it over its
    /// stdin/stdout. Its stderr is inherited. The process is killed when
    /// the client is dropped.
    pub async fn connect_stdio(command: tokio::process::Command) -> Result<Self, McpClientError> {
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .map_err(McpClientError::Spawn)?;
        Self::connect(transport).await
    }

    /// Connects over a pair of byte streams (e.g. a `tokio::io::duplex`
    /// pipe to an in-process [`serve_io`](super::serve_io)).
    pub async fn connect_io<R, W>(read: R, write: W) -> Result<Self, McpClientError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        Self::connect((read, write)).await
    }

    /// Connects to a streamable-HTTP endpoint (`http://127.0.0.1:8080/mcp`).
    pub async fn connect_http(
        url: &str,
        options: McpHttpClientOptions,
    ) -> Result<Self, McpClientError> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(key) = options.api_key {
            config = config.auth_header(key);
        }
        let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
        Self::connect(transport).await
    }

    /// The server's `serverInfo` from the handshake.
    pub fn server_info(&self) -> Option<Implementation> {
        self.service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.clone())
    }

    /// The rmcp peer, for anything beyond tool calls.
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// The server's tools (`tools/list`, all pages).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpClientError> {
        let tools = self.service.peer().list_all_tools().await?;
        *self.wrapped.lock().unwrap_or_else(|p| p.into_inner()) = Some(wrapped_inputs(&tools));
        Ok(tools)
    }

    /// Sets the minimum level of the log notifications the server sends.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), McpClientError> {
        self.service
            .peer()
            .set_level(SetLevelRequestParams::new(to_mcp_level(level)))
            .await?;
        Ok(())
    }

    /// Calls `name` with `input` and streams its events: `progress` and
    /// `log` events as the server sends them, then one `result` or
    /// `error`. Dropping the stream cancels the call on the server.
    pub fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        let name = name.to_owned();
        let peer = self.service.peer().clone();
        let routes = Arc::clone(&self.routes);
        let client = self.clone_handle();
        Box::pin(async_stream::stream! {
            let arguments = if client.is_wrapped(&name).await {
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
            let params = CallToolRequestParams::new(name.clone()).with_arguments(arguments);
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            let mut handle = match peer.send_request_with_option(request, PeerRequestOptions::no_options()).await {
                Ok(handle) => handle,
                Err(error) => {
                    yield ToolEvent::error(transport_error(error));
                    return;
                }
            };
            let (sender, mut events) = mpsc::unbounded_channel();
            routes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .register(handle.progress_token.clone(), sender);
            let mut guard = CallGuard {
                peer: peer.clone(),
                id: handle.id.clone(),
                token: handle.progress_token.clone(),
                routes: Arc::clone(&routes),
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
            yield match response {
                Ok(Ok(ServerResult::CallToolResult(result))) => match result_to_outcome(result) {
                    Ok(output) => ToolEvent::Result { data: output.data, display: output.display },
                    Err(error) => ToolEvent::error(error),
                },
                Ok(Ok(other)) => ToolEvent::error(transport_error(format!("unexpected answer to tools/call: {other:?}"))),
                Ok(Err(ServiceError::McpError(error))) => ToolEvent::error(refusal(&name, &error)),
                Ok(Err(error)) => ToolEvent::error(transport_error(error)),
                Err(_) => ToolEvent::error(transport_error("the connection closed before the call finished")),
            };
        })
    }

    fn clone_handle(&self) -> McpClientHandle {
        McpClientHandle {
            peer: self.service.peer().clone(),
            wrapped: Arc::clone(&self.wrapped),
        }
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

/// The MCP client is a [`Transport`](crate::client::Transport): a generated
/// typed client (`toolset!`) calls tools on an MCP server through it.
impl crate::client::Transport for McpClient {
    fn invoke(&self, name: &str, input: Value) -> ToolEventStream {
        McpClient::invoke(self, name, input)
    }
}

/// Which tools take their input wrapped as `{value}`.
fn wrapped_inputs(tools: &[Tool]) -> HashMap<String, bool> {
    tools
        .iter()
        .map(|tool| {
            let wrapped = tool
                .meta
                .as_ref()
                .and_then(|m| m.0.get(WRAPPED_INPUT_META_KEY))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            (tool.name.to_string(), wrapped)
        })
        .collect()
}

/// What a call's stream needs of the client.
struct McpClientHandle {
    peer: Peer<RoleClient>,
    wrapped: Arc<Mutex<Option<HashMap<String, bool>>>>,
}

impl McpClientHandle {
    async fn is_wrapped(&self, name: &str) -> bool {
        let cached = |wrapped: &Mutex<Option<HashMap<String, bool>>>| {
            wrapped
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .and_then(|map| map.get(name).copied())
        };
        if let Some(wrapped) = cached(&self.wrapped) {
            return wrapped;
        }
        let Ok(tools) = self.peer.list_all_tools().await else {
            return false;
        };
        let map = wrapped_inputs(&tools);
        let answer = map.get(name).copied().unwrap_or(false);
        *self.wrapped.lock().unwrap_or_else(|p| p.into_inner()) = Some(map);
        answer
    }
}
