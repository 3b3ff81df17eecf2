//! The MCP adapter's cost, side by side with the direct dispatch path in
//! the same run.
//!
//! * `invoke`: `registry.invoke` + `collect_tool_outcome` for `add(a, b)`.
//! * `mcp_call`: the same call through the MCP client and server over an
//!   in-process pipe (JSON-RPC framing, rmcp on both ends, the adapter's
//!   mapping).
//! * `list_50`: the `tools/list` projection of 50 tools.
//!
//! After the run, the ratio of `mcp_call` to `invoke` is printed.

mod fixture;
mod ratio;

use criterion::{criterion_group, Criterion};
use fixture::AddInput;
use gonk_tools::adapters::mcp::{
    serve_io, McpClient, McpServer, McpServerOptions, WriteToolPolicy,
};
use gonk_tools::prelude::*;
use ratio::mean_ns;

fn registry(extra: usize) -> ToolRegistry {
    let registry = fixture::add_registry("add");
    for i in 0..extra {
        registry
            .register(
                ToolDefinition::builder(format!("tool.{i}"))
                    .description("A tool with an object input.")
                    .approval(ApprovalTier::Read)
                    .output_schema_for::<AddInput>()
                    .handler(|input: AddInput, _| async move { Ok::<_, ToolError>(input) })
                    .build(),
            )
            .unwrap();
    }
    registry
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let direct = registry(0);
    let (client, server) = tokio::io::duplex(64 * 1024);
    let client = runtime.block_on(async {
        let (server_read, server_write) = tokio::io::split(server);
        tokio::spawn(serve_io(
            registry(0),
            McpServerOptions::new("bench", "1.0.0"),
            server_read,
            server_write,
        ));
        let (client_read, client_write) = tokio::io::split(client);
        McpClient::connect_io(client_read, client_write)
            .await
            .unwrap()
    });
    let input = json!({"a": 2, "b": 3});

    let mut group = c.benchmark_group("mcp");
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
    group.bench_function("mcp_call", |b| {
        b.to_async(&runtime).iter(|| async {
            let out = collect_tool_outcome(client.invoke("add", input.clone()), |_| {})
                .await
                .unwrap();
            assert_eq!(out.data, 5);
        })
    });
    let fifty = McpServer::new(
        registry(49),
        McpServerOptions::new("bench", "1.0.0"),
        WriteToolPolicy::Permissive,
    );
    group.bench_function("list_50", |b| {
        b.iter(|| {
            let tools = fifty.list();
            assert_eq!(tools.len(), 50);
            tools
        })
    });
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    if !ratio::run(benches) {
        return;
    }
    if let (Some(invoke), Some(mcp)) = (mean_ns("mcp", "invoke"), mean_ns("mcp", "mcp_call")) {
        println!(
            "mcp_call / invoke: {:.1}x ({:.1} µs vs {:.1} µs per call)",
            mcp / invoke,
            mcp / 1000.0,
            invoke / 1000.0
        );
    }
}
