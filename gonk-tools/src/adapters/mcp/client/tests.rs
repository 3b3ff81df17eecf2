//! The client against servers of both eras, in process: ours (which speaks
//! `2026-07-28` and the 2025 revisions), and rmcp's own server narrowed to
//! the 2025 revisions or refusing `server/discover`, over a pipe and over
//! HTTP. With hooks, the client answers the server's questions: an
//! `input_required` result (2026) and requests on the session (2025).
#![allow(deprecated)] // rmcp marks sampling and roots (SEP-2577) deprecated; the 2025 fixture asks them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, DiscoverRequestMethod,
    DiscoverResult, InputRequest, InputRequiredResult, ListRootsRequest, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, ServiceError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{McpClient, McpClientBuilder, McpEra, McpHttpClientOptions};
use crate::adapters::mcp::{serve_http, serve_io, McpHttpOptions, McpServerOptions};
use crate::ask::{Elicited, Root, SamplingMessage, SamplingRequest};
use crate::definition::{ApprovalTier, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::event::collect_tool_outcome;
use crate::event::{LogLevel, ToolEvent};
use crate::registry::ToolRegistry;

/// rmcp's own server with a few tools, counting its listings.
#[derive(Clone)]
struct Fixture {
    versions: &'static [ProtocolVersion],
    refuses_discover: bool,
    ttl_ms: Option<u64>,
    listings: Arc<AtomicUsize>,
    /// Every `tools/call` of the asking tools: what it carried besides the
    /// name and arguments, and the capabilities the client declared for it.
    calls: Arc<Mutex<Vec<Value>>>,
}

impl Fixture {
    /// A server of the 2025 revisions that knows `server/discover` (and
    /// answers it with its handshake versions).
    fn of_2025() -> Fixture {
        Fixture {
            versions: ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25),
            refuses_discover: false,
            ttl_ms: None,
            listings: Arc::default(),
            calls: Arc::default(),
        }
    }

    /// A server of `2026-07-28` only, whose listing is fresh for `ttl_ms`.
    fn of_2026(ttl_ms: u64) -> Fixture {
        Fixture {
            versions: &ProtocolVersion::KNOWN_VERSIONS[4..],
            ttl_ms: Some(ttl_ms),
            ..Fixture::of_2025()
        }
    }

    fn listings(&self) -> usize {
        self.listings.load(Ordering::SeqCst)
    }

    fn calls(&self) -> Vec<Value> {
        self.calls.lock().expect("not poisoned").clone()
    }

    /// Records what a call of an asking tool carried.
    fn record(&self, request: &CallToolRequestParams, context: &RequestContext<RoleServer>) {
        let declared = context
            .client_capabilities()
            .and_then(|declared| serde_json::to_value(declared).ok());
        self.calls.lock().expect("not poisoned").push(json!({
            "inputResponses": request.input_responses,
            "requestState": request.request_state,
            "declared": declared,
        }));
    }

    /// Serves one connection over an in-process pipe; returns the client.
    async fn connect(&self) -> McpClient {
        self.connect_with(McpClient::builder()).await
    }

    /// Serves one connection over an in-process pipe; returns the client
    /// `builder` makes.
    async fn connect_with(&self, builder: McpClientBuilder) -> McpClient {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let fixture = self.clone();
        tokio::spawn(async move {
            if let Ok(running) = fixture.serve(server).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        builder.connect_io(read, write).await.expect("connects")
    }
}

/// The tools the fixture lists.
const FIXTURE_TOOLS: [&str; 7] = [
    "echo",
    "ask",
    "change",
    "confirm",
    "survey",
    "nag",
    "ask_session",
];

/// An input request from its wire JSON.
fn input_request(request: Value) -> InputRequest {
    serde_json::from_value(request).expect("an input request")
}

fn elicitation(message: &str) -> InputRequest {
    input_request(json!({"method": "elicitation/create", "params": {
        "message": message,
        "requestedSchema": {"type": "object", "properties": {
            "approve": {"type": "boolean"},
            "reason": {"type": "string", "default": "the default reason"},
        }},
    }}))
}

fn asking(requests: Vec<(&str, InputRequest)>, state: Option<&str>) -> CallToolResponse {
    let requests = requests
        .into_iter()
        .map(|(key, request)| (key.to_owned(), request))
        .collect();
    CallToolResponse::InputRequired(InputRequiredResult::new(
        Some(requests),
        state.map(str::to_owned),
    ))
}

/// What a session request came back with: its result, or its JSON-RPC
/// error code.
fn outcome<T: serde::Serialize>(result: Result<T, ServiceError>) -> Value {
    match result {
        Ok(result) => serde_json::to_value(result).unwrap_or(Value::Null),
        Err(ServiceError::McpError(error)) => json!({"error": error.code.0}),
        Err(other) => json!({"error": other.to_string()}),
    }
}

impl Fixture {
    /// The asking tools: `confirm` asks one elicitation with state;
    /// `survey` asks sampling and roots, then (the first answers sealed in
    /// its state) an elicitation; `nag` never stops asking; `ask_session`
    /// asks all three on a 2025 session.
    async fn call_asking(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.record(&request, &context);
        let responses = request.input_responses.clone();
        let state = request.request_state.clone();
        let done = |data: Value| Ok(CallToolResult::structured(data).into());
        match (&*request.name, responses, state.as_deref()) {
            ("confirm", None, _) => Ok(asking(
                vec![("approval", elicitation("Go ahead?"))],
                Some("state \"1\" {opaque}"),
            )),
            ("confirm", Some(responses), state) => {
                done(json!({"answers": responses, "state": state}))
            }
            ("survey", None, _) => Ok(asking(
                vec![
                    (
                        "capital",
                        input_request(json!({"method": "sampling/createMessage", "params": {
                            "messages": [{"role": "user", "content": {"type": "text", "text": "capital of France?"}}],
                            "maxTokens": 10,
                        }})),
                    ),
                    (
                        "where",
                        input_request(json!({"method": "roots/list", "params": {}})),
                    ),
                ],
                None,
            )),
            ("survey", Some(first), None) => {
                let sealed = serde_json::to_string(&first).unwrap_or_default();
                Ok(asking(vec![("ok", elicitation("Happy?"))], Some(&sealed)))
            }
            ("survey", Some(second), Some(sealed)) => {
                let first: Value = serde_json::from_str(sealed).unwrap_or_default();
                done(json!({"first": first, "second": second}))
            }
            ("nag", _, _) => Ok(asking(
                vec![("again", input_request(json!({"method": "roots/list"})))],
                Some("more"),
            )),
            ("ask_session", _, _) => {
                let peer = &context.peer;
                let form = serde_json::from_value(json!({
                    "message": "Name?",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "age": {"type": "integer", "default": 30},
                    }},
                }))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let sample = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                    "maxTokens": 10,
                }))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let declared = peer
                    .peer_info()
                    .and_then(|info| serde_json::to_value(&info.capabilities).ok());
                done(json!({
                    "declared": declared,
                    "elicited": outcome(peer.create_elicitation(form).await),
                    "sampled": outcome(peer.create_message(sample).await),
                    "roots": outcome(peer.list_roots().await),
                }))
            }
            (other, _, _) => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(self.versions)
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        if self.refuses_discover {
            return Err(ErrorData::method_not_found::<DiscoverRequestMethod>());
        }
        Ok(DiscoverResult::from_server_info(
            self.versions.to_vec(),
            self.get_info(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.listings.fetch_add(1, Ordering::SeqCst);
        let object = || {
            json!({"type": "object"})
                .as_object()
                .cloned()
                .unwrap_or_default()
        };
        let tools = FIXTURE_TOOLS.map(|name| Tool::new(name, "A test tool.", object()));
        let mut result = ListToolsResult::with_all_items(tools.to_vec());
        if let Some(ttl) = self.ttl_ms {
            result = result
                .with_ttl_ms(ttl)
                .with_cache_scope(CacheScope::Private);
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match &*request.name {
            "echo" => {
                Ok(CallToolResult::structured(request.arguments.unwrap_or_default().into()).into())
            }
            "ask" => {
                let roots = InputRequest::ListRoots(ListRootsRequest {
                    method: Default::default(),
                    extensions: Default::default(),
                });
                Ok(CallToolResponse::InputRequired(
                    InputRequiredResult::from_input_requests(BTreeMap::from([(
                        "roots".to_owned(),
                        roots,
                    )])),
                ))
            }
            "change" => {
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(CallToolResult::structured(json!({"changed": true})).into())
            }
            _ => self.call_asking(request, context).await,
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Say {
    text: String,
}

/// Our registry with one tool that logs at debug and info, then answers.
fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("say")
                .description("Log, then say the text.")
                .approval(ApprovalTier::Read)
                .handler(|input: Say, ctx| async move {
                    ctx.log().debug("about to say");
                    ctx.log().info("saying");
                    Ok::<_, ToolError>(input.text)
                })
                .build(),
        )
        .expect("registers");
    registry
}

async fn our_server_over_a_pipe() -> McpClient {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    tokio::spawn(serve_io(
        registry(),
        McpServerOptions::new("ours", "1.0.0"),
        server_read,
        server_write,
    ));
    let (read, write) = tokio::io::split(client);
    McpClient::connect_io(read, write).await.expect("connects")
}

fn log_lines(events: &[ToolEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|event| match event {
            ToolEvent::Log { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_is_spoken_to_in_2026_and_log_levels_travel_per_request() {
    let client = our_server_over_a_pipe().await;
    assert_eq!(client.era(), McpEra::Stateless);
    assert_eq!(client.protocol_version(), &ProtocolVersion::V_2026_07_28);
    assert_eq!(client.server_info().expect("server info").name, "ours");

    // Unasked, a call asks for `info`, the level a 2025 session starts at.
    let events: Vec<ToolEvent> = client.invoke("say", json!({"text": "hi"})).collect().await;
    assert_eq!(log_lines(&events), ["saying"]);
    assert!(matches!(events.last(), Some(ToolEvent::Result { data, .. }) if data == "hi"));

    client.set_log_level(LogLevel::Debug).await.expect("set");
    let events: Vec<ToolEvent> = client.invoke("say", json!({"text": "hi"})).collect().await;
    assert_eq!(log_lines(&events), ["about to say", "saying"]);

    client.set_log_level(LogLevel::Warn).await.expect("set");
    let events: Vec<ToolEvent> = client.invoke("say", json!({"text": "hi"})).collect().await;
    assert_eq!(log_lines(&events), Vec::<&str>::new());

    let error = collect_tool_outcome(client.invoke("say", json!({})), |_| {})
        .await
        .expect_err("text is required");
    assert_eq!(error.code, ErrorCode::InvalidInput);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_server_that_knows_discover_gets_initialize() {
    let fixture = Fixture::of_2025();
    let client = fixture.connect().await;
    assert_eq!(client.era(), McpEra::Session);
    assert_eq!(client.protocol_version(), &ProtocolVersion::V_2025_11_25);
    let output = collect_tool_outcome(client.invoke("echo", json!({"a": 1})), |_| {})
        .await
        .expect("echo");
    assert_eq!(output.data, json!({"a": 1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_know_discover_gets_initialize() {
    // What a server older than `server/discover` answers it with. (rmcp
    // checks the requested version first, so the fixture lists 2026 to
    // reach its handler.)
    let fixture = Fixture {
        versions: ProtocolVersion::KNOWN_VERSIONS,
        refuses_discover: true,
        ..Fixture::of_2025()
    };
    let client = fixture.connect().await;
    assert_eq!(client.era(), McpEra::Session);
    assert_eq!(client.protocol_version(), &ProtocolVersion::V_2025_11_25);
    let output = collect_tool_outcome(client.invoke("echo", json!({})), |_| {})
        .await
        .expect("echo");
    assert_eq!(output.data, json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_our_server_gets_2026_and_a_2025_server_initialize() {
    let ours = serve_http(
        "127.0.0.1:0".parse().expect("an address"),
        registry(),
        McpHttpOptions::new(McpServerOptions::new("ours", "1.0.0")),
    )
    .await
    .expect("serves");
    let client = McpClient::connect_http(&ours.url(), McpHttpClientOptions::new())
        .await
        .expect("connects");
    assert_eq!(client.era(), McpEra::Stateless);
    let output = collect_tool_outcome(client.invoke("say", json!({"text": "over http"})), |_| {})
        .await
        .expect("say");
    assert_eq!(output.data, "over http");

    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let fixture = Fixture::of_2025();
    let prototype = fixture.clone();
    let service = StreamableHttpService::new(
        move || Ok(prototype.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let app = axum::Router::new().nest_service("/mcp", service);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = McpClient::connect_http(&url, McpHttpClientOptions::new())
        .await
        .expect("connects");
    assert_eq!(client.era(), McpEra::Session);
    assert_eq!(client.protocol_version(), &ProtocolVersion::V_2025_11_25);
    let output = collect_tool_outcome(client.invoke("echo", json!({"b": 2})), |_| {})
        .await
        .expect("echo");
    assert_eq!(output.data, json!({"b": 2}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_is_not_asked_again_within_its_ttl() {
    let fixture = Fixture::of_2026(60_000);
    let client = fixture.connect().await;
    assert_eq!(client.era(), McpEra::Stateless);
    assert_eq!(
        client.list_tools().await.expect("lists").len(),
        FIXTURE_TOOLS.len()
    );
    assert_eq!(
        client.list_tools().await.expect("lists").len(),
        FIXTURE_TOOLS.len()
    );
    collect_tool_outcome(client.invoke("echo", json!({})), |_| {})
        .await
        .expect("echo");
    assert_eq!(fixture.listings(), 1);

    // A listing that is stale at once is asked for every time.
    let fixture = Fixture::of_2026(0);
    let client = fixture.connect().await;
    client.list_tools().await.expect("lists");
    client.list_tools().await.expect("lists");
    assert_eq!(fixture.listings(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_lists_once_then_again_after_a_change() {
    let fixture = Fixture::of_2025();
    let client = fixture.connect().await;
    for _ in 0..3 {
        collect_tool_outcome(client.invoke("echo", json!({})), |_| {})
            .await
            .expect("echo");
    }
    assert_eq!(fixture.listings(), 1);
    collect_tool_outcome(client.invoke("change", json!({})), |_| {})
        .await
        .expect("change");
    collect_tool_outcome(client.invoke("echo", json!({})), |_| {})
        .await
        .expect("echo");
    assert_eq!(fixture.listings(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_required_result_is_input_unavailable() {
    let fixture = Fixture::of_2026(0);
    let client = fixture.connect().await;
    let error = collect_tool_outcome(client.invoke("ask", json!({})), |_| {})
        .await
        .expect_err("this client answers no input requests");
    assert_eq!(error.code, ErrorCode::InputUnavailable);
    assert_eq!(
        error.details,
        Some(json!({"inputRequests": ["roots/list"]}))
    );
}

/// A client whose hooks answer every kind of question.
fn answering() -> McpClientBuilder {
    McpClient::builder()
        .on_elicitation(|request| async move {
            match request.message.as_str() {
                "Happy?" => Elicited::Declined,
                _ => Elicited::Accepted(json!({"approve": true})),
            }
        })
        .on_sampling(|request: SamplingRequest| async move {
            let asked = request.messages[0].as_text().unwrap_or_default().to_owned();
            let mut reply = SamplingMessage::text("assistant", format!("sampled: {asked}"));
            reply.model = Some("test-model".to_owned());
            reply
        })
        .on_roots(|| async {
            vec![Root {
                uri: "file:///work".to_owned(),
                name: Some("work".to_owned()),
            }]
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_2026_the_hooks_answer_and_the_retry_echoes_the_request_state() {
    let fixture = Fixture::of_2026(0);
    let client = fixture
        .connect_with(McpClient::builder().on_elicitation(|request| async move {
            assert_eq!(request.message, "Go ahead?");
            assert_eq!(request.defaults().len(), 1);
            Elicited::Accepted(json!({"approve": true}))
        }))
        .await;
    let output = collect_tool_outcome(client.invoke("confirm", json!({})), |_| {})
        .await
        .expect("confirmed");
    // Keyed as the server keyed it; the field left out sent at its default.
    assert_eq!(
        output.data,
        json!({
            "answers": {"approval": {"action": "accept", "content": {
                "approve": true, "reason": "the default reason",
            }}},
            "state": "state \"1\" {opaque}",
        })
    );
    let calls = fixture.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["inputResponses"], Value::Null);
    assert_eq!(calls[0]["requestState"], Value::Null);
    assert_eq!(calls[1]["requestState"], "state \"1\" {opaque}");
    // Every request declares the one capability the client has a hook for.
    for call in &calls {
        assert_eq!(call["declared"], json!({"elicitation": {"form": {}}}));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_2026_several_questions_over_several_rounds() {
    let fixture = Fixture::of_2026(0);
    let client = fixture.connect_with(answering()).await;
    let output = collect_tool_outcome(client.invoke("survey", json!({})), |_| {})
        .await
        .expect("surveyed");
    assert_eq!(
        output.data,
        json!({
            "first": {
                "capital": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "sampled: capital of France?"},
                    "model": "test-model",
                },
                "where": {"roots": [{"uri": "file:///work", "name": "work"}]},
            },
            "second": {"ok": {"action": "decline"}},
        })
    );
    let calls = fixture.calls();
    assert_eq!(calls.len(), 3);
    // The round without a requestState is retried without one.
    assert_eq!(calls[1]["requestState"], Value::Null);
    assert_eq!(
        calls[0]["declared"],
        json!({"elicitation": {"form": {}}, "roots": {}, "sampling": {}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_2026_a_server_that_keeps_asking_is_given_up_on_after_the_bound() {
    let fixture = Fixture::of_2026(0);
    let client = fixture.connect_with(answering().max_input_rounds(3)).await;
    let error = collect_tool_outcome(client.invoke("nag", json!({})), |_| {})
        .await
        .expect_err("it never completes");
    assert_eq!(error.code, ErrorCode::Internal);
    assert!(
        error.message.contains("after 3 rounds"),
        "{}",
        error.message
    );
    assert_eq!(fixture.calls().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_2026_a_question_without_a_hook_is_input_unavailable_and_not_retried() {
    let fixture = Fixture::of_2026(0);
    // Elicitation and roots are answered, sampling is not.
    let client = fixture
        .connect_with(
            McpClient::builder()
                .on_elicitation(|_| async { Elicited::Accepted(json!({})) })
                .on_roots(|| async { Vec::new() }),
        )
        .await;
    let error = collect_tool_outcome(client.invoke("survey", json!({})), |_| {})
        .await
        .expect_err("sampling has no hook");
    assert_eq!(error.code, ErrorCode::InputUnavailable);
    assert_eq!(
        error.details,
        Some(json!({"inputRequests": ["sampling/createMessage"]}))
    );
    assert_eq!(fixture.calls().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_2025_session_the_same_hooks_answer_the_servers_requests() {
    let fixture = Fixture::of_2025();
    let client = fixture.connect_with(answering()).await;
    assert_eq!(client.era(), McpEra::Session);
    let output = collect_tool_outcome(client.invoke("ask_session", json!({})), |_| {})
        .await
        .expect("asked");
    assert_eq!(
        output.data,
        json!({
            "declared": {"elicitation": {"form": {}}, "roots": {}, "sampling": {}},
            "elicited": {"action": "accept", "content": {"approve": true, "age": 30}},
            "sampled": {
                "role": "assistant",
                "content": {"type": "text", "text": "sampled: hi"},
                "model": "test-model",
            },
            "roots": {"roots": [{"uri": "file:///work", "name": "work"}]},
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_2025_session_without_hooks_the_client_declines_at_once() {
    let fixture = Fixture::of_2025();
    let client = fixture.connect().await;
    let output = collect_tool_outcome(client.invoke("ask_session", json!({})), |_| {})
        .await
        .expect("asked");
    let method_not_found = rmcp::model::ErrorCode::METHOD_NOT_FOUND.0;
    assert_eq!(
        output.data,
        json!({
            "declared": {},
            "elicited": {"action": "decline"},
            "sampled": {"error": method_not_found},
            "roots": {"error": method_not_found},
        })
    );
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Go ahead?
    approve: bool,
}

/// Our registry with one tool that asks all three kinds of question, one
/// after another (each a round in `2026-07-28`).
fn asking_registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("survey")
                .description("Ask for roots, a sample and a confirmation.")
                .approval(ApprovalTier::Read)
                .handler(|_: serde_json::Map<String, Value>, ctx| async move {
                    let roots = ctx.roots().await?;
                    let sampled = ctx
                        .sample(SamplingRequest::user_text("capital of France?", 10))
                        .await?;
                    let confirmed = ctx.elicit::<Confirm>("Go ahead?").await?;
                    Ok::<_, ToolError>(json!({
                        "roots": roots.iter().map(|root| root.uri.clone()).collect::<Vec<_>>(),
                        "sampled": sampled.as_text(),
                        "approved": matches!(confirmed, Elicited::Accepted(Confirm { approve: true })),
                    }))
                })
                .build(),
        )
        .expect("registers");
    registry
}

async fn our_asking_server(builder: McpClientBuilder) -> McpClient {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    tokio::spawn(serve_io(
        asking_registry(),
        McpServerOptions::new("ours", "1.0.0"),
        server_read,
        server_write,
    ));
    let (read, write) = tokio::io::split(client);
    builder.connect_io(read, write).await.expect("connects")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_asks_and_the_hooks_answer_round_after_round() {
    let client = our_asking_server(answering()).await;
    assert_eq!(client.era(), McpEra::Stateless);
    let output = collect_tool_outcome(client.invoke("survey", json!({})), |_| {})
        .await
        .expect("answered");
    assert_eq!(
        output.data,
        json!({
            "roots": ["file:///work"],
            "sampled": "sampled: capital of France?",
            "approved": true,
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_asking_a_client_without_hooks_is_input_unavailable() {
    let client = our_asking_server(McpClient::builder()).await;
    let error = collect_tool_outcome(client.invoke("survey", json!({})), |_| {})
        .await
        .expect_err("nothing can answer");
    assert_eq!(error.code, ErrorCode::InputUnavailable, "{error:?}");
}
