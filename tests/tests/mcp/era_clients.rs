//! Which MCP era each independent client negotiates with the real `notes`
//! server, over stdio and streamable HTTP, and that its calls work there:
//! the Python SDK 2.x (`mcp` on PyPI) and the TypeScript SDK 2.x
//! (`@modelcontextprotocol/client`) speak `2026-07-28` — no `initialize`,
//! no session, `_meta` and the `Mcp-*` headers on every request — and the
//! TypeScript SDK 1.x (`@modelcontextprotocol/sdk`), which knows only the
//! 2025 revisions, still gets its `initialize` session from the same
//! server.
//!
//! The TypeScript SDK 2.x speaks 2025 unless asked: its
//! `versionNegotiation` defaults to `legacy`, and `mode: "auto"` makes it
//! probe `server/discover` first. Both are run, so a change of its default
//! shows here.
//!
//! Each run lists the tools, creates a note and finds it, and gets the
//! `isError` result of `notes.get` for a missing id. The client scripts
//! (`tests/clients/python_era.py`, `tests/clients/ts_era.mjs`) print what
//! the client reported and what they saw on its connection; the assertions
//! are here.

use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::{run_node, run_python};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::{bin, notes_command};
use serde_json::{json, Value};

const STATELESS: &str = "2026-07-28";
/// The newest 2025 revision, which both TypeScript SDKs ask for in `initialize`.
const SESSION: &str = "2025-11-25";

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The calls every run makes, whatever the era.
fn check_calls(report: &Value) {
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for name in ["notes.create", "notes.get", "notes.search"] {
        assert!(tools.contains(&name), "{name} is listed: {tools:?}");
    }

    let created = &report["create"];
    assert_eq!(created["isError"], false, "{created}");
    assert_eq!(text(created), "Created note 1: Release checklist");
    assert_eq!(created["structuredContent"]["id"], 1);

    let found = &report["search"];
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(
        found["structuredContent"]["hits"][0]["title"], "Release checklist",
        "{found}"
    );

    let missing = &report["get_missing"];
    assert_eq!(missing["isError"], true, "{missing}");
    assert!(
        text(missing).starts_with("Error [NOT_FOUND]: No note with id 999"),
        "{missing}"
    );
}

/// The JSON-RPC messages a TypeScript run noted on its transport.
fn messages(report: &Value) -> &[Value] {
    report["messages"]
        .as_array()
        .expect("a messages array")
        .as_slice()
}

fn outgoing_requests(report: &Value) -> Vec<&Value> {
    messages(report)
        .iter()
        .filter(|m| m["direction"] == "out" && m.get("id").is_some())
        .collect()
}

/// A TypeScript run in the stateless era: the client says so, sent no
/// `initialize`, and stamped every request with the version.
fn check_ts_stateless(report: &Value) {
    assert_eq!(report["protocol_version"], STATELESS, "{report}");
    assert_eq!(report["era"], "modern", "{report}");
    let requests = outgoing_requests(report);
    assert!(requests.len() >= 4, "{requests:?}");
    for request in requests {
        assert_ne!(request["method"], "initialize", "{request}");
        assert_eq!(request["meta_version"], STATELESS, "{request}");
    }
    check_calls(report);
}

/// A TypeScript run in a 2025 session: an `initialize` asking for
/// [`SESSION`], answered with it, then requests without a version in `_meta`.
fn check_ts_session(report: &Value) {
    let messages = messages(report);
    assert_eq!(messages[0]["method"], "initialize", "{messages:?}");
    assert_eq!(messages[0]["initialize_version"], SESSION);
    let answer = messages
        .iter()
        .find(|m| m["direction"] == "in" && m["id"] == messages[0]["id"])
        .expect("initialize was answered");
    assert_eq!(answer["result_version"], SESSION, "{answer}");
    assert!(
        !messages
            .iter()
            .any(|m| m["method"] == "server/discover" || m.get("meta_version").is_some()),
        "{messages:?}"
    );
    check_calls(report);
}

/// The HTTP requests of a stateless run: each names its version and
/// method in headers, none carries a session, and the server opened none.
fn check_stateless_http(requests: &[Value], report: &Value) {
    assert!(!requests.is_empty(), "{report}");
    for request in requests {
        assert_eq!(request["mcp-protocol-version"], STATELESS, "{request}");
        assert!(request["mcp-method"].is_string(), "{request}");
        assert!(request.get("mcp-session-id").is_none(), "{request}");
    }
    assert_eq!(report["session_ids"], json!([]), "{report}");
}

/// The HTTP requests of a 2025 run: after `initialize`, every request
/// carries the session id the server issued and the negotiated version.
fn check_session_http(report: &Value) {
    let issued = report["session_ids"][0]
        .as_str()
        .expect("the server issued a session id");
    let requests = report["http"].as_array().expect("an http array");
    assert!(requests[0].get("mcp-session-id").is_none(), "{report}");
    for request in &requests[1..] {
        assert_eq!(request["mcp-session-id"], issued, "{request}");
        assert_eq!(request["mcp-protocol-version"], SESSION, "{request}");
    }
}

fn temp_db() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("notes.db").display().to_string();
    (dir, db)
}

fn notes_path() -> String {
    bin("notes-testbed").display().to_string()
}

fn http_server(db: &str) -> ServerProcess {
    let mut command = notes_command();
    command.args(["--db", db, "serve", "--port", "0", "--allow-writes"]);
    ServerProcess::start(command)
}

fn python_stateless(report: &Value) {
    assert_eq!(report["protocol_version"], STATELESS, "{report}");
    // Its version came from server/discover, not from an initialize result.
    assert_eq!(report["via"], "discover", "{report}");
    let versions = report["supported_versions"].to_string();
    assert!(versions.contains(STATELESS), "{versions}");
    assert!(versions.contains(SESSION), "{versions}");
    assert_eq!(report["server"]["name"], "notes");
    check_calls(report);
}

#[test]
fn python_sdk_2_speaks_2026_over_stdio() {
    let (_dir, db) = temp_db();
    let output = run_python(
        "python_era.py",
        &["stdio", &notes_path(), "--db", &db, "mcp"],
    );
    python_stateless(&report(&output));
}

#[test]
fn python_sdk_2_speaks_2026_over_http() {
    let (_dir, db) = temp_db();
    let mut server = http_server(&db);
    let output = run_python("python_era.py", &["http", &server.url]);
    let report = report(&output);
    python_stateless(&report);
    let requests: Vec<Value> = report["wire"]
        .as_array()
        .expect("a wire array")
        .iter()
        .map(|r| r["headers"].clone())
        .collect();
    check_stateless_http(&requests, &report);
    // On the wire: discover first, never initialize, and the body's
    // `_meta` names the version the header names.
    let wire = report["wire"].as_array().unwrap();
    assert_eq!(wire[0]["method"], "server/discover", "{report}");
    for request in wire {
        assert_ne!(request["method"], "initialize", "{request}");
        assert_eq!(
            request["meta"]["io.modelcontextprotocol/protocolVersion"], STATELESS,
            "{request}"
        );
        assert_eq!(request["headers"]["mcp-method"], request["method"]);
    }
    assert!(server.is_running());
}

#[test]
fn typescript_sdk_2_speaks_2026_over_stdio_when_negotiation_is_auto() {
    let (_dir, db) = temp_db();
    let output = run_node(
        "ts_era.mjs",
        &["v2-auto", "stdio", &notes_path(), "--db", &db, "mcp"],
    );
    // The SDK probes on a sibling process it starts from the same command,
    // so the connection's own transport carries only stateless requests.
    check_ts_stateless(&report(&output));
}

#[test]
fn typescript_sdk_2_speaks_2026_over_http_when_negotiation_is_auto() {
    let (_dir, db) = temp_db();
    let mut server = http_server(&db);
    let output = run_node("ts_era.mjs", &["v2-auto", "http", &server.url]);
    let report = report(&output);
    check_ts_stateless(&report);
    let first = &messages(&report)[0];
    assert_eq!(first["method"], "server/discover", "{report}");
    let answer = messages(&report)
        .iter()
        .find(|m| m["direction"] == "in" && m["id"] == first["id"])
        .expect("discover was answered");
    assert!(answer["supported_versions"].to_string().contains(STATELESS));
    check_stateless_http(report["http"].as_array().unwrap(), &report);
    assert!(server.is_running());
}

#[test]
fn typescript_sdk_2_speaks_2025_by_default() {
    let (_dir, db) = temp_db();
    let mut server = http_server(&db);
    let output = run_node("ts_era.mjs", &["v2", "http", &server.url]);
    let report = report(&output);
    assert_eq!(report["protocol_version"], SESSION, "{report}");
    assert_eq!(report["era"], "legacy", "{report}");
    check_ts_session(&report);
    check_session_http(&report);
    assert!(server.is_running());
}

#[test]
fn typescript_sdk_1_keeps_its_2025_session_over_stdio() {
    let (_dir, db) = temp_db();
    let output = run_node(
        "ts_era.mjs",
        &["v1", "stdio", &notes_path(), "--db", &db, "mcp"],
    );
    check_ts_session(&report(&output));
}

#[test]
fn typescript_sdk_1_keeps_its_2025_session_over_http() {
    let (_dir, db) = temp_db();
    let mut server = http_server(&db);
    let output = run_node("ts_era.mjs", &["v1", "http", &server.url]);
    let report = report(&output);
    check_ts_session(&report);
    check_session_http(&report);
    assert!(server.is_running());
}
