//! The latency floor of a `tools/call` over streamable HTTP, on a kept-alive
//! connection and on a new connection per call, in the same run.
//!
//! * `call_new_connection`: every call opens a TCP connection (the baseline).
//! * `call_kept_alive`: every call reuses one connection, as MCP clients do.
//!
//! Without `TCP_NODELAY` on the server's sockets, the last chunk of each
//! response waits for the client's delayed ACK (~40 ms on Linux) on a
//! reused connection, while a fresh connection (still in quick-ACK mode)
//! does not: the kept-alive call is then ~50x slower than the new one.
//! After the run, the ratio of the two is printed.

mod fixture;
mod ratio;

use std::net::SocketAddr;
use std::time::Duration;

use criterion::{criterion_group, Criterion};
use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::prelude::*;
use ratio::mean_ns;
use serde_json::Value;

fn registry() -> ToolRegistry {
    fixture::add_registry("add")
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.unwrap()
}

/// One `tools/call` of `add(2, 3)`, read to the end of its response.
async fn call(client: &reqwest::Client, url: &str, session: &str) {
    let response = post(
        client,
        url,
        Some(session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}),
    )
    .await;
    assert!(response.status().is_success());
    let body = response.bytes().await.unwrap();
    assert!(
        body.windows(10).any(|w| w == br#""text":"5""#),
        "unexpected answer: {}",
        String::from_utf8_lossy(&body)
    );
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let kept_alive = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client");
    let new_connection = gonk_tools::adapters::http::OutboundHttp::new()
        .client_builder()
        .expect("an HTTP client builder")
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let (server, session) = runtime.block_on(async {
        let server = serve_http(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            registry(),
            McpHttpOptions::new(McpServerOptions::new("bench", "1.0.0")),
        )
        .await
        .unwrap();
        let url = server.url();
        let init = post(
            &kept_alive,
            &url,
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}}),
        )
        .await;
        let session = init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        init.bytes().await.unwrap();
        post(
            &kept_alive,
            &url,
            Some(&session),
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        (server, session)
    });
    let url = server.url();

    let mut group = c.benchmark_group("mcp_http");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("call_new_connection", |b| {
        b.to_async(&runtime)
            .iter(|| call(&new_connection, &url, &session))
    });
    group.bench_function("call_kept_alive", |b| {
        b.to_async(&runtime)
            .iter(|| call(&kept_alive, &url, &session))
    });
    group.finish();
    runtime.block_on(server.shutdown()).unwrap();
}

criterion_group!(benches, bench);

fn main() {
    if !ratio::run(benches) {
        return;
    }
    if let (Some(fresh), Some(kept)) = (
        mean_ns("mcp_http", "call_new_connection"),
        mean_ns("mcp_http", "call_kept_alive"),
    ) {
        println!(
            "call_kept_alive / call_new_connection: {:.2}x ({:.2} ms vs {:.2} ms per call)",
            kept / fresh,
            kept / 1e6,
            fresh / 1e6
        );
    }
}
