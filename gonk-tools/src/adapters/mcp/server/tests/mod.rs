//! Unit tests of the server handler's pieces, driven in process: rmcp's
//! request contexts made by hand, a peer on a closed transport (its client
//! speaks the version and declared the capabilities a test says), and,
//! where a test reads what a call sends, the answer stream the HTTP
//! transport hands a call.
#![allow(deprecated)] // rmcp marks logging and resource subscriptions deprecated; 2025-era clients use them.

mod call;
mod errors;
mod listing;
mod session;

use std::sync::Arc;

use http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, Implementation,
    InitializeRequestParams, NumberOrString, ProgressToken, ProtocolVersion, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{serve_directly, Peer, RequestContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::notify::AnswerStream;
use super::{McpServer, McpServerOptions, WriteToolPolicy};
use crate::adapters::mcp::http::security::RequestState;
use crate::prelude::*;
use crate::security::{
    policy_fn, AuthContext, AuthMethod, AuthenticatedPrincipal, AuthorizationAction,
    AuthorizationDecision, PrincipalIdentity, PrincipalKind,
};

/// The transport of a test peer: nothing comes in, every send fails.
struct Closed;

impl rmcp::transport::Transport<RoleServer> for Closed {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Err(std::io::Error::from(std::io::ErrorKind::NotConnected)))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A server over `registry` with these options, as HTTP makes it (write
/// tools withheld unless the options say otherwise).
fn server_with(registry: ToolRegistry, options: McpServerOptions) -> McpServer {
    McpServer::new(registry, options, WriteToolPolicy::RequireAllowlist)
}

fn server(registry: ToolRegistry) -> McpServer {
    server_with(registry, McpServerOptions::new("unit", "1.0.0"))
}

/// A peer whose client speaks `version` and declared `capabilities`.
fn peer(
    server: &McpServer,
    version: ProtocolVersion,
    capabilities: ClientCapabilities,
) -> Peer<RoleServer> {
    let info = InitializeRequestParams::new(capabilities, Implementation::default())
        .with_protocol_version(version);
    serve_directly(server.clone(), Closed, Some(info))
        .peer()
        .clone()
}

/// Request `id` on a 2025 session whose client declared nothing.
fn session_request(server: &McpServer, id: i64) -> RequestContext<RoleServer> {
    let peer = peer(
        server,
        ProtocolVersion::V_2025_11_25,
        ClientCapabilities::default(),
    );
    RequestContext::new(RequestId::Number(id), peer)
}

/// Request `id` of the stateless era: its own `_meta` names the version
/// and the client's `capabilities`.
fn stateless_request(
    server: &McpServer,
    id: i64,
    capabilities: ClientCapabilities,
) -> RequestContext<RoleServer> {
    let version = ProtocolVersion::V_2026_07_28;
    let peer = peer(server, version.clone(), ClientCapabilities::default());
    let mut context = RequestContext::new(RequestId::Number(id), peer);
    context.meta.set_protocol_version(version);
    context.meta.set_client_capabilities(capabilities);
    context
}

fn progress_token(token: &str) -> ProgressToken {
    ProgressToken(NumberOrString::String(token.into()))
}

/// What the HTTP security layer leaves on a request whose credentials the
/// authentication hook turned into `auth`.
fn with_auth(context: &mut RequestContext<RoleServer>, auth: AuthContext) {
    let (mut parts, ()) = http::Request::new(()).into_parts();
    parts.extensions.insert(RequestState {
        disconnected: CancellationToken::new(),
        auth: Some(auth),
    });
    context.extensions.insert::<Parts>(parts);
}

/// Lets the call run in its HTTP request: what it sends goes into the
/// returned receiver, as JSON.
fn answer_stream(context: &mut RequestContext<RoleServer>) -> mpsc::Receiver<ServerJsonRpcMessage> {
    let (sender, receiver) = mpsc::channel(64);
    context.extensions.insert(AnswerStream {
        sender,
        session: false,
    });
    receiver
}

/// Every message the call sent, as JSON.
fn sent(receiver: &mut mpsc::Receiver<ServerJsonRpcMessage>) -> Vec<Value> {
    std::iter::from_fn(|| receiver.try_recv().ok())
        .map(|message| serde_json::to_value(message).unwrap())
        .collect()
}

async fn call(
    server: &McpServer,
    name: &str,
    arguments: Value,
    context: RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(arguments) = arguments {
        params = params.with_arguments(arguments);
    }
    match server.call_tool(params, context).await? {
        CallToolResponse::Complete(result) => Ok(serde_json::to_value(result).unwrap()),
        other => panic!("expected a complete result, got {other:?}"),
    }
}

/// A call's text content, joined.
fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|item| item["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn principal(id: &str) -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        id,
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", id, AuthMethod::Oauth),
    )
}

/// Everyone may see and call everything but `admin.reset`, which only
/// `alice` may discover and invoke.
fn auth_for(id: &str) -> AuthContext {
    AuthContext::new(
        principal(id),
        policy_fn(|request| {
            let admin = request.resource.target.as_deref() == Some("admin.reset");
            let alice = request.principal.id == "alice";
            Ok(match request.action {
                AuthorizationAction::Discover | AuthorizationAction::Invoke if admin && !alice => {
                    AuthorizationDecision::deny("admins only")
                }
                _ => AuthorizationDecision::allow(),
            })
        }),
    )
}

/// A read tool that answers `ok`.
fn read_tool(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Reads.")
        .approval(ApprovalTier::Read)
        .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("ok") })
        .build()
}

fn registry_of(tools: impl IntoIterator<Item = ToolDefinition>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register_all(tools).unwrap();
    registry
}

/// The data of a successful call, from its text content (a tool's output
/// as JSON).
fn data(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    serde_json::from_str(&text(result)).unwrap()
}

/// Shared slot a tool's handler fills for the test to read.
type Seen<T> = Arc<std::sync::Mutex<Option<T>>>;
