//! The WebSocket surface's cost, side by side with the direct dispatch
//! path in the same run.
//!
//! * `invoke`: `registry.invoke` + `collect_tool_outcome` for `add(a, b)`.
//! * `ws_handler`: the same call through the transport-agnostic projection
//!   (`WsHandler::handle`: op table, reply folding, no socket).
//! * `ws_call`: the same call through `WsClient` and `serve_ws` over a
//!   loopback TCP socket (JSON text frames, one kept-alive connection,
//!   `TCP_NODELAY`).
//!
//! After the run, the ratios to `invoke` are printed.

mod ratio;

use criterion::{criterion_group, Criterion};
use gonk_tools::adapters::ws::{serve_ws, WsClient, WsClientOptions, WsServerOptions};
use gonk_tools::adapters::ws::{WsHandler, WsRequest};
use gonk_tools::client::Transport;
use gonk_tools::prelude::*;
use ratio::mean_ns;

#[derive(Serialize, Deserialize, JsonSchema)]
struct AddInput {
    a: i64,
    b: i64,
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("add")
                .description("Add two integers.")
                .approval(ApprovalTier::Read)
                .handler(|input: AddInput, _| async move { Ok::<_, ToolError>(input.a + input.b) })
                .build(),
        )
        .unwrap();
    registry
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let direct = registry();
    let handler: WsHandler = WsHandler::builder(&direct).build();
    let client = runtime.block_on(async {
        let server = serve_ws(
            "127.0.0.1:0".parse().unwrap(),
            WsHandler::builder(&registry()),
            WsServerOptions::new(),
        )
        .await
        .unwrap();
        WsClient::connect(&server.url(), WsClientOptions::new())
            .await
            .unwrap()
    });
    let input = json!({"a": 2, "b": 3});

    let mut group = c.benchmark_group("ws");
    group.bench_function("invoke", |b| {
        b.to_async(&runtime).iter(|| async {
            let out = collect_tool_outcome(
                direct.invoke("add", input.clone(), ToolContext::new()),
                |_| {},
            )
            .await
            .unwrap();
            assert_eq!(out.data, 5);
        })
    });
    group.bench_function("ws_handler", |b| {
        b.to_async(&runtime).iter(|| async {
            let reply = handler
                .handle(WsRequest::new("add", input.clone()).with_req_id(1), &())
                .await;
            assert_eq!(reply.into_result().unwrap(), 5);
        })
    });
    group.bench_function("ws_call", |b| {
        b.to_async(&runtime).iter(|| async {
            let out = collect_tool_outcome(client.invoke("add", input.clone()), |_| {})
                .await
                .unwrap();
            assert_eq!(out.data, 5);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    if !ratio::run(benches) {
        return;
    }
    let Some(invoke) = mean_ns("ws", "invoke") else {
        return;
    };
    for id in ["ws_handler", "ws_call"] {
        if let Some(mean) = mean_ns("ws", id) {
            println!(
                "{id} / invoke: {:.1}x ({:.1} µs vs {:.1} µs per call)",
                mean / invoke,
                mean / 1000.0,
                invoke / 1000.0
            );
        }
    }
}
