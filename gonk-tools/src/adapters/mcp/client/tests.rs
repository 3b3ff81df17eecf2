//! The client against servers of both eras, in process: ours (which speaks
//! `2026-07-28` and the 2025 revisions), and rmcp's own server narrowed to
//! the 2025 revisions or refusing `server/discover`, over a pipe and over
//! HTTP.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, DiscoverRequestMethod,
    DiscoverResult, InputRequest, InputRequiredResult, ListRootsRequest, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::json;

use super::{McpClient, McpEra, McpHttpClientOptions};
use crate::adapters::mcp::{serve_http, serve_io, McpHttpOptions, McpServerOptions};
use crate::definition::{ApprovalTier, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::event::{LogLevel, ToolEvent};
use crate::outcome::collect_tool_outcome;
use crate::registry::ToolRegistry;

/// rmcp's own server with a few tools, counting its listings.
#[derive(Clone)]
struct Fixture {
    versions: &'static [ProtocolVersion],
    refuses_discover: bool,
    ttl_ms: Option<u64>,
    listings: Arc<AtomicUsize>,
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

    /// Serves one connection over an in-process pipe; returns the client.
    async fn connect(&self) -> McpClient {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let fixture = self.clone();
        tokio::spawn(async move {
            if let Ok(running) = fixture.serve(server).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client);
        McpClient::connect_io(read, write).await.expect("connects")
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
        let tools = ["echo", "ask", "change"].map(|name| Tool::new(name, "A test tool.", object()));
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
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
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
    assert_eq!(client.list_tools().await.expect("lists").len(), 3);
    assert_eq!(client.list_tools().await.expect("lists").len(), 3);
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
