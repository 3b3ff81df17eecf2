//! The real `notes` binary served over MCP and driven by independent
//! clients installed from the package registries: the Python SDK (`mcp`,
//! PyPI) and the TypeScript SDK (`@modelcontextprotocol/sdk`, npm), each
//! over stdio and over streamable HTTP.
//!
//! The client scripts (`tests/clients/`) only observe and print a JSON
//! report; the assertions are here. Each run covers listing and calling,
//! `structuredContent` and the `isError` mapping, schema enforcement (a
//! `minLength` violation is an `INVALID_INPUT` naming `/query`), progress
//! notifications from `notes.export`, and cancellation: a cancelled
//! `diag.sleep` handler is dropped in the server (its marker file says
//! `dropped`) and the session keeps working.

use std::path::Path;
use std::time::Duration;

use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::{run_node, run_python};
use gonk_tools_tests::process::{wait_for_file, ServerProcess};
use gonk_tools_tests::workspace::{bin, notes_command};
use serde_json::{json, Value};

/// Which client produced a report (their wire dumps differ slightly).
#[derive(Clone, Copy, PartialEq)]
enum Sdk {
    Python,
    TypeScript,
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn tool<'a>(report: &'a Value, name: &str) -> Option<&'a Value> {
    report["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .find(|t| t["name"] == name)
}

fn check(report: &Value, marker: &Path, sdk: Sdk) {
    // The Python SDK 2.x speaks the stateless era first; the TypeScript SDK
    // 1.x only the 2025 session era.
    if sdk == Sdk::Python {
        assert_eq!(report["protocol_version"], "2026-07-28");
    }
    // The server's own name and version (`server/discover` or `initialize`).
    assert_eq!(report["server"]["name"], "notes");
    assert_eq!(report["server"]["version"], env!("CARGO_PKG_VERSION"));

    // tools/list: the six notes tools, the diagnostic ones, never the duplex one.
    for name in [
        "notes.create",
        "notes.get",
        "notes.search",
        "notes.rename",
        "notes.archive",
        "notes.export",
        "diag.sleep",
    ] {
        assert!(tool(report, name).is_some(), "{name} is listed");
    }
    assert!(
        tool(report, "diag.duplex").is_none(),
        "duplex tools are never listed"
    );
    let search = tool(report, "notes.search").unwrap();
    assert_eq!(
        search["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(search["inputSchema"]["type"], "object");
    assert_eq!(search["inputSchema"]["properties"]["query"]["minLength"], 1);
    assert_eq!(search["outputSchema"]["type"], "object");

    // tools/call: display → content, object data → structuredContent.
    let created = &report["create"];
    assert_ne!(created["isError"], true);
    assert_eq!(text(created), "Created note 1: Release checklist");
    assert_eq!(created["structuredContent"]["id"], 1);
    assert_eq!(created["structuredContent"]["title"], "Release checklist");
    assert_eq!(created["structuredContent"]["tags"], json!(["release"]));
    let found = &report["search"];
    assert_eq!(found["structuredContent"]["query"], "release");
    assert_eq!(
        found["structuredContent"]["hits"][0]["title"],
        "Release checklist"
    );

    // Schema enforcement: minLength 1 → INVALID_INPUT naming the field.
    let empty = &report["search_empty"];
    assert_eq!(empty["isError"], true);
    assert!(
        text(empty).starts_with("Error [INVALID_INPUT]: Input validation failed"),
        "{}",
        text(empty)
    );
    let details = empty["content"][1]["text"].as_str().unwrap_or_default();
    assert!(details.contains("/query"), "{empty}");
    // notes.search advertises an output schema, so the error object rides in
    // _meta (clients validate any structuredContent against the schema).
    assert!(empty.get("structuredContent").is_none());
    let error = &empty["_meta"]["gonk-tools/error"];
    assert_eq!(error["code"], "INVALID_INPUT");
    assert_eq!(error["details"][0]["path"], "/query");

    // A tool's own error code.
    assert_eq!(report["get_missing"]["isError"], true);
    assert!(text(&report["get_missing"]).starts_with("Error [NOT_FOUND]: No note with id 999"));
    // Its details follow the message as a text item of their own.
    let content = report["get_missing"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "{content:?}");
    assert!(
        !content[0]["text"].as_str().unwrap().contains('{'),
        "{content:?}"
    );
    assert_eq!(content[1]["text"], "{\n  \"id\": 999\n}", "{content:?}");

    // Missing and duplex tools give the same answer.
    for (key, name) in [("unknown", "no.such.tool"), ("duplex", "diag.duplex")] {
        let result = &report[key];
        assert_eq!(result["isError"], true);
        assert_eq!(
            text(result),
            format!("Error [TOOL_NOT_FOUND]: Unknown tool: {name}")
        );
        assert_eq!(
            result["structuredContent"],
            json!({"error": {"code": "TOOL_NOT_FOUND", "message": format!("Unknown tool: {name}")}})
        );
    }

    // Progress: notes.export of two notes reports 50 % then 100 %.
    assert_eq!(report["export"]["structuredContent"]["count"], 2);
    let progress: Vec<(f64, f64)> = report["progress"]
        .as_array()
        .expect("a progress array")
        .iter()
        .map(|p| {
            (
                p["progress"].as_f64().unwrap(),
                p["total"].as_f64().unwrap(),
            )
        })
        .collect();
    match sdk {
        Sdk::Python => assert_eq!(progress, [(50.0, 100.0), (100.0, 100.0)]),
        // The TypeScript SDK drops a progress notification that arrives in
        // the same read as the response (it removes the handler first), so
        // the last one may be missing: the first must be there.
        Sdk::TypeScript => {
            assert!(!progress.is_empty(), "no progress notification arrived");
            assert_eq!(progress[0], (50.0, 100.0));
            assert!(progress.windows(2).all(|w| w[0].0 <= w[1].0));
        }
    }

    // Cancellation: the handler logged that it started, the client
    // cancelled, the server dropped the handler, and the session still works.
    assert!(
        report.get("cancel_error").is_none() || report["cancel_error"].is_null(),
        "{}",
        report["cancel_error"]
    );
    let logs = report["cancel_logs"].to_string();
    assert!(logs.contains("sleeping for 60000 ms"), "{logs}");
    // A log line without meta is `{message}` too: every line parses alike.
    let sleeping = report["cancel_logs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l.to_string().contains("sleeping for"))
        .unwrap();
    assert_eq!(
        sleeping["data"],
        json!({"message": "sleeping for 60000 ms"}),
        "{sleeping}"
    );
    assert!(logs.contains("diag.sleep"), "{logs}");
    assert_eq!(
        wait_for_file(marker, Duration::from_secs(15)).as_deref(),
        Some("dropped"),
        "the cancelled handler was not dropped in the server"
    );
    let after = &report["after_cancel"];
    assert_ne!(after["isError"], true);
    assert_eq!(after["structuredContent"]["hits"][0]["id"], 1);
}

fn paths() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("notes.db").display().to_string();
    let marker = dir.path().join("marker").display().to_string();
    (dir, db, marker)
}

fn notes_path() -> String {
    bin("notes-testbed").display().to_string()
}

fn http_server(db: &str, extra: &[&str]) -> ServerProcess {
    let mut command = notes_command();
    command
        .args(["--db", db, "serve", "--port", "0", "--allow-writes"])
        .args(extra);
    ServerProcess::start(command)
}

#[test]
fn python_sdk_over_stdio() {
    let (_dir, db, marker) = paths();
    let output = run_python(
        "python_notes.py",
        &["stdio", &marker, &notes_path(), "--db", &db, "mcp"],
    );
    check(&report(&output), Path::new(&marker), Sdk::Python);
}

#[test]
fn python_sdk_over_http() {
    let (_dir, db, marker) = paths();
    let mut server = http_server(&db, &[]);
    let output = run_python("python_notes.py", &["http", &marker, &server.url]);
    check(&report(&output), Path::new(&marker), Sdk::Python);
    assert!(server.is_running());
}

#[test]
fn typescript_sdk_over_stdio() {
    let (_dir, db, marker) = paths();
    let output = run_node(
        "ts_notes.mjs",
        &["stdio", &marker, &notes_path(), "--db", &db, "mcp"],
    );
    check(&report(&output), Path::new(&marker), Sdk::TypeScript);
}

#[test]
fn typescript_sdk_over_http_with_an_api_key() {
    let (_dir, db, marker) = paths();
    let mut server = http_server(&db, &["--api-key", "k3y"]);
    let output = run_node("ts_notes.mjs", &["http", &marker, &server.url, "k3y"]);
    check(&report(&output), Path::new(&marker), Sdk::TypeScript);
    assert!(server.is_running());
}

#[test]
fn http_withholds_write_tools_unless_allowed() {
    let (_dir, db, _marker) = paths();
    let mut command = notes_command();
    command.args(["--db", &db, "serve", "--port", "0"]);
    let server = ServerProcess::start(command);
    let output = run_python("python_policy.py", &[&server.url]);
    let report = report(&output);
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for read in ["notes.get", "notes.search", "notes.export"] {
        assert!(names.contains(&read), "{read} is listed: {names:?}");
    }
    for write in [
        "notes.create",
        "notes.rename",
        "notes.archive",
        "notes.export_file",
        "notes.reindex",
    ] {
        assert!(!names.contains(&write), "{write} is withheld: {names:?}");
    }
    assert_eq!(report["create"]["isError"], true);
    assert_eq!(
        text(&report["create"]),
        "Error [TOOL_NOT_FOUND]: Unknown tool: notes.create"
    );
}
