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
//! * `list200_*`: `ServerHandler::list_tools` of 200 tools both ways, as a
//!   `ListToolsResult` and serialized;
//! * `*_read`, `*_prompt`: `resources/read` of a URI template and
//!   `prompts/get` with an argument, against rmcp's hand-written read and
//!   `#[prompt_router]` (`benches/primitives/`).
//!
//! The stateless era (MCP `2026-07-28`) has no session: every request
//! carries its protocol version and client capabilities in `_meta`, so
//! each call pays for reading them. Its rows, side by side with rmcp's
//! server serving `2026-07-28` too:
//!
//! * `*_handler_2026`, `list200_*_2026[_json]`: the handler rows again with
//!   a request context whose `_meta` carries the 2026 keys (what rmcp's
//!   serve loop hands a handler);
//! * `*_line_2025`, `*_line_2026`: a `tools/call` JSON-RPC line to its
//!   response line in process — rmcp's message parse (`_meta` included),
//!   `Service::handle_request` (which validates a 2026 request's `_meta`
//!   and adds its cache hints) and the response's serialization, without a
//!   transport. Both servers get rmcp's parse here; our stdio transport
//!   reads a line through its JSON-RPC layer first, which `stdio_vs_rmcp`
//!   measures.
//!
//! After the run each of ours is printed as a ratio to rmcp's counterpart,
//! and each 2026 row as a ratio to its 2025 row. Both handlers get the same
//! request context (a real peer from a served connection, no progress
//! token), made outside the timing.

mod primitives;
mod ratio;

use std::borrow::Cow;
use std::sync::Arc;

use criterion::{criterion_group, BatchSize, Criterion};
use gonk_tools::adapters::mcp::{McpServer, McpServerOptions, WriteToolPolicy};
use gonk_tools::client::InProcess;
use gonk_tools::prelude::*;
use ratio::mean_ns;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientJsonRpcMessage, GetExtensions, GetMeta,
    Implementation, ListToolsResult, NumberOrString, ProtocolVersion, RequestId, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{Peer, RequestContext, Service};
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
impl ServerHandler for RmcpServer {
    // rmcp's default already lists every known version; named here so that
    // both servers visibly serve the same eras, up to `2026-07-28`.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }
}

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

/// The context of one request: a 2025 session's (no `_meta`), or with
/// `meta` as the request's own `_meta` (a clone of [`meta_2026`]), moved in
/// as rmcp's serve loop does.
fn request_context(
    peer: &Peer<RoleServer>,
    meta: Option<&RequestMetaObject>,
) -> RequestContext<RoleServer> {
    let mut context = RequestContext::new(RequestId::from(NumberOrString::Number(1)), peer.clone());
    if let Some(meta) = meta {
        context.meta = meta.clone();
    }
    context
}

/// What a `2026-07-28` client puts in every request's `_meta`: the two
/// keys the protocol requires, and the client's name as our client and
/// rmcp's send it. No `logLevel`: the client asked for no logs.
fn meta_2026() -> RequestMetaObject {
    RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        Implementation::new("driver", "1"),
        ClientCapabilities::default(),
    )
}

/// `tools/call` of `add(2, 3)` as a JSON-RPC line, without `_meta` (a 2025
/// session's request) or with the 2026 keys.
fn call_line(meta: Option<&RequestMetaObject>) -> Vec<u8> {
    let mut params = json!({"name": "add", "arguments": {"a": 2, "b": 3}});
    if let Some(meta) = meta {
        params["_meta"] = serde_json::to_value(meta).unwrap();
    }
    serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
    )
    .unwrap()
}

#[derive(Deserialize, JsonSchema)]
struct Proceed {
    /// Go on?
    proceed: bool,
}

/// Asks the caller before it answers.
#[gonk_tools::tool(approval = "read")]
async fn confirm(ctx: &ToolContext) -> Result<bool, ToolError> {
    let answer = ctx.elicit::<Proceed>("Go on?").await?;
    Ok(matches!(
        answer,
        gonk_tools::ask::Elicited::Accepted(Proceed { proceed: true })
    ))
}

/// `tools/call` of `confirm` in 2026; with `state`, the retry that answers
/// its question.
fn confirm_line(meta: &RequestMetaObject, state: Option<serde_json::Value>) -> Vec<u8> {
    let mut params = json!({"name": "confirm", "arguments": {}, "_meta": meta});
    if let Some(state) = state {
        params["requestState"] = state;
        params["inputResponses"] =
            json!({"elicitation-1": {"action": "accept", "content": {"proceed": true}}});
    }
    serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
    )
    .unwrap()
}

/// One request line answered in process as rmcp's serve loop does it: the
/// message parsed, its `_meta` and extensions moved into the context,
/// `Service::handle_request`, the response serialized.
async fn answer_line(
    server: &impl Service<RoleServer>,
    peer: &Peer<RoleServer>,
    line: &[u8],
) -> Vec<u8> {
    let message: ClientJsonRpcMessage = serde_json::from_slice(line).unwrap();
    let (mut request, id) = message.into_request().expect("a request line");
    let mut context = RequestContext::new(id.clone(), peer.clone());
    context.meta = std::mem::take(request.get_meta_mut());
    context.extensions = std::mem::take(request.extensions_mut());
    let response = match server.handle_request(request, context).await {
        Ok(result) => ServerJsonRpcMessage::response(result, id),
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    };
    serde_json::to_vec(&response).unwrap()
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
            let context = ToolCallContext::new(
                &rmcp_server,
                add_request(&input),
                request_context(&peer, None),
            );
            std::hint::black_box(router.call(context).await.unwrap())
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

    // The handler rows get their request context from outside the timing:
    // a 2026 one holds a clone of the client's `_meta`, made by the harness
    // where rmcp's serve loop would move the parsed one in (the `*_line_*`
    // rows time that parse). Dropping it is the server's, and timed.
    let meta = meta_2026();
    for (era, meta) in [("", None), ("_2026", Some(&meta))] {
        group.bench_function(format!("rmcp_handler{era}"), |b| {
            b.to_async(&runtime).iter_batched(
                || request_context(&peer, meta),
                |context| async {
                    let result = rmcp_server
                        .call_tool(add_request(&input), context)
                        .await
                        .unwrap();
                    std::hint::black_box(serde_json::to_vec(&ServerResult::from(result)).unwrap())
                },
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("gonk_handler{era}"), |b| {
            b.to_async(&runtime).iter_batched(
                || request_context(&peer, meta),
                |context| async {
                    let result = ours.call_tool(add_request(&input), context).await.unwrap();
                    std::hint::black_box(serde_json::to_vec(&ServerResult::from(result)).unwrap())
                },
                BatchSize::SmallInput,
            )
        });
    }

    // Line to line: both servers answer the same bytes with the same sum.
    let lines = [("2025", call_line(None)), ("2026", call_line(Some(&meta)))];
    for (era, line) in &lines {
        let theirs = runtime.block_on(answer_line(&rmcp_server, &peer, line));
        let mine = runtime.block_on(answer_line(&ours, &peer, line));
        for answer in [&theirs, &mine] {
            let answer = String::from_utf8_lossy(answer);
            assert!(
                answer.contains(r#""text":"5""#),
                "{era} tools/call: {answer}"
            );
            // rmcp's dispatch marks a 2026 result complete and strips the
            // mark for a 2025 peer: each line was served in its own era.
            let complete = answer.contains(r#""resultType":"complete""#);
            assert_eq!(complete, *era == "2026", "{era} tools/call: {answer}");
        }
    }
    for (era, line) in &lines {
        group.bench_function(format!("rmcp_line_{era}"), |b| {
            b.to_async(&runtime).iter(|| async {
                std::hint::black_box(answer_line(&rmcp_server, &peer, line).await)
            })
        });
        group.bench_function(format!("gonk_line_{era}"), |b| {
            b.to_async(&runtime)
                .iter(|| async { std::hint::black_box(answer_line(&ours, &peer, line).await) })
        });
    }

    // One question asked and answered, line to line, in 2026: the call
    // answers `input_required` with a sealed state, the client's retry
    // brings the answer and gets the result. Against one plain call.
    let asking = McpServer::new(
        {
            let registry = ToolRegistry::new();
            registry.register(Confirm::definition()).unwrap();
            registry
        },
        McpServerOptions::new("bench", "1.0.0"),
        WriteToolPolicy::Permissive,
    );
    let eliciting = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        Implementation::new("driver", "1"),
        serde_json::from_value(json!({ "elicitation": {} })).unwrap(),
    );
    let ask_line = confirm_line(&eliciting, None);
    let round_trip = |first: Vec<u8>| {
        let question: serde_json::Value = serde_json::from_slice(&first).unwrap();
        let state = question["result"]["requestState"].clone();
        confirm_line(&eliciting, Some(state))
    };
    let done = runtime.block_on(async {
        let first = answer_line(&asking, &peer, &ask_line).await;
        answer_line(&asking, &peer, &round_trip(first)).await
    });
    assert!(
        String::from_utf8_lossy(&done).contains(r#""text":"true""#),
        "ask round trip: {}",
        String::from_utf8_lossy(&done)
    );
    group.bench_function("gonk_ask_round_trip_2026", |b| {
        b.to_async(&runtime).iter(|| async {
            let first = answer_line(&asking, &peer, &ask_line).await;
            std::hint::black_box(answer_line(&asking, &peer, &round_trip(first)).await)
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
    // rmcp's 200 tools behind its own handler, as ours: its `list_tools`
    // reads the request's protocol version to add the 2026 cache hints.
    let rmcp_server_200 = RmcpServer {
        tool_router: rmcp_200,
    };
    for (era, meta) in [("", None), ("_2026", Some(&meta))] {
        group.bench_function(format!("list200_rmcp{era}"), |b| {
            b.to_async(&runtime).iter_batched(
                || request_context(&peer, meta),
                |context| async {
                    std::hint::black_box(rmcp_server_200.list_tools(None, context).await.unwrap())
                },
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("list200_rmcp{era}_json"), |b| {
            b.to_async(&runtime).iter_batched(
                || request_context(&peer, meta),
                |context| async {
                    let list = rmcp_server_200.list_tools(None, context).await.unwrap();
                    std::hint::black_box(serde_json::to_vec(&list).unwrap())
                },
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("list200_gonk{era}"), |b| {
            b.to_async(&runtime).iter_batched(
                || request_context(&peer, meta),
                |context| async {
                    std::hint::black_box(ours_200.list_tools(None, context).await.unwrap())
                },
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("list200_gonk{era}_json"), |b| {
            b.to_async(&runtime).iter_batched(
                || request_context(&peer, meta),
                |context| async {
                    let list = ours_200.list_tools(None, context).await.unwrap();
                    std::hint::black_box(serde_json::to_vec(&list).unwrap())
                },
                BatchSize::SmallInput,
            )
        });
    }
    primitives::bench(&mut group, &runtime, &peer, |peer| request_context(peer, None));
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
        (
            "gonk_line_2025",
            "rmcp_line_2025",
            "tools/call line -> line",
        ),
        (
            "gonk_handler_2026",
            "rmcp_handler_2026",
            "2026 ServerHandler::call_tool -> JSON",
        ),
        (
            "gonk_line_2026",
            "rmcp_line_2026",
            "2026 tools/call line -> line",
        ),
        (
            "list200_gonk_2026",
            "list200_rmcp_2026",
            "2026 tools/list of 200 -> ListToolsResult",
        ),
        (
            "list200_gonk_2026_json",
            "list200_rmcp_2026_json",
            "2026 tools/list of 200 -> JSON",
        ),
    ] {
        if let (Some(a), Some(b)) = (ns(ours), ns(theirs)) {
            println!(
                "  {what:<42} {:>9.0} ns vs {:>9.0} ns  {:>5.2}x",
                a,
                b,
                a / b
            );
        }
    }
    for (ours, theirs, what) in primitives::RATIOS {
        if let (Some(a), Some(b)) = (ns(ours), ns(theirs)) {
            println!("  {what:<42} {a:>9.0} ns vs {b:>9.0} ns  {:>5.2}x", a / b);
        }
    }
    // What the stateless era costs each server: its 2026 row over its 2025
    // one.
    println!("\n2026-07-28 vs the 2025 era (same run; > 1.00x: the 2026 path is slower):");
    for (new, old, what) in [
        (
            "gonk_handler_2026",
            "gonk_handler",
            "gonk-tools call_tool -> JSON",
        ),
        (
            "rmcp_handler_2026",
            "rmcp_handler",
            "rmcp call_tool -> JSON",
        ),
        (
            "gonk_line_2026",
            "gonk_line_2025",
            "gonk-tools line -> line",
        ),
        ("rmcp_line_2026", "rmcp_line_2025", "rmcp line -> line"),
        (
            "list200_gonk_2026",
            "list200_gonk",
            "gonk-tools tools/list of 200",
        ),
        (
            "list200_rmcp_2026",
            "list200_rmcp",
            "rmcp tools/list of 200",
        ),
        (
            "list200_gonk_2026_json",
            "list200_gonk_json",
            "gonk-tools tools/list of 200 -> JSON",
        ),
        (
            "list200_rmcp_2026_json",
            "list200_rmcp_json",
            "rmcp tools/list of 200 -> JSON",
        ),
    ] {
        if let (Some(a), Some(b)) = (ns(new), ns(old)) {
            println!(
                "  {what:<42} {:>9.0} ns vs {:>9.0} ns  {:>5.2}x",
                a,
                b,
                a / b
            );
        }
    }
    if let (Some(ask), Some(plain)) = (ns("gonk_ask_round_trip_2026"), ns("gonk_line_2026")) {
        println!(
            "  one question asked and answered (2 lines) {ask:.0} ns: {:.2}x one plain 2026 call",
            ask / plain
        );
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
