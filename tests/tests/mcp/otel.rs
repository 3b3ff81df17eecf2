//! OpenTelemetry export end to end: a real OTLP/HTTP receiver (the
//! `opentelemetry-proto` package decoding `ExportTraceServiceRequest` and
//! `ExportMetricsServiceRequest`, `tests/clients/otlp_receiver.py`), the
//! real `notes` server exporting to it because `OTEL_EXPORTER_OTLP_ENDPOINT`
//! points there, and the official Python SDK calling tools with a
//! `traceparent` in `_meta` — plus one raw request whose `traceparent` is
//! an HTTP header.
//!
//! The receiver must get, for each call, a SERVER span
//! `tools/call {tool}` in the client's trace whose parent is the client's
//! span, with the MCP attributes; a child `execute_tool {tool}` dispatch
//! span; `error.type` on a failing call; duration points for
//! `mcp.server.operation.duration` and `gonk.tool.call.duration`; and the
//! input's secret in no attribute, event or resource anywhere.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gonk_tools_tests::clients::{client_script, report};
use gonk_tools_tests::mcp_clients::{clients, run_python};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

const TRACE_OK: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_OK: &str = "00f067aa0ba902b7";
const TRACE_FAIL: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT_FAIL: &str = "b7ad6b7169203331";
const TRACE_HEADER: &str = "5e1ad5e1ad5e1ad5e1ad5e1ad5e1ad5e";
const PARENT_HEADER: &str = "1234567890abcdef";
const SECRET: &str = "SECRET-7f3a-do-not-export";

/// SERVER in OTLP's `Span.SpanKind`; INTERNAL is 1.
const KIND_SERVER: i64 = 2;
const KIND_INTERNAL: i64 = 1;
/// `Status.code` ERROR.
const STATUS_ERROR: i64 = 2;

/// The receiver, killed when dropped.
struct Receiver {
    child: Child,
    port: u16,
}

impl Receiver {
    fn start(out: &std::path::Path) -> Receiver {
        let mut child = Command::new(&clients().python)
            .arg(client_script("otlp_receiver.py"))
            .arg(out)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the receiver starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("the receiver prints its port");
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the receiver said {line:?}"));
        Receiver { child, port }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every line the receiver decoded so far.
fn received(out: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn spans<'a>(lines: &'a [Value], name: &str, trace: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["signal"] == "span" && l["name"] == name && l["trace_id"] == trace)
        .collect()
}

/// A stateless `tools/call` POSTed by hand with `traceparent` as an HTTP
/// header (and none in `_meta`).
fn call_with_header(url: &str, traceparent: &str) -> String {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let addr: SocketAddr = host.parse().expect("a socket address");
    let body = json!({
        "jsonrpc": "2.0", "id": "h1", "method": "tools/call",
        "params": {
            "name": "notes.get",
            "arguments": { "id": 1 },
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
    .to_string();
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\
         Mcp-Name: notes.get\r\ntraceparent: {traceparent}\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
    answer
}

#[test]
fn notes_exports_the_mcp_spans_and_metrics_to_a_real_otlp_receiver() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = dir.path().join("otlp.jsonl");
    let db = dir.path().join("notes.db").display().to_string();
    let receiver = Receiver::start(&out);

    let mut command = notes_command();
    command
        .args(["--db", &db, "serve", "--port", "0", "--allow-writes"])
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", receiver.port),
        )
        .env("OTEL_SERVICE_NAME", "notes-under-test")
        // Send soon; the shutdown below flushes the rest anyway.
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "500");
    let mut server = ServerProcess::start(command);

    let ok = format!("00-{TRACE_OK}-{PARENT_OK}-01");
    let fail = format!("00-{TRACE_FAIL}-{PARENT_FAIL}-01");
    let output = run_python("python_otel.py", &[&server.url, SECRET, &ok, &fail]);
    let report = report(&output);
    assert_ne!(report["search"]["isError"], true, "{report}");
    assert_eq!(report["failed"]["isError"], true, "{report}");

    let answer = call_with_header(
        &server.url,
        &format!("00-{TRACE_HEADER}-{PARENT_HEADER}-01"),
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // SIGTERM: the server stops serving and flushes the last spans and points.
    server.terminate();
    assert!(server.wait(Duration::from_secs(30)).success());

    let deadline = Instant::now() + Duration::from_secs(20);
    let lines = loop {
        let lines = received(&out);
        let complete = !spans(&lines, "tools/call notes.search", TRACE_FAIL).is_empty()
            && !spans(&lines, "tools/call notes.get", TRACE_HEADER).is_empty()
            && lines
                .iter()
                .any(|l| l["name"] == "mcp.server.operation.duration");
        if complete || Instant::now() > deadline {
            break lines;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(receiver);
    let dump = || {
        lines
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };

    // The SERVER span of the search: the client's trace, the client's span
    // as parent, the MCP attributes.
    let servers = spans(&lines, "tools/call notes.search", TRACE_OK);
    assert_eq!(
        servers.len(),
        1,
        "one server span for the search:\n{}",
        dump()
    );
    let server_span = servers[0];
    assert_eq!(server_span["parent_span_id"], PARENT_OK);
    assert_eq!(server_span["kind"], KIND_SERVER);
    assert_eq!(server_span["service"], "notes-under-test");
    let attributes = &server_span["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["gen_ai.tool.name"], "notes.search");
    assert_eq!(attributes["mcp.protocol.version"], "2026-07-28");
    assert_eq!(attributes["network.transport"], "tcp");
    assert!(
        attributes["jsonrpc.request.id"]
            .as_str()
            .is_some_and(|id| !id.is_empty()),
        "{attributes}"
    );
    assert!(attributes.get("error.type").is_none(), "{attributes}");

    // Its child: the dispatch span.
    let dispatch = spans(&lines, "execute_tool notes.search", TRACE_OK);
    assert_eq!(dispatch.len(), 1, "{}", dump());
    assert_eq!(dispatch[0]["parent_span_id"], server_span["span_id"]);
    assert_eq!(dispatch[0]["kind"], KIND_INTERNAL);
    assert_eq!(
        dispatch[0]["attributes"]["gen_ai.tool.name"],
        "notes.search"
    );
    assert_eq!(dispatch[0]["attributes"]["gonk.outcome"], "ok");

    // The create call shares the trace with its own pair of spans.
    assert_eq!(spans(&lines, "tools/call notes.create", TRACE_OK).len(), 1);

    // The failing call: `tool_error` on the server span (an isError
    // result), the error code on the dispatch span, both with ERROR status.
    let failed = spans(&lines, "tools/call notes.search", TRACE_FAIL);
    assert_eq!(failed.len(), 1, "{}", dump());
    assert_eq!(failed[0]["parent_span_id"], PARENT_FAIL);
    assert_eq!(failed[0]["attributes"]["error.type"], "tool_error");
    assert_eq!(failed[0]["status"], STATUS_ERROR);
    let failed_dispatch = spans(&lines, "execute_tool notes.search", TRACE_FAIL);
    assert_eq!(failed_dispatch.len(), 1, "{}", dump());
    assert_eq!(failed_dispatch[0]["parent_span_id"], failed[0]["span_id"]);
    assert_eq!(
        failed_dispatch[0]["attributes"]["error.type"],
        "INVALID_INPUT"
    );
    assert_eq!(failed_dispatch[0]["attributes"]["gonk.outcome"], "error");
    assert_eq!(failed_dispatch[0]["status"], STATUS_ERROR);

    // A traceparent HTTP header parents the span when `_meta` has none.
    let by_header = spans(&lines, "tools/call notes.get", TRACE_HEADER);
    assert_eq!(by_header.len(), 1, "{}", dump());
    assert_eq!(by_header[0]["parent_span_id"], PARENT_HEADER);

    // The metrics: the MCP operation duration and the tool-call duration
    // (fed by the registry's metrics sink), by tool and outcome.
    let point = |name: &str, tool: &str, error: Option<&str>| {
        lines.iter().any(|l| {
            l["signal"] == "metric"
                && l["name"] == name
                && l["unit"] == "s"
                && l["attributes"]["gen_ai.tool.name"] == tool
                && l["count"].as_u64().is_some_and(|c| c > 0)
                && match error {
                    Some(error) => l["attributes"]["error.type"] == error,
                    None => l["attributes"].get("error.type").is_none(),
                }
        })
    };
    assert!(
        point("mcp.server.operation.duration", "notes.search", None),
        "{}",
        dump()
    );
    assert!(
        point(
            "mcp.server.operation.duration",
            "notes.search",
            Some("tool_error")
        ),
        "{}",
        dump()
    );
    assert!(
        point("gonk.tool.call.duration", "notes.search", None),
        "{}",
        dump()
    );
    assert!(
        point(
            "gonk.tool.call.duration",
            "notes.search",
            Some("INVALID_INPUT")
        ),
        "{}",
        dump()
    );

    // The secret was input: it is in no attribute, event or resource.
    let all = dump();
    assert!(
        !all.contains(SECRET),
        "the secret leaked into telemetry:\n{all}"
    );
}

/// `Span.SpanKind` CLIENT.
const KIND_CLIENT: i64 = 3;

#[test]
fn an_mcp_client_carries_its_trace_into_the_server() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = dir.path().join("otlp.jsonl");
    let db = dir.path().join("notes.db").display().to_string();
    let receiver = Receiver::start(&out);
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);

    let mut command = notes_command();
    command
        .args(["--db", &db, "serve", "--port", "0"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    let mut server = ServerProcess::start(command);

    // Another process: McpClient inside a root span, exporting its own spans.
    let client = Command::new(gonk_tools_tests::workspace::bin("otel-client"))
        .arg(&server.url)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .stdin(Stdio::null())
        .output()
        .expect("otel-client runs");
    let stderr = String::from_utf8_lossy(&client.stderr);
    assert!(client.status.success(), "otel-client failed:\n{stderr}");
    let trace = String::from_utf8_lossy(&client.stdout).trim().to_owned();
    assert_eq!(trace.len(), 32, "a trace id: {trace:?} ({stderr})");

    server.terminate();
    assert!(server.wait(Duration::from_secs(30)).success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let lines = loop {
        let lines = received(&out);
        let server_span = spans(&lines, "tools/call notes.search", &trace)
            .iter()
            .any(|s| s["kind"] == KIND_SERVER);
        if server_span || Instant::now() > deadline {
            break lines;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(receiver);

    let in_trace = spans(&lines, "tools/call notes.search", &trace);
    let client_span = in_trace
        .iter()
        .find(|s| s["kind"] == KIND_CLIENT)
        .unwrap_or_else(|| panic!("the client's span: {in_trace:?}"));
    assert_eq!(client_span["service"], "otel-client");
    let server_span = in_trace
        .iter()
        .find(|s| s["kind"] == KIND_SERVER)
        .unwrap_or_else(|| panic!("the server's span in the client's trace: {in_trace:?}"));
    assert_eq!(server_span["service"], "notes");
    assert_eq!(server_span["parent_span_id"], client_span["span_id"]);
    let dispatch = spans(&lines, "execute_tool notes.search", &trace);
    assert_eq!(dispatch.len(), 1, "{lines:?}");
    assert_eq!(dispatch[0]["parent_span_id"], server_span["span_id"]);
}
