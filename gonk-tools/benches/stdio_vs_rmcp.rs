//! stdio round trips, gonk-tools against rmcp's own server, in one run.
//!
//! ```sh
//! cargo bench -p gonk-tools --features mcp --bench stdio_vs_rmcp
//! ```
//!
//! This binary is its own three servers: started with `--serve-rmcp` it
//! serves `add` with rmcp's `#[tool_router]` on rmcp's `stdio()` (its
//! README form), with `--serve-rmcp-pipes` on rmcp's `stdio_pipes()` (its
//! fastest form, the pipes on Tokio's reactor), with `--serve-gonk`
//! the same tool with `serve_stdio` (`--serve-rmcp-200`, `--serve-gonk-200`:
//! `add` and 199 more tools of its shape). All serve every protocol
//! version up to `2026-07-28`. As the driver it starts each as a child
//! process and, in interleaved rounds, measures for each era
//!
//! * spawn → the first answer: `initialize` for a 2025 client; for a
//!   `2026-07-28` client, which has no handshake, `server/discover`, what
//!   it sends first to learn the versions;
//! * `tools/call` of `add` per second, one at a time;
//! * `tools/call` per second with 16 requests in flight;
//! * `tools/list` of 200 per second, one at a time;
//! * the server's CPU time per call (all its threads, from the scheduler's
//!   counters) in both call runs, and its peak RSS after them.
//!
//! A 2026 client sends no `initialize`: every request line carries `_meta`
//! with the protocol version and the client's capabilities, which the
//! server reads on every call. Each figure is the median of the rounds;
//! each ratio (ours to rmcp's, and each server's 2026 to its 2025) the
//! median of the rounds' own ratios: a round measures all of them back to
//! back, so a change of load on a shared machine between rounds cancels.

mod fixture;

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use fixture::AddInput;
use gonk_tools::prelude::*;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::ProtocolVersion;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};

const ROUNDS: usize = 15;
const CALLS: usize = 2000;
const IN_FLIGHT: usize = 16;
const LISTS: usize = 500;
const TOOLS: usize = 200;

/// What a `2026-07-28` client puts in every request's params: `_meta` with
/// the two keys the protocol requires and the client's name. No
/// `logLevel`: the client asked for no logs. A macro, for `concat!`.
macro_rules! meta_2026 {
    () => {
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"driver","version":"1"}}"#
    };
}

#[derive(Clone)]
struct RmcpServer {
    tool_router: ToolRouter<RmcpServer>,
}

#[tool_router]
impl RmcpServer {
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

/// rmcp's router with `add` and, for `tools`, more tools of its shape.
fn rmcp_router(tools: usize) -> ToolRouter<RmcpServer> {
    let mut router = RmcpServer::tool_router();
    let template = router.get("add").cloned().expect("add is routed");
    for i in 1..tools {
        let mut attr = template.clone();
        attr.name = format!("tool.{i}").into();
        router.add_route(ToolRoute::new_dyn(attr, |_ctx| {
            Box::pin(async { Ok(rmcp::model::CallToolResult::success(vec![]).into()) })
        }));
    }
    router
}

/// Our registry with `add` and, for `tools`, more tools of its shape.
fn gonk_registry(tools: usize) -> ToolRegistry {
    let registry = fixture::add_registry("add");
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

fn serve(which: &str) {
    let tools = if which.ends_with("-200") { TOOLS } else { 1 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        if which.starts_with("--serve-rmcp") {
            let server = RmcpServer {
                tool_router: rmcp_router(tools),
            };
            // rmcp's README form (`stdio()`: Tokio's blocking stdin and
            // stdout), or its fastest (`stdio_pipes()`: the pipes on
            // Tokio's reactor, as `serve_stdio` reads them).
            let running = if which.starts_with("--serve-rmcp-pipes") {
                server.serve(rmcp::transport::io::stdio_pipes()).await
            } else {
                server.serve(rmcp::transport::io::stdio()).await
            }
            .unwrap();
            let _ = running.waiting().await;
        } else {
            gonk_tools::adapters::mcp::serve_stdio(
                gonk_registry(tools),
                gonk_tools::adapters::mcp::McpServerOptions::new("bench", "1.0.0"),
            )
            .await
            .unwrap();
        }
    });
}

/// The two ways a client opens a conversation.
#[derive(Clone, Copy, PartialEq)]
enum Era {
    /// `initialize` (at `2025-06-18`), then requests without `_meta`.
    Session2025,
    /// No handshake: `server/discover`, then every request with `_meta`.
    Stateless2026,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Session2025 => "2025",
            Era::Stateless2026 => "2026",
        }
    }

    /// The `_meta` member this era's requests carry, after a comma.
    fn meta_after_comma(self) -> &'static str {
        match self {
            Era::Session2025 => "",
            Era::Stateless2026 => concat!(",", meta_2026!()),
        }
    }

    /// The params of a request that has no others: `_meta` alone.
    fn meta_only(self) -> &'static str {
        match self {
            Era::Session2025 => "{}",
            Era::Stateless2026 => concat!("{", meta_2026!(), "}"),
        }
    }
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    era: Era,
}

impl Server {
    /// Starts the server and opens the conversation in `era`; returns it
    /// with the time from spawn to the first answer.
    fn start(mode: &str, era: Era) -> (Server, Duration) {
        let started = Instant::now();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            stdin,
            stdout,
            era,
        };
        match era {
            Era::Session2025 => {
                server.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"driver","version":"1"}}}"#);
                let answer = server.read();
                let initialized = started.elapsed();
                assert!(answer.contains("\"result\""), "initialize: {answer}");
                server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
                (server, initialized)
            }
            Era::Stateless2026 => {
                server.send(&format!(
                    r#"{{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}}"#,
                    era.meta_only()
                ));
                let answer = server.read();
                let discovered = started.elapsed();
                assert!(
                    answer.contains("\"result\"") && answer.contains("2026-07-28"),
                    "server/discover: {answer}"
                );
                (server, discovered)
            }
        }
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn read(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    fn call(&mut self, id: usize) {
        let meta = self.era.meta_after_comma();
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}}{meta}}}}}"#
        ));
    }

    /// Checks that the server answers `tools/call` in this era: rmcp's
    /// dispatch marks a 2026 result complete and strips the mark for a
    /// 2025 session, for both servers.
    fn check_era(&mut self) {
        self.call(1);
        let answer = self.read();
        assert!(answer.contains("\"5\""), "tools/call: {answer}");
        let complete = answer.contains(r#""resultType":"complete""#);
        assert_eq!(
            complete,
            self.era == Era::Stateless2026,
            "{} tools/call: {answer}",
            self.era.name()
        );
    }

    /// The server's CPU time so far, every thread, in nanoseconds: the
    /// scheduler's counters (`/proc/PID/task/*/schedstat`), since the
    /// clock ticks of `/proc/PID/stat` are too coarse for a window of
    /// tens of milliseconds.
    fn cpu_ns(&self) -> f64 {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).unwrap();
        tasks
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
            .filter_map(|stat| stat.split_whitespace().next()?.parse::<f64>().ok())
            .sum()
    }

    /// The server's peak resident set so far, in MB.
    fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb: f64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kb / 1024.0
    }

    /// Calls per second with `window` requests in flight, and the server's
    /// CPU time per call in µs.
    fn calls_per_second(&mut self, window: usize) -> (f64, f64) {
        let cpu_before = self.cpu_ns();
        let started = Instant::now();
        let mut sent = 0;
        let mut answered = 0;
        while answered < CALLS {
            while sent < CALLS && sent - answered < window {
                sent += 1;
                self.call(sent);
            }
            let answer = self.read();
            assert!(answer.contains("\"5\""), "tools/call: {answer}");
            answered += 1;
        }
        let rate = CALLS as f64 / started.elapsed().as_secs_f64();
        (rate, (self.cpu_ns() - cpu_before) / 1000.0 / CALLS as f64)
    }

    /// `tools/list` answers per second, one at a time.
    fn lists_per_second(&mut self) -> f64 {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}}"#,
            self.era.meta_only()
        );
        let started = Instant::now();
        for _ in 0..LISTS {
            self.send(&line);
            let answer = self.read();
            assert!(answer.contains("\"tool.199\""), "tools/list: {answer:.200}");
        }
        LISTS as f64 / started.elapsed().as_secs_f64()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

/// The median of the rounds' ratios `a[i] / b[i]`.
fn median_ratio(a: &[f64], b: &[f64]) -> f64 {
    median(a.iter().zip(b).map(|(a, b)| a / b).collect())
}

/// One era's figures for one server: spawn → first answer (ms), calls/s
/// sequential, calls/s in flight, lists/s, server CPU µs per call
/// sequential and in flight, peak RSS after the calls (MB).
type Figures = [Vec<f64>; 7];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(mode) = args.iter().find(|a| a.starts_with("--serve-")) {
        return serve(mode);
    }
    // `cargo test --benches` runs benches with `--test`: one short round.
    let quick = args.iter().any(|a| a == "--test" || a == "--list");
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let rounds = if quick { 1 } else { ROUNDS };
    let eras = [Era::Session2025, Era::Stateless2026];
    let servers = [
        ("rmcp", "--serve-rmcp"),
        ("rmcp-pipes", "--serve-rmcp-pipes"),
        ("gonk", "--serve-gonk"),
    ];
    // figures[era][server]
    let mut figures: [[Figures; 3]; 2] = Default::default();
    for _ in 0..rounds {
        for (e, &era) in eras.iter().enumerate() {
            for (s, (_, mode)) in servers.iter().enumerate() {
                let (mut server, first_answer) = Server::start(mode, era);
                server.check_era();
                figures[e][s][0].push(first_answer.as_secs_f64() * 1000.0);
                if !quick {
                    let (rate, cpu) = server.calls_per_second(1);
                    figures[e][s][1].push(rate);
                    figures[e][s][4].push(cpu);
                    let (rate, cpu) = server.calls_per_second(IN_FLIGHT);
                    figures[e][s][2].push(rate);
                    figures[e][s][5].push(cpu);
                    figures[e][s][6].push(server.peak_rss_mb());
                }
                drop(server);
                let (mut server, _) = Server::start(&format!("{mode}-{TOOLS}"), era);
                let lists = server.lists_per_second();
                if !quick {
                    figures[e][s][3].push(lists);
                }
            }
        }
    }
    if quick {
        return;
    }
    println!(
        "stdio, medians of {rounds} interleaved rounds ({CALLS} calls, {LISTS} lists of {TOOLS} each):"
    );
    println!("  columns: rmcp `stdio()` (README form) / rmcp `stdio_pipes()` (fastest) / gonk-tools; ratios gonk over each");
    for (e, era) in eras.iter().enumerate() {
        let [rmcp, pipes, gonk] = &figures[e];
        let first = match era {
            Era::Session2025 => "spawn -> initialize (ms)",
            Era::Stateless2026 => "spawn -> server/discover (ms)",
        };
        println!("  {}:", era.name());
        for (i, what) in [
            (0, first),
            (1, "calls/s, sequential"),
            (2, "calls/s, 16 in flight"),
            (3, "lists of 200/s, sequential"),
            (4, "CPU µs/call, sequential"),
            (5, "CPU µs/call, 16 in flight"),
            (6, "peak RSS MB"),
        ] {
            println!(
                "    {what:<30} {:>9.1} / {:>9.1} / {:>9.1}   {:.2}x  {:.2}x",
                median(rmcp[i].clone()),
                median(pipes[i].clone()),
                median(gonk[i].clone()),
                median_ratio(&gonk[i], &rmcp[i]),
                median_ratio(&gonk[i], &pipes[i])
            );
        }
    }
    // What the stateless era costs each server: its 2026 rate over its 2025
    // one, round by round.
    println!("  2026 / 2025 (throughput; < 1.00x: the 2026 path is slower):");
    for (s, (name, _)) in servers.iter().enumerate() {
        let (old, new) = (&figures[0][s], &figures[1][s]);
        println!(
            "    {name:<5} calls sequential {:.2}x, 16 in flight {:.2}x, lists {:.2}x",
            median_ratio(&new[1], &old[1]),
            median_ratio(&new[2], &old[2]),
            median_ratio(&new[3], &old[3])
        );
    }
}
