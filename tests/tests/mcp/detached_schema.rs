//! A detached tool's answer agrees with the output schema it advertises,
//! checked by the clients that enforce it: the Python SDK (`mcp` 2.x, in a
//! 2025 session and in the stateless 2026 era) and the TypeScript SDKs
//! (1.x, 2025; 2.x, 2026) validate `structuredContent` against the listed
//! `outputSchema` and raise on a mismatch. `notes.reindex` and
//! `notes.export_file` called without `wait` answer a job handle the
//! clients accept and poll with `jobs.result`; errors of tools with an
//! output schema, a timeout and the `jobs.*` tools pass the same check.
//! The Python 2025 session also ends without the SDK's "Session
//! termination failed" warning (its `DELETE` answered 204).

use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::{run_node, run_python};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_command;
use serde_json::Value;

/// `notes serve` (the testbed: the diagnostic tools too) with the write
/// tools, working in `dir` (where `notes.export_file` writes).
fn server(dir: &std::path::Path) -> ServerProcess {
    let mut command = notes_command();
    command
        .current_dir(dir)
        .args(["--db", "notes.db", "serve", "--port", "0", "--allow-writes"]);
    ServerProcess::start(command)
}

fn call<'a>(report: &'a Value, name: &str) -> &'a Value {
    let call = &report["calls"][name];
    assert!(
        call.get("raised").is_none(),
        "the client refused the answer of {name}: {}\n{report}",
        call["raised"]
    );
    let result = &call["result"];
    assert!(result.is_object(), "no result for {name}: {report}");
    result
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// What every client run must show, whatever the era.
fn check(report: &Value) {
    // Without wait: a job handle, accepted; jobs.result gives the result.
    for (name, key, value) in [
        ("notes.reindex", "notes", Value::from(2)),
        ("notes.export_file", "count", Value::from(2)),
    ] {
        let launched = call(report, name);
        assert!(!is_error(launched), "{name}: {launched}");
        let handle = &launched["structuredContent"];
        assert_eq!(handle["kind"], name, "{handle}");
        assert!(
            handle["jobId"]
                .as_str()
                .is_some_and(|id| id.starts_with("job-")),
            "{handle}"
        );
        let message = handle["message"].as_str().unwrap();
        assert!(message.contains("jobs.result"), "{message}");
        let status = call(report, &format!("{name} jobs.status"));
        assert!(!is_error(status), "{status}");
        let result = call(report, &format!("{name} jobs.result"));
        assert!(!is_error(result), "{name}: {result}");
        assert_eq!(result["structuredContent"][key], value, "{name}: {result}");
    }

    // Waited: the tool's own result, validated against the first branch.
    let waited = call(report, "notes.reindex wait");
    assert!(!is_error(waited), "{waited}");
    assert_eq!(waited["structuredContent"]["notes"], 2);

    // Errors of tools with an output schema: isError, no structuredContent
    // for the client to refuse.
    for name in ["notes.get missing", "diag.timeout"] {
        let error = call(report, name);
        assert!(is_error(error), "{name}: {error}");
        assert!(error.get("structuredContent").is_none(), "{name}: {error}");
    }
    let timeout = call(report, "diag.timeout");
    let text = timeout["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Error [TIMEOUT]: Tool diag.timeout timed out"),
        "{text}"
    );
    let listed = call(report, "jobs.list");
    assert!(!is_error(listed), "{listed}");

    // Both detached tools advertise their result or a job handle.
    for name in ["notes.reindex", "notes.export_file"] {
        let schema = &report["output_schemas"][name];
        let branches = schema["anyOf"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {schema}"));
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        assert_eq!(branches.len(), 2, "{name}: {schema}");
        assert_eq!(
            branches[1]["required"],
            serde_json::json!(["jobId", "kind", "message"]),
            "{name}: {schema}"
        );
    }
}

#[test]
fn python_sdk_accepts_detached_answers_in_a_2025_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = server(dir.path());
    let report = report(&run_python("python_detached.py", &["legacy", &server.url]));
    assert!(
        report["protocol_version"].as_str().unwrap() < "2026-07-28",
        "{report}"
    );
    check(&report);
    check_python_only(&report, dir.path());
    // The session's DELETE was answered 200 or 204: no warning.
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        !warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("Session termination failed")),
        "{warnings:?}"
    );
    assert!(server.is_running());
}

#[test]
fn python_sdk_accepts_detached_answers_in_the_2026_era() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = server(dir.path());
    let report = report(&run_python("python_detached.py", &["auto", &server.url]));
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
    check(&report);
    check_python_only(&report, dir.path());
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    assert!(server.is_running());
}

/// The Python run also starts a job that fails and calls the `jobs.*`
/// tools with an unknown id.
fn check_python_only(report: &Value, dir: &std::path::Path) {
    let failing = call(report, "notes.export_file absolute");
    assert!(!is_error(failing), "the launch succeeds: {failing}");
    let failed = call(report, "notes.export_file absolute jobs.result");
    assert!(is_error(failed), "{failed}");
    let text = failed["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("give a path relative to the working directory"),
        "{text}"
    );
    let invalid = call(report, "notes.export_file invalid");
    assert!(is_error(invalid), "{invalid}");
    for name in [
        "jobs.status missing",
        "jobs.cancel missing",
        "jobs.result missing",
    ] {
        let missing = call(report, name);
        assert!(is_error(missing), "{name}: {missing}");
    }
    // The exports were written where the server works.
    let written = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("export-"))
        .count();
    assert_eq!(written, 1, "one export per run");
}

#[test]
fn typescript_sdk_1_accepts_detached_answers_in_a_2025_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = server(dir.path());
    let report = report(&run_node("ts_detached.mjs", &["v1", &server.url]));
    check(&report);
    assert!(server.is_running());
}

#[test]
fn typescript_sdk_2_accepts_detached_answers_in_the_2026_era() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = server(dir.path());
    let report = report(&run_node("ts_detached.mjs", &["v2-auto", &server.url]));
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
    check(&report);
    assert!(server.is_running());
}
