//! stdio round trips, gonk-tools against rmcp's own server, in one run.
//!
//! ```sh
//! cargo bench -p gonk-tools --features mcp --bench stdio_vs_rmcp
//! ```
//!
//! This binary is its own two servers: started with `--serve-rmcp` it
//! serves `add` with rmcp's `#[tool_router]` on stdio, with `--serve-gonk`
//! the same tool with `serve_stdio`. As the driver it starts each as a
//! child process and, in interleaved rounds, measures
//!
//! * spawn → `initialize` answered (the median of the rounds);
//! * `tools/call` of `add` per second, one at a time;
//! * `tools/call` per second with 16 requests in flight;
//!
//! and prints ours as ratios to rmcp's.

mod fixture;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use fixture::AddInput;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};

const ROUNDS: usize = 9;
const CALLS: usize = 2000;
const IN_FLIGHT: usize = 16;

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
impl ServerHandler for RmcpServer {}

fn serve(which: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        if which == "--serve-rmcp" {
            let server = RmcpServer {
                tool_router: RmcpServer::tool_router(),
            };
            let running = server
                .serve((tokio::io::stdin(), tokio::io::stdout()))
                .await
                .unwrap();
            let _ = running.waiting().await;
        } else {
            gonk_tools::adapters::mcp::serve_stdio(
                fixture::add_registry("add"),
                gonk_tools::adapters::mcp::McpServerOptions::new("bench", "1.0.0"),
            )
            .await
            .unwrap();
        }
    });
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Starts the server and completes the handshake; returns it with the
    /// time from spawn to the `initialize` answer.
    fn start(mode: &str) -> (Server, Duration) {
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
        };
        server.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"driver","version":"1"}}}"#);
        let answer = server.read();
        let initialized = started.elapsed();
        assert!(answer.contains("\"result\""), "initialize: {answer}");
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        (server, initialized)
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
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}}}}}}"#
        ));
    }

    /// Calls per second with `window` requests in flight.
    fn calls_per_second(&mut self, window: usize) -> f64 {
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
        CALLS as f64 / started.elapsed().as_secs_f64()
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
    let mut figures: [[Vec<f64>; 3]; 2] = Default::default();
    for _ in 0..rounds {
        for (i, mode) in ["--serve-rmcp", "--serve-gonk"].into_iter().enumerate() {
            let (mut server, initialized) = Server::start(mode);
            figures[i][0].push(initialized.as_secs_f64() * 1000.0);
            if !quick {
                figures[i][1].push(server.calls_per_second(1));
                figures[i][2].push(server.calls_per_second(IN_FLIGHT));
            }
        }
    }
    if quick {
        return;
    }
    let [rmcp, gonk] = figures.map(|f| f.map(median));
    println!("stdio, medians of {rounds} interleaved rounds ({CALLS} calls each):");
    println!(
        "  spawn -> initialize     rmcp {:>8.2} ms   gonk-tools {:>8.2} ms   {:.2}x",
        rmcp[0],
        gonk[0],
        gonk[0] / rmcp[0]
    );
    for (i, what) in [(1, "calls/s, sequential"), (2, "calls/s, 16 in flight")] {
        println!(
            "  {what:<22}  rmcp {:>8.0}      gonk-tools {:>8.0}      {:.2}x",
            rmcp[i],
            gonk[i],
            gonk[i] / rmcp[i]
        );
    }
}
