//! Streamable HTTP under load, gonk-tools against rmcp's own server, in one
//! run, driven by an external load generator (`wrk`).
//!
//! ```sh
//! apt-get install -y wrk
//! cargo bench -p gonk-tools --features mcp --bench http_vs_rmcp
//! # longer, one era: rounds, seconds per cell
//! HTTP_VS_RMCP_ROUNDS=7 HTTP_VS_RMCP_SECONDS=6 HTTP_VS_RMCP_ERA=2025 \
//!     cargo bench -p gonk-tools --features mcp --bench http_vs_rmcp
//! ```
//!
//! This binary is its own four servers, each the same `add` tool on
//! `127.0.0.1` behind axum with `TCP_NODELAY`, started as a child process
//! that prints its port:
//!
//! * `--serve-rmcp`: rmcp's `StreamableHttpService` in its default
//!   configuration (a session per `initialize`, answers as SSE), the
//!   server value (its `ToolRouter` in a field) cloned per session;
//! * `--serve-rmcp-json`: the same in rmcp's fastest form,
//!   `legacy_session_mode(false)` and `json_response(true)`: no sessions,
//!   every request served by a fresh clone, the answer as plain JSON;
//! * `--serve-gonk`: [`serve_http`](gonk_tools::adapters::mcp::serve_http)
//!   with its defaults (sessions, Host check, admission; a final answer
//!   that comes first as plain JSON, anything longer as SSE);
//! * `--serve-gonk-nosess`: the same with `sessions(false)`, like for like
//!   with `rmcp-json`: no sessions in either era.
//!
//! For each protocol era (`2025`: `initialize` first, then one session id
//! on every call — none for `rmcp-json`, which has no sessions; `2026`: no
//! handshake, every request carries `_meta` and the `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` headers), each server and 1, 8 and 64
//! connections, `wrk` posts `tools/call` of `add` (a fresh id per request)
//! and the driver reads calls/s, p50 and p99 from `wrk`, server CPU per call
//! from the child's `/proc/PID/stat` (user + system time before and after)
//! and peak RSS from its `/proc/PID/status`. Rounds are interleaved; each
//! figure is the median of the rounds, each ratio the median of the rounds'
//! own ratios. Without `wrk` on `PATH` the bench says so and exits.

mod fixture;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use fixture::AddInput;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};

const ROUNDS: usize = 3;
const SECONDS: u32 = 3;
const CONNECTIONS: [usize; 3] = [1, 8, 64];

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

/// Serves one of the three servers on a free loopback port, which it
/// prints on stdout, until killed.
fn serve(which: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        if which == "--serve-gonk" || which == "--serve-gonk-nosess" {
            let server = gonk_tools::adapters::mcp::serve_http(
                std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
                fixture::add_registry("add"),
                gonk_tools::adapters::mcp::McpHttpOptions::new(
                    gonk_tools::adapters::mcp::McpServerOptions::new("bench", "1.0.0"),
                )
                .sessions(which == "--serve-gonk"),
            )
            .await
            .unwrap();
            println!("{}", server.local_addr().port());
            server.wait().await.unwrap();
            return;
        }
        let mut config = StreamableHttpServerConfig::default();
        if which == "--serve-rmcp-json" {
            config = config
                .with_legacy_session_mode(false)
                .with_json_response(true);
        }
        let prototype = RmcpServer {
            tool_router: RmcpServer::tool_router(),
        };
        let service = StreamableHttpService::new(
            move || Ok(prototype.clone()),
            std::sync::Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().route_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", listener.local_addr().unwrap().port());
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).await.unwrap();
    });
}

/// The two ways a client talks to the server.
#[derive(Clone, Copy, PartialEq)]
enum Era {
    Session2025,
    Stateless2026,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Session2025 => "2025",
            Era::Stateless2026 => "2026",
        }
    }

    fn version(self) -> &'static str {
        match self {
            Era::Session2025 => "2025-06-18",
            Era::Stateless2026 => "2026-07-28",
        }
    }

    /// The body of a `tools/call` of `add`, with `{id}` where the id goes.
    fn call_body(self) -> &'static str {
        match self {
            Era::Session2025 => {
                r#"{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#
            }
            Era::Stateless2026 => {
                r#"{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"driver","version":"1"}}}}"#
            }
        }
    }

    /// The headers every `tools/call` carries, besides the session id.
    fn call_headers(self) -> Vec<(&'static str, &'static str)> {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", self.version()),
        ];
        if self == Era::Stateless2026 {
            headers.push(("Mcp-Method", "tools/call"));
            headers.push(("Mcp-Name", "add"));
        }
        headers
    }
}

/// One POST on a connection of its own; the raw response (head and body).
fn post(port: u16, headers: &[(&str, &str)], body: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

struct Server {
    child: Child,
    port: u16,
    /// The session every call carries (2025, servers with sessions).
    session: Option<String>,
}

impl Server {
    fn start(mode: &str, era: Era) -> Server {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .arg(mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the server prints its port");
        let mut server = Server {
            child,
            port,
            session: None,
        };
        if era == Era::Session2025 && mode != "--serve-rmcp-json" && mode != "--serve-gonk-nosess" {
            server.initialize();
        }
        server.check(era);
        server
    }

    fn initialize(&mut self) {
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        let answer = post(
            self.port,
            &headers,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"driver","version":"1"}}}"#,
        );
        let session = answer
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("initialize opened no session: {answer}"));
        let mut headers = Era::Session2025.call_headers();
        headers.push(("Mcp-Session-Id", &session));
        let answer = post(
            self.port,
            &headers,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert!(answer.starts_with("HTTP/1.1 202"), "initialized: {answer}");
        self.session = Some(session);
    }

    fn headers(&self, era: Era) -> Vec<(&str, &str)> {
        let mut headers = era.call_headers();
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id", session));
        }
        headers
    }

    /// One call, by hand: the server answers `add` in this era.
    fn check(&self, era: Era) {
        let answer = post(
            self.port,
            &self.headers(era),
            &era.call_body().replace("{id}", "1"),
        );
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.contains(r#""text":"5""#),
            "{} tools/call: {answer}",
            era.name()
        );
    }

    /// The server's user + system CPU time so far, in seconds.
    fn cpu_seconds(&self, ticks_per_second: f64) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // Fields after the command name, which is in parentheses.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        // utime and stime are fields 14 and 15 of the whole line.
        let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
        ticks / ticks_per_second
    }

    /// The server's peak resident set, in MB.
    fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb: f64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kb / 1024.0
    }

    /// Runs `wrk` with `connections` for `seconds`.
    fn load(&self, era: Era, connections: usize, seconds: u32, ticks_per_second: f64) -> Load {
        let script = std::env::temp_dir().join(format!(
            "http_vs_rmcp-{}-{}.lua",
            std::process::id(),
            self.port
        ));
        std::fs::write(&script, lua_script(era, &self.headers(era))).unwrap();
        let cpu_before = self.cpu_seconds(ticks_per_second);
        let output = Command::new("wrk")
            .arg(format!("-t{}", connections.min(2)))
            .arg(format!("-c{connections}"))
            .arg(format!("-d{seconds}s"))
            .arg("--latency")
            .arg("-s")
            .arg(&script)
            .arg(format!("http://127.0.0.1:{}/mcp", self.port))
            .output()
            .expect("wrk runs");
        let cpu = self.cpu_seconds(ticks_per_second) - cpu_before;
        let _ = std::fs::remove_file(&script);
        let report = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "wrk failed: {report}");
        assert!(
            !report.contains("Non-2xx") && !report.contains("Socket errors"),
            "{} with {connections} connections: {report}",
            era.name()
        );
        let requests: f64 = report
            .lines()
            .find_map(|line| line.trim().split_once(" requests in "))
            .and_then(|(count, _)| count.parse().ok())
            .unwrap_or_else(|| panic!("no request count: {report}"));
        let per_second = report
            .lines()
            .find_map(|line| line.strip_prefix("Requests/sec:"))
            .and_then(|rest| rest.trim().parse().ok())
            .unwrap_or_else(|| panic!("no Requests/sec: {report}"));
        Load {
            per_second,
            p50_ms: percentile_ms(&report, "50%"),
            p99_ms: percentile_ms(&report, "99%"),
            cpu_us_per_call: cpu * 1e6 / requests,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A wrk script posting `tools/call`: each thread numbers its requests
/// (ids unique across threads: one session may serve every connection).
fn lua_script(era: Era, headers: &[(&str, &str)]) -> String {
    let mut script = String::from("wrk.method = \"POST\"\n");
    for (name, value) in headers {
        script.push_str(&format!("wrk.headers[\"{name}\"] = \"{value}\"\n"));
    }
    let (before, after) = era.call_body().split_once("{id}").unwrap();
    script.push_str(&format!(
        r#"local before = [[{before}]]
local after = [[{after}]]
local threads = 0
thread_number = 0
local counter = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end
function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, before .. (thread_number * 1000000000 + counter) .. after)
end
"#
    ));
    script
}

/// A percentile of wrk's latency distribution, in ms.
fn percentile_ms(report: &str, label: &str) -> f64 {
    let value = report
        .lines()
        .find_map(|line| line.trim().strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label} latency: {report}"))
        .trim();
    let (number, scale) = if let Some(n) = value.strip_suffix("us") {
        (n, 1e-3)
    } else if let Some(n) = value.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = value.strip_suffix('s') {
        (n, 1e3)
    } else {
        (value, 1.0)
    };
    number.parse::<f64>().unwrap() * scale
}

/// One wrk run's figures.
#[derive(Clone, Copy)]
struct Load {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_us_per_call: f64,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    values[values.len() / 2]
}

/// The median of the rounds' ratios `a[i] / b[i]`.
fn median_ratio(a: &[f64], b: &[f64]) -> f64 {
    median(a.iter().zip(b).map(|(a, b)| a / b).collect())
}

fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(mode) = args.iter().find(|a| a.starts_with("--serve-")) {
        return serve(mode);
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if Command::new("wrk").arg("--version").output().is_err() {
        println!("http_vs_rmcp: skipped, `wrk` is not on PATH (apt-get install -y wrk)");
        return;
    }
    // `cargo test --benches` runs benches with `--test`: one short round
    // on one connection.
    let quick = args.iter().any(|a| a == "--test");
    // Longer runs settle the noisier cells: `HTTP_VS_RMCP_ROUNDS`,
    // `HTTP_VS_RMCP_SECONDS`, and `HTTP_VS_RMCP_ERA=2025|2026` for one era.
    let setting = |name: &str, default: u32| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .filter(|&value| value > 0)
            .unwrap_or(default)
    };
    let (rounds, seconds) = if quick {
        (1, 1)
    } else {
        (
            setting("HTTP_VS_RMCP_ROUNDS", ROUNDS as u32) as usize,
            setting("HTTP_VS_RMCP_SECONDS", SECONDS),
        )
    };
    let connections: &[usize] = if quick {
        &CONNECTIONS[..1]
    } else {
        &CONNECTIONS
    };
    let ticks = clock_ticks_per_second();
    let eras: Vec<Era> = [Era::Session2025, Era::Stateless2026]
        .into_iter()
        .filter(|era| match std::env::var("HTTP_VS_RMCP_ERA") {
            Ok(only) => only == era.name(),
            Err(_) => true,
        })
        .collect();
    let servers = [
        ("rmcp", "--serve-rmcp"),
        ("rmcp-json", "--serve-rmcp-json"),
        ("gonk", "--serve-gonk"),
        ("gonk-nosess", "--serve-gonk-nosess"),
    ];
    // loads[era][server][connections] over rounds; rss[era][server].
    let mut loads =
        vec![vec![vec![Vec::<Load>::new(); connections.len()]; servers.len()]; eras.len()];
    let mut rss = vec![vec![Vec::<f64>::new(); servers.len()]; eras.len()];
    for _ in 0..rounds {
        for (e, &era) in eras.iter().enumerate() {
            for (s, (_, mode)) in servers.iter().enumerate() {
                let server = Server::start(mode, era);
                for (c, &count) in connections.iter().enumerate() {
                    loads[e][s][c].push(server.load(era, count, seconds, ticks));
                }
                rss[e][s].push(server.peak_rss_mb());
            }
        }
    }
    println!(
        "streamable HTTP, wrk {seconds} s per cell, medians of {rounds} interleaved rounds; \
         gonk/X = gonk's figure over X's (calls/s: > 1 is faster; latency, CPU, RSS: < 1 is better)"
    );
    for (e, era) in eras.iter().enumerate() {
        println!("  {}:", era.name());
        println!(
            "    {:<11} {:>5} {:>10} {:>9} {:>9} {:>12} {:>9}",
            "server", "conns", "calls/s", "p50 ms", "p99 ms", "CPU us/call", "RSS MB"
        );
        for (c, connections) in connections.iter().enumerate() {
            for (s, (name, _)) in servers.iter().enumerate() {
                let runs = &loads[e][s][c];
                let pick = |f: fn(&Load) -> f64| median(runs.iter().map(f).collect());
                println!(
                    "    {name:<11} {connections:>5} {:>10.0} {:>9.3} {:>9.3} {:>12.1} {:>9.1}",
                    pick(|l| l.per_second),
                    pick(|l| l.p50_ms),
                    pick(|l| l.p99_ms),
                    pick(|l| l.cpu_us_per_call),
                    median(rss[e][s].clone()),
                );
            }
            let ratio = |g: usize, s: usize, f: fn(&Load) -> f64| {
                let gonk: Vec<f64> = loads[e][g][c].iter().map(f).collect();
                let other: Vec<f64> = loads[e][s][c].iter().map(f).collect();
                median_ratio(&gonk, &other)
            };
            for (g, gonk) in [(2, "gonk"), (3, "nosess")] {
                for (s, name) in [(0, "rmcp"), (1, "rmcp-json")] {
                    println!(
                        "    {:<16} {:>9.2}x {:>8.2}x {:>8.2}x {:>11.2}x {:>8.2}x",
                        format!("{gonk}/{name}"),
                        ratio(g, s, |l| l.per_second),
                        ratio(g, s, |l| l.p50_ms),
                        ratio(g, s, |l| l.p99_ms),
                        ratio(g, s, |l| l.cpu_us_per_call),
                        median_ratio(&rss[e][g], &rss[e][s]),
                    );
                }
            }
        }
    }
}
