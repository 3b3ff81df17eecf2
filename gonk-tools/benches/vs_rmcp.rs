//! gonk-tools side by side with rmcp's own tool server, in one run.
//!
//! ```sh
//! cargo bench -p gonk-tools --features mcp --bench vs_rmcp
//! ```
//!
//! The same `add(a, b)` tool, the same inputs, the same runtime:
//!
//! * `direct`: deserialize + call + serialize (the floor);
//! * `rmcp_router`: rmcp's `ToolRouter::call` (`#[tool_router]`);
//! * `rmcp_handler`: rmcp's `ServerHandler::call_tool` with the router kept
//!   in a field (`#[tool_handler]`, rmcp's fastest form), result to JSON;
//! * `gonk_invoke`: `registry.invoke` + `collect_tool_outcome`;
//! * `gonk_client`: the typed in-process client (`client::call::<Add>`);
//! * `gonk_handler`: our `ServerHandler::call_tool`, result to JSON;
//! * `list200_*`: `tools/list` of 200 tools both ways, as a
//!   `ListToolsResult` and serialized.
//!
//! After the run each of ours is printed as a ratio to rmcp's counterpart.
//! Both handlers get the same request context (a real peer from a served
//! connection, no progress token).

mod ratio;

use std::sync::Arc;

use criterion::{criterion_group, Criterion};
use gonk_tools::adapters::mcp::{McpServer, McpServerOptions, WriteToolPolicy};
use gonk_tools::client::InProcess;
use gonk_tools::prelude::*;
use ratio::mean_ns;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, ListToolsResult, NumberOrString, RequestId, ServerResult,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{tool, tool_handler, tool_router, RoleServer, ServerHandler};

/// The input of `add`, for both servers.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct AddInput {
    pub a: i64,
    pub b: i64,
}

/// Add two integers.
#[gonk_tools::tool(name = "add", approval = "read", type_name = Add)]
async fn gonk_add(input: AddInput) -> Result<i64, ToolError> {
    Ok(input.a + input.b)
}

/// rmcp's server, its router kept in a field.
#[derive(Clone)]
struct RmcpServer {
    tool_router: ToolRouter<RmcpServer>,
}

#[tool_router]
impl RmcpServer {
    fn new() -> Self {
        RmcpServer {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Add two integers.")]
    async fn add(&self, Parameters(AddInput { a, b }): Parameters<AddInput>) -> String {
        (a + b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpServer {}

const TOOLS: usize = 200;

/// rmcp's router with `add` and 199 more tools of the same shape.
fn rmcp_router_of_200() -> ToolRouter<RmcpServer> {
    let mut router = RmcpServer::tool_router();
    let template = router.get("add").cloned().expect("add is routed");
    for i in 1..TOOLS {
        let mut attr = template.clone();
        attr.name = format!("tool.{i}").into();
        router.add_route(ToolRoute::new_dyn(attr, |_ctx| {
            Box::pin(async { Ok(rmcp::model::CallToolResult::success(vec![]).into()) })
        }));
    }
    router
}

/// Our registry with `add` and 199 more tools of the same shape.
fn gonk_registry(tools: usize) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(Add::definition()).unwrap();
    for i in 1..tools {
        registry
            .register(
                ToolDefinition::builder(format!("tool.{i}"))
                    .description("Add two integers.")
                    .approval(ApprovalTier::Read)
                    .handler(
                        |input: AddInput, _| async move { Ok::<_, ToolError>(input.a + input.b) },
                    )
                    .build(),
            )
            .unwrap();
    }
    registry
}

fn request_context(peer: &Peer<RoleServer>) -> RequestContext<RoleServer> {
    RequestContext::new(RequestId::from(NumberOrString::Number(1)), peer.clone())
}

fn add_request(input: &serde_json::Value) -> CallToolRequestParams {
    CallToolRequestParams::new("add").with_arguments(input.as_object().unwrap().clone())
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // A real peer, from rmcp's server served over an in-memory pipe.
    let (server_io, _client_io) = tokio::io::duplex(64 * 1024);
    let running = runtime
        .block_on(async { rmcp::service::serve_directly(RmcpServer::new(), server_io, None) });
    let peer = running.peer().clone();

    let rmcp_server = RmcpServer::new();
    let router = RmcpServer::tool_router();
    let registry = gonk_registry(1);
    let client = InProcess::new(registry.clone());
    let ours = McpServer::new(
        registry.clone(),
        McpServerOptions::new("bench", "1.0.0"),
        WriteToolPolicy::Permissive,
    );
    let input = json!({"a": 2, "b": 3});

    let mut group = c.benchmark_group("vs_rmcp");
    group.bench_function("direct", |b| {
        b.to_async(&runtime).iter(|| async {
            let parsed: AddInput =
                serde_json::from_value(std::hint::black_box(input.clone())).unwrap();
            let out = gonk_add(parsed).await.unwrap();
            std::hint::black_box(serde_json::to_value(out).unwrap())
        })
    });
    group.bench_function("rmcp_router", |b| {
        b.to_async(&runtime).iter(|| async {
            let context =
                ToolCallContext::new(&rmcp_server, add_request(&input), request_context(&peer));
            std::hint::black_box(router.call(context).await.unwrap())
        })
    });
    group.bench_function("rmcp_handler", |b| {
        b.to_async(&runtime).iter(|| async {
            let result = rmcp_server
                .call_tool(add_request(&input), request_context(&peer))
                .await
                .unwrap();
            std::hint::black_box(serde_json::to_vec(&ServerResult::from(result)).unwrap())
        })
    });
    group.bench_function("gonk_invoke", |b| {
        b.to_async(&runtime).iter(|| async {
            let events = registry.invoke("add", input.clone(), ToolContext::new());
            std::hint::black_box(collect_tool_outcome(events, |_| {}).await.unwrap())
        })
    });
    group.bench_function("gonk_client", |b| {
        b.to_async(&runtime).iter(|| async {
            let sum = gonk_tools::client::call::<Add>(&client, AddInput { a: 2, b: 3 })
                .await
                .unwrap();
            std::hint::black_box(sum)
        })
    });
    group.bench_function("gonk_handler", |b| {
        b.to_async(&runtime).iter(|| async {
            let result = ours
                .call_tool(add_request(&input), request_context(&peer))
                .await
                .unwrap();
            std::hint::black_box(serde_json::to_vec(&ServerResult::from(result)).unwrap())
        })
    });

    let rmcp_200 = rmcp_router_of_200();
    let ours_200 = McpServer::new(
        gonk_registry(TOOLS),
        McpServerOptions::new("bench", "1.0.0"),
        WriteToolPolicy::Permissive,
    );
    assert_eq!(rmcp_200.list_all().len(), TOOLS);
    assert_eq!(ours_200.list().len(), TOOLS);
    let theirs = serde_json::to_vec(&ListToolsResult::with_all_items(rmcp_200.list_all())).unwrap();
    let mine = serde_json::to_vec(&ListToolsResult::with_all_items(ours_200.list())).unwrap();
    println!(
        "tools/list of {TOOLS} serialized: rmcp {} bytes, gonk-tools {} bytes",
        theirs.len(),
        mine.len()
    );
    println!(
        "  rmcp tool: {}",
        serde_json::to_string(&rmcp_200.list_all()[0]).unwrap()
    );
    println!(
        "  gonk tool: {}",
        serde_json::to_string(&ours_200.list()[0]).unwrap()
    );
    group.bench_function("list200_rmcp", |b| {
        b.iter(|| std::hint::black_box(ListToolsResult::with_all_items(rmcp_200.list_all())))
    });
    group.bench_function("list200_gonk", |b| {
        b.to_async(&runtime).iter(|| async {
            std::hint::black_box(
                ours_200
                    .list_tools(None, request_context(&peer))
                    .await
                    .unwrap(),
            )
        })
    });
    group.bench_function("list200_rmcp_json", |b| {
        b.iter(|| {
            let list = ListToolsResult::with_all_items(rmcp_200.list_all());
            std::hint::black_box(serde_json::to_vec(&list).unwrap())
        })
    });
    group.bench_function("list200_gonk_json", |b| {
        b.to_async(&runtime).iter(|| async {
            let list = ours_200
                .list_tools(None, request_context(&peer))
                .await
                .unwrap();
            std::hint::black_box(serde_json::to_vec(&list).unwrap())
        })
    });
    group.finish();
    drop(Arc::new(running));
}

criterion_group!(benches, bench);

fn main() {
    if !ratio::run(benches) {
        return;
    }
    let ns = |id: &str| mean_ns("vs_rmcp", id);
    println!("\ngonk-tools vs rmcp 3.11 (same run; < 1.00x: ours is faster):");
    for (ours, theirs, what) in [
        (
            "gonk_invoke",
            "rmcp_router",
            "registry.invoke vs ToolRouter::call",
        ),
        (
            "gonk_client",
            "rmcp_router",
            "typed client vs ToolRouter::call",
        ),
        (
            "gonk_handler",
            "rmcp_handler",
            "ServerHandler::call_tool -> JSON",
        ),
        (
            "list200_gonk",
            "list200_rmcp",
            "tools/list of 200 -> ListToolsResult",
        ),
        (
            "list200_gonk_json",
            "list200_rmcp_json",
            "tools/list of 200 -> JSON",
        ),
    ] {
        if let (Some(a), Some(b)) = (ns(ours), ns(theirs)) {
            println!(
                "  {what:<40} {:>9.0} ns vs {:>9.0} ns  {:>5.2}x",
                a,
                b,
                a / b
            );
        }
    }
    if let (Some(direct), Some(invoke), Some(router)) =
        (ns("direct"), ns("gonk_invoke"), ns("rmcp_router"))
    {
        println!(
            "  direct call {direct:.0} ns: invoke {:.2}x, ToolRouter::call {:.2}x of it",
            invoke / direct,
            router / direct
        );
    }
}
