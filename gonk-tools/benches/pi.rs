//! The Pi bridge's cost, side by side with the direct dispatch path in the
//! same run.
//!
//! * `invoke`: `registry.invoke` + `collect_tool_outcome` for `add(a, b)`.
//! * `bridge_round_trip`: the same call as the Pi extension makes it — an
//!   `execute` line written to the bridge, the `result` line read back and
//!   parsed — over an in-process pipe (line framing, JSON both ways, the
//!   catalog look-up, the execution mapping, the writer task).
//!
//! After the run, the ratio of `bridge_round_trip` to `invoke` is printed.

mod fixture;
mod ratio;

use std::sync::Arc;

use criterion::{criterion_group, Criterion};
use gonk_tools::adapters::pi::{serve_pi_io, PiOptions};
use gonk_tools::prelude::*;
use ratio::mean_ns;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};
use tokio::sync::Mutex;

fn registry() -> ToolRegistry {
    fixture::add_registry("math.add")
}

/// The extension's end of the bridge.
struct Extension {
    to_bridge: WriteHalf<DuplexStream>,
    from_bridge: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
}

const EXECUTE: &[u8] =
    b"{\"type\":\"execute\",\"id\":\"c1\",\"tool\":\"math_add\",\"input\":{\"a\":2,\"b\":3}}\n";

impl Extension {
    async fn call(&mut self) -> Value {
        self.to_bridge.write_all(EXECUTE).await.unwrap();
        let line = self.from_bridge.next_line().await.unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let direct = registry();
    let extension = runtime.block_on(async {
        let (extension, bridge) = tokio::io::duplex(64 * 1024);
        let (bridge_read, bridge_write) = tokio::io::split(bridge);
        tokio::spawn(serve_pi_io(
            registry(),
            PiOptions::new(),
            bridge_read,
            bridge_write,
        ));
        let (read, write) = tokio::io::split(extension);
        Arc::new(Mutex::new(Extension {
            to_bridge: write,
            from_bridge: BufReader::new(read).lines(),
        }))
    });
    let input = json!({"a": 2, "b": 3});

    let mut group = c.benchmark_group("pi");
    group.bench_function("invoke", |b| {
        b.to_async(&runtime).iter(|| async {
            let out = collect_tool_outcome(
                direct.invoke("math.add", input.clone(), ToolContext::new()),
                |_| {},
            )
            .await
            .unwrap();
            assert_eq!(out.data, 5);
        })
    });
    group.bench_function("bridge_round_trip", |b| {
        b.to_async(&runtime).iter(|| async {
            let reply = extension.lock().await.call().await;
            assert_eq!(reply["result"]["details"], 5);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    if !ratio::run(benches) {
        return;
    }
    if let (Some(invoke), Some(bridge)) =
        (mean_ns("pi", "invoke"), mean_ns("pi", "bridge_round_trip"))
    {
        println!(
            "bridge_round_trip / invoke: {:.1}x ({:.1} µs vs {:.1} µs per call)",
            bridge / invoke,
            bridge / 1000.0,
            invoke / 1000.0
        );
    }
}
