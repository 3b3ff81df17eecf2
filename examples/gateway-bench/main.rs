//! `gateway-bench`: what the gateway adds to one call. Not a test: it
//! prints a table.
//!
//! Upstream is the real `notes` binary (an empty in-memory database; the
//! call is `notes.search`, a read). Side by side in one run, over each
//! transport: the client calls `notes` directly, then the same tool
//! through `gonk-gateway` in front of it (stdio → stdio, HTTP → HTTP).
//! Calls are sequential on one session (latency, not throughput); the
//! ratio is gateway / direct of the median. `--runs N` repeats the whole
//! round (fresh processes each time) and ends with the median of the runs.
//!
//! ```text
//! cargo build --release -p gonk-tools-examples --bin gateway-bench --bin notes --bin gonk-gateway
//! target/release/gateway-bench [--calls 2000] [--runs 5]
//! ```

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::collect_tool_outcome;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A sibling binary of this one (cargo builds them together).
fn sibling(name: &str) -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .unwrap_or_else(|| name.into())
}

/// Starts `program args` and waits for `prefix URL` on its stderr.
async fn serve(program: &Path, args: &[&str], prefix: &str) -> (Child, String) {
    let mut child = Command::new(program)
        .args(args)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{} starts: {e}", program.display()));
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    while let Some(line) = lines.next_line().await.expect("stderr") {
        if let Some(url) = line.strip_prefix(prefix) {
            let url = url.split_whitespace().next().unwrap_or(url).to_owned();
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return (child, url);
        }
    }
    panic!("{} exited before it listened", program.display());
}

/// Per-call latencies of `calls` sequential calls of `tool` (after a
/// warm-up), sorted.
async fn measure(client: &McpClient, tool: &str, calls: usize) -> Vec<Duration> {
    let input = json!({"query": "nothing here", "limit": 1});
    for _ in 0..calls / 10 {
        collect_tool_outcome(client.invoke(tool, input.clone()), |_| {})
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e:?}"));
    }
    let mut latencies = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        collect_tool_outcome(client.invoke(tool, input.clone()), |_| {})
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e:?}"));
        latencies.push(started.elapsed());
    }
    latencies.sort();
    latencies
}

fn median(sorted: &[Duration]) -> Duration {
    sorted[sorted.len() / 2]
}

fn p99(sorted: &[Duration]) -> Duration {
    sorted[(sorted.len() * 99 / 100).min(sorted.len() - 1)]
}

/// One transport's figures of one run, µs: direct p50, p99, gateway p50,
/// p99, and the ratio of the medians.
#[derive(Clone, Copy)]
struct Figures([f64; 5]);

impl Figures {
    fn of(direct: &[Duration], gateway: &[Duration]) -> Figures {
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        Figures([
            micros(median(direct)),
            micros(p99(direct)),
            micros(median(gateway)),
            micros(p99(gateway)),
            median(gateway).as_secs_f64() / median(direct).as_secs_f64(),
        ])
    }

    /// Each figure's median over `runs`.
    fn median_of(runs: &[Figures]) -> Figures {
        let mut out = [0.0; 5];
        for (i, slot) in out.iter_mut().enumerate() {
            let mut column: Vec<f64> = runs.iter().map(|f| f.0[i]).collect();
            column.sort_by(f64::total_cmp);
            *slot = column[column.len() / 2];
        }
        Figures(out)
    }
}

fn row(label: &str, figures: Figures) {
    let [d50, d99, g50, g99, ratio] = figures.0;
    println!(
        "| {label:<13} | {d50:>10.1} | {d99:>10.1} | {g50:>11.1} | {g99:>11.1} | {ratio:>5.2}x |"
    );
}

fn write_config(path: &Path, server: serde_json::Value) {
    std::fs::write(path, json!({"mcpServers": {"notes": server}}).to_string())
        .expect("the config is written");
}

#[tokio::main]
async fn main() {
    let mut calls = 2000usize;
    let mut runs = 1usize;
    let mut argv = std::env::args().skip(1);
    while let Some(flag) = argv.next() {
        match (flag.as_str(), argv.next()) {
            ("--calls", Some(n)) => calls = n.parse().expect("--calls N"),
            ("--runs", Some(n)) => runs = n.parse::<usize>().expect("--runs N").max(1),
            _ => panic!("usage: gateway-bench [--calls N] [--runs N]"),
        }
    }
    println!(
        "{calls} sequential calls of notes.search each, after {} warm-up; µs per call",
        calls / 10
    );
    println!("| run           | direct p50 | direct p99 | gateway p50 | gateway p99 | ratio  |");
    println!("|---------------|-----------:|-----------:|------------:|------------:|-------:|");
    let mut stdio = Vec::new();
    let mut http = Vec::new();
    for run in 1..=runs {
        let (s, h) = round(calls).await;
        row(&format!("{run} stdio"), s);
        row(&format!("{run} HTTP"), h);
        stdio.push(s);
        http.push(h);
    }
    if runs > 1 {
        row("median stdio", Figures::median_of(&stdio));
        row("median HTTP", Figures::median_of(&http));
    }
}

/// One round: each transport direct, then through the gateway; the stdio
/// and HTTP figures.
async fn round(calls: usize) -> (Figures, Figures) {
    let notes = sibling("notes");
    let gateway = sibling("gonk-gateway");
    let dir = std::env::temp_dir().join(format!("gateway-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let config = dir.join("gateway.json");

    // stdio: notes mcp, and gonk-gateway mcp in front of another one.
    let mut direct = Command::new(&notes);
    direct
        .args(["--db", ":memory:", "mcp"])
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let client = McpClient::connect_stdio(direct).await.expect("notes mcp");
    let stdio_direct = measure(&client, "notes.search", calls).await;
    client.close().await.ok();
    write_config(
        &config,
        json!({"command": notes.display().to_string(), "args": ["--db", ":memory:", "mcp"]}),
    );
    let mut through = Command::new(&gateway);
    through
        .arg("--config")
        .arg(&config)
        .arg("mcp")
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let client = McpClient::connect_stdio(through)
        .await
        .expect("gonk-gateway mcp");
    let stdio_gateway = measure(&client, "notes.notes.search", calls).await;
    client.close().await.ok();

    // HTTP: notes serve, and gonk-gateway serve in front of it.
    let (_notes, notes_url) = serve(
        &notes,
        &["--db", ":memory:", "serve", "--port", "0"],
        "notes: serving MCP at ",
    )
    .await;
    let client = McpClient::connect_http(&notes_url, McpHttpClientOptions::new())
        .await
        .expect("notes serve");
    let http_direct = measure(&client, "notes.search", calls).await;
    client.close().await.ok();
    write_config(&config, json!({"url": notes_url}));
    let config_arg = config.display().to_string();
    let (_gateway, gateway_url) = serve(
        &gateway,
        &["--config", &config_arg, "serve", "--port", "0"],
        "gonk-gateway: serving MCP at ",
    )
    .await;
    let client = McpClient::connect_http(&gateway_url, McpHttpClientOptions::new())
        .await
        .expect("gonk-gateway serve");
    let http_gateway = measure(&client, "notes.notes.search", calls).await;
    client.close().await.ok();
    let _ = std::fs::remove_dir_all(&dir);
    (
        Figures::of(&stdio_direct, &stdio_gateway),
        Figures::of(&http_direct, &http_gateway),
    )
}
