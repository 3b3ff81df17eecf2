//! Hostile requests of the stateless era (`2026-07-28`) to the real `notes`
//! server. Over HTTP: a `Mcp-Method` / `Mcp-Name` / `MCP-Protocol-Version`
//! header that does not match the body is `400` + `-32020`, a `_meta`
//! missing a required field (or malformed) is `400` + `-32602`, a version
//! the server does not speak is `400` + `-32022` naming the ones it does,
//! and a method the era removed is `404` + `-32601` — each answer a
//! JSON-RPC error echoing the request's id, none reaching the tool. Over
//! stdio the same bodies get the same codes. After every case the server
//! still answers a good stateless `tools/call`, and at the end a 2025
//! client still gets its `initialize` session.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use crate::support::raw_http::{exchange, Answer, Session};
use gonk_tools_tests::process::{wait_with_bound, ServerProcess};
use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

const STATELESS: &str = "2026-07-28";
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

const HEADER_MISMATCH: i64 = -32020;
const UNSUPPORTED_VERSION: i64 = -32022;
const INVALID_PARAMS: i64 = -32602;
const METHOD_NOT_FOUND: i64 = -32601;

/// A complete stateless-era `_meta`.
fn meta() -> Value {
    json!({ PROTOCOL_VERSION: STATELESS, CLIENT_CAPABILITIES: {} })
}

/// A request body; `meta` goes into `params._meta` unless it is `null`.
fn request(id: Value, method: &str, mut params: Value, meta: Value) -> Value {
    if !meta.is_null() {
        params["_meta"] = meta;
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// A `notes.create` whose title names the case, so a refused call that
/// ran anyway would leave a note behind.
fn create(id: Value, case: &str, meta: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({ "name": "notes.create", "arguments": { "title": format!("hostile {case}") } }),
        meta,
    )
}

/// One hostile request and what it is owed.
struct Case {
    name: &'static str,
    /// Header lines besides Host, Accept, Content-Type, Content-Length.
    headers: Vec<String>,
    body: Value,
    status: u16,
    code: i64,
}

/// The headers of a stateless request: version, method and (for a call) name.
fn headers(version: &str, method: &str, name: Option<&str>) -> Vec<String> {
    let mut lines = vec![
        format!("MCP-Protocol-Version: {version}"),
        format!("Mcp-Method: {method}"),
    ];
    if let Some(name) = name {
        lines.push(format!("Mcp-Name: {name}"));
    }
    lines
}

fn call_headers() -> Vec<String> {
    headers(STATELESS, "tools/call", Some("notes.create"))
}

fn without(lines: Vec<String>, prefix: &str) -> Vec<String> {
    lines
        .into_iter()
        .filter(|l| !l.to_ascii_lowercase().starts_with(prefix))
        .collect()
}

fn http_cases() -> Vec<Case> {
    let mut n = 0;
    let mut id = || {
        n += 1;
        json!(format!("hostile-{n}"))
    };
    vec![
        Case {
            name: "Mcp-Method names another method than the body",
            headers: headers(STATELESS, "tools/list", Some("notes.create")),
            body: create(id(), "method", meta()),
            status: 400,
            code: HEADER_MISMATCH,
        },
        Case {
            name: "Mcp-Method in other letter case",
            headers: headers(STATELESS, "TOOLS/CALL", Some("notes.create")),
            body: create(id(), "method case", meta()),
            status: 400,
            code: HEADER_MISMATCH,
        },
        Case {
            name: "two Mcp-Method headers that disagree",
            headers: {
                let mut lines = call_headers();
                lines.push("Mcp-Method: tools/list".to_owned());
                lines
            },
            body: create(id(), "two methods", meta()),
            status: 400,
            code: HEADER_MISMATCH,
        },
        Case {
            name: "no Mcp-Method header",
            headers: without(call_headers(), "mcp-method:"),
            body: create(id(), "no method", meta()),
            status: 400,
            code: HEADER_MISMATCH,
        },
        Case {
            name: "Mcp-Name names another tool than the body",
            headers: headers(STATELESS, "tools/call", Some("notes.search")),
            body: create(id(), "name", meta()),
            status: 400,
            code: HEADER_MISMATCH,
        },
        Case {
            name: "no Mcp-Name header on a call",
            headers: headers(STATELESS, "tools/call", None),
            body: create(id(), "no name", meta()),
            status: 400,
            code: HEADER_MISMATCH,
        },
        Case {
            name: "MCP-Protocol-Version header tampered to a 2025 revision",
            headers: headers("2025-11-25", "tools/call", Some("notes.create")),
            body: create(id(), "version header", meta()),
            status: 400,
            code: HEADER_MISMATCH,
        },
        Case {
            name: "_meta names a version, no MCP-Protocol-Version header",
            headers: without(call_headers(), "mcp-protocol-version:"),
            body: create(id(), "no version header", meta()),
            status: 400,
            code: HEADER_MISMATCH,
        },
        Case {
            name: "no _meta",
            headers: call_headers(),
            body: create(id(), "no meta", Value::Null),
            status: 400,
            code: INVALID_PARAMS,
        },
        Case {
            name: "_meta without protocolVersion",
            headers: call_headers(),
            body: create(id(), "no version", json!({ CLIENT_CAPABILITIES: {} })),
            status: 400,
            code: INVALID_PARAMS,
        },
        Case {
            name: "_meta without clientCapabilities",
            headers: call_headers(),
            body: create(
                id(),
                "no capabilities",
                json!({ PROTOCOL_VERSION: STATELESS }),
            ),
            status: 400,
            code: INVALID_PARAMS,
        },
        Case {
            name: "protocolVersion not a string",
            headers: call_headers(),
            body: create(
                id(),
                "numeric version",
                json!({ PROTOCOL_VERSION: 20260728, CLIENT_CAPABILITIES: {} }),
            ),
            status: 400,
            code: INVALID_PARAMS,
        },
        Case {
            name: "clientCapabilities not an object",
            headers: call_headers(),
            body: create(
                id(),
                "capabilities string",
                json!({ PROTOCOL_VERSION: STATELESS, CLIENT_CAPABILITIES: "all" }),
            ),
            status: 400,
            code: INVALID_PARAMS,
        },
        Case {
            name: "_meta not an object",
            headers: call_headers(),
            body: create(id(), "meta string", json!("2026-07-28")),
            status: 400,
            code: INVALID_PARAMS,
        },
        Case {
            name: "server/discover without _meta or headers",
            headers: vec![],
            body: request(id(), "server/discover", json!({}), Value::Null),
            status: 400,
            code: INVALID_PARAMS,
        },
        Case {
            name: "server/discover without _meta",
            headers: headers(STATELESS, "server/discover", None),
            body: request(id(), "server/discover", json!({}), Value::Null),
            status: 400,
            code: INVALID_PARAMS,
        },
        Case {
            name: "an unknown version (v999)",
            headers: headers("v999", "tools/call", Some("notes.create")),
            body: create(
                id(),
                "v999",
                json!({ PROTOCOL_VERSION: "v999", CLIENT_CAPABILITIES: {} }),
            ),
            status: 400,
            code: UNSUPPORTED_VERSION,
        },
        Case {
            name: "a later version the server does not speak",
            headers: headers("2099-01-01", "tools/call", Some("notes.create")),
            body: create(
                id(),
                "2099",
                json!({ PROTOCOL_VERSION: "2099-01-01", CLIENT_CAPABILITIES: {} }),
            ),
            status: 400,
            code: UNSUPPORTED_VERSION,
        },
        Case {
            name: "initialize in the stateless era",
            headers: headers(STATELESS, "initialize", None),
            body: request(id(), "initialize", json!({}), meta()),
            status: 404,
            code: METHOD_NOT_FOUND,
        },
        Case {
            name: "ping in the stateless era",
            headers: headers(STATELESS, "ping", None),
            body: request(id(), "ping", json!({}), meta()),
            status: 404,
            code: METHOD_NOT_FOUND,
        },
    ]
}

/// The endpoint of a server URL: address, path, authority.
fn endpoint(url: &str) -> (SocketAddr, String, String) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    (
        authority.parse().expect("an IP:port URL"),
        path.to_owned(),
        authority.to_owned(),
    )
}

/// POSTs `body` with exactly the MCP headers in `headers` (the raw helper
/// adds none, so a missing or doubled header is sent as written).
fn post(url: &str, headers: &[String], body: &Value) -> Answer {
    let (addr, path, host) = endpoint(url);
    let body = body.to_string();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}",
        body.len()
    );
    for line in headers {
        head.push_str("\r\n");
        head.push_str(line);
    }
    exchange(addr, &head, body.as_bytes())
}

/// A stateless `tools/call` of `tool`; its JSON-RPC answer.
fn stateless_call(url: &str, id: &str, tool: &str, arguments: Value) -> Value {
    let body = request(
        json!(id),
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
        meta(),
    );
    let answer = post(url, &headers(STATELESS, "tools/call", Some(tool)), &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let message = answer.message();
    assert_eq!(message["id"], id, "{message}");
    message
}

/// Checks a JSON-RPC error answer: status, code, the request's id, a
/// message, and no result.
fn assert_error(name: &str, answer: &Answer, request: &Value, status: u16, code: i64) -> Value {
    let message: Value = serde_json::from_slice(&answer.body)
        .unwrap_or_else(|e| panic!("{name}: not a JSON-RPC answer ({e}): {}", answer.text()));
    assert_eq!(
        (answer.status, &message["error"]["code"]),
        (status, &json!(code)),
        "{name}: {message}"
    );
    assert_eq!(message["jsonrpc"], "2.0", "{name}: {message}");
    assert_eq!(message["id"], request["id"], "{name}: {message}");
    assert!(message.get("result").is_none(), "{name}: {message}");
    assert!(
        message["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{name}: {message}"
    );
    message
}

fn http_server() -> (tempfile::TempDir, ServerProcess) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("notes.db").display().to_string();
    let mut command = notes_command();
    command.args(["--db", &db, "serve", "--port", "0", "--allow-writes"]);
    (dir, ServerProcess::start(command))
}

#[test]
fn http_every_hostile_request_gets_its_status_and_code_and_the_server_keeps_serving() {
    let (_dir, mut server) = http_server();
    let url = server.url.clone();
    for (n, case) in http_cases().iter().enumerate() {
        let answer = post(&url, &case.headers, &case.body);
        let error = assert_error(case.name, &answer, &case.body, case.status, case.code);
        if case.code == UNSUPPORTED_VERSION {
            let data = &error["error"]["data"];
            assert_eq!(
                data["requested"], case.body["params"]["_meta"][PROTOCOL_VERSION],
                "{}: {error}",
                case.name
            );
            let supported = data["supported"].to_string();
            for version in [STATELESS, "2025-11-25", "2025-06-18"] {
                assert!(supported.contains(version), "{}: {error}", case.name);
            }
        }
        let good = stateless_call(
            &url,
            &format!("good-{n}"),
            "notes.search",
            json!({"query": "x"}),
        );
        assert_eq!(
            good["result"]["isError"], false,
            "after {}: {good}",
            case.name
        );
    }

    // None of the refused calls reached notes.create.
    let found = stateless_call(&url, "search", "notes.search", json!({"query": "hostile"}));
    assert_eq!(
        found["result"]["structuredContent"]["hits"],
        json!([]),
        "{found}"
    );

    // The stateless era still runs tools, and a 2025 client still gets a session.
    let created = stateless_call(&url, "create", "notes.create", json!({"title": "after"}));
    assert_eq!(
        created["result"]["structuredContent"]["title"], "after",
        "{created}"
    );
    let mut session = Session::open(&url, &[]);
    session.call_succeeds(
        "notes.search",
        json!({"query": "after"}),
        "the hostile requests",
    );
    assert!(server.is_running());
}

#[test]
fn http_logging_set_level_is_a_removed_method_in_the_stateless_era() {
    let (_dir, mut server) = http_server();
    let body = request(
        json!(7),
        "logging/setLevel",
        json!({"level": "debug"}),
        meta(),
    );
    let answer = post(
        &server.url,
        &headers(STATELESS, "logging/setLevel", None),
        &body,
    );
    assert_error("logging/setLevel", &answer, &body, 404, METHOD_NOT_FOUND);
    assert!(server.is_running());
}

/// `notes mcp` with raw lines, started without any handshake.
struct Lines {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Lines {
    fn start() -> Lines {
        let mut child = notes_command()
            .args(["--db", ":memory:", "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("notes mcp starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Lines {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("notes reads stdin");
        stdin.flush().unwrap();
    }

    /// The next answer (notifications skipped); a closed stdout fails the
    /// test instead of hanging it.
    fn answer(&mut self) -> Value {
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).expect("read stdout");
            assert!(read > 0, "notes closed stdout instead of answering");
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Sends `request`; returns its answer, which must carry its id.
    fn exchange(&mut self, request: &Value) -> Value {
        self.send(request);
        let answer = self.answer();
        assert_eq!(answer["id"], request["id"], "{answer}");
        answer
    }

    fn call_succeeds(&mut self, id: &str, after: &str) {
        let call = request(
            json!(id),
            "tools/call",
            json!({"name": "notes.search", "arguments": {"query": "x"}}),
            meta(),
        );
        let answer = self.exchange(&call);
        assert_eq!(
            answer["result"]["isError"], false,
            "after {after}: {answer}"
        );
    }
}

/// The bodies of the HTTP cases whose codes do not depend on headers.
fn stdio_cases() -> Vec<(&'static str, Value, i64)> {
    http_cases()
        .into_iter()
        .filter(|case| case.code != HEADER_MISMATCH && case.code != METHOD_NOT_FOUND)
        .map(|case| (case.name, case.body, case.code))
        .collect()
}

#[test]
fn stdio_bad_meta_and_unknown_versions_get_their_codes_before_and_after_the_first_good_request() {
    let mut lines = Lines::start();
    // Before any good request no era is chosen yet; after the first one
    // the connection speaks the stateless era. Both must answer the same.
    for round in ["before", "after"] {
        for (name, body, code) in stdio_cases() {
            let answer = lines.exchange(&body);
            assert_eq!(answer["error"]["code"], code, "{round}: {name}: {answer}");
            if code == UNSUPPORTED_VERSION {
                let supported = answer["error"]["data"]["supported"].to_string();
                assert!(supported.contains(STATELESS), "{name}: {answer}");
            }
        }
        lines.call_succeeds(&format!("good-{round}"), round);
    }
    // Nothing the refused calls asked for was created.
    let found = lines.exchange(&request(
        json!("search"),
        "tools/call",
        json!({"name": "notes.search", "arguments": {"query": "hostile"}}),
        meta(),
    ));
    assert_eq!(
        found["result"]["structuredContent"]["hits"],
        json!([]),
        "{found}"
    );
    lines.stdin = None;
    let status = wait_with_bound(&mut lines.child, Duration::from_secs(60));
    assert!(status.success(), "{status}");
}

#[test]
fn stdio_removed_methods_are_not_found_as_the_first_request_and_after_it() {
    // Every wrong answer is collected, so one run shows them all.
    let mut wrong = Vec::new();
    for (method, params) in [
        ("initialize", json!({})),
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "debug"})),
    ] {
        let mut lines = Lines::start();
        for when in ["first", "after a good request"] {
            let answer = lines.exchange(&request(json!(when), method, params.clone(), meta()));
            if answer["error"]["code"] != METHOD_NOT_FOUND {
                wrong.push(format!("{method} ({when}): {answer}"));
            }
            lines.call_succeeds(&format!("good {when}"), method);
        }
        lines.stdin = None;
        let status = wait_with_bound(&mut lines.child, Duration::from_secs(60));
        assert!(status.success(), "{status}");
    }
    assert!(
        wrong.is_empty(),
        "removed methods served instead of -32601:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn stdio_a_2025_session_answers_stateless_shaped_lines_with_their_codes() {
    let mut lines = Lines::start();
    let init = lines.exchange(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    lines.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let session_call = |id: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "notes.search", "arguments": {"query": "x"}}})
    };
    for (name, body, code) in stdio_cases() {
        // Only a `_meta` that names a version (or is not an object) makes a
        // request stateless-shaped; without one it is an ordinary session
        // request here, and is served.
        let meta = &body["params"]["_meta"];
        if !(meta[PROTOCOL_VERSION].is_string() || meta.is_string()) {
            continue;
        }
        let answer = lines.exchange(&body);
        assert_eq!(answer["error"]["code"], code, "{name}: {answer}");
        let after = lines.exchange(&session_call(&format!("after {name}")));
        assert_eq!(after["result"]["isError"], false, "after {name}: {after}");
    }
    lines.stdin = None;
    let status = wait_with_bound(&mut lines.child, Duration::from_secs(60));
    assert!(status.success(), "{status}");
}
