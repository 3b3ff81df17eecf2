//! `--approval ask` with the real Python SDK (`mcp` 2.x) and an
//! elicitation callback, against `notes mcp` (stdio) and `notes serve`
//! (HTTP), in both eras: the write tool asks the client before it runs.
//! Accept → the note is created and the approval receipt records the
//! consent; decline → `APPROVAL_DENIED`, nothing written; a client without
//! elicitation → `APPROVAL_REQUIRED`, nothing written.
//!
//! In `2026-07-28` the question travels as `input_required` and the SDK's
//! retry carries the answer; on a 2025 session it is an
//! `elicitation/create` request. The script is
//! `tests/clients/python_approval.py`.

use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::{bin, notes_command};
use serde_json::Value;

#[derive(Clone, Copy)]
enum Era {
    /// `2026-07-28`, found through `server/discover`.
    Stateless,
    /// A 2025 `initialize` session.
    Session,
}

impl Era {
    fn mode(self) -> &'static str {
        match self {
            Era::Stateless => "auto",
            Era::Session => "legacy",
        }
    }

    fn version(self) -> &'static str {
        match self {
            Era::Stateless => "2026-07-28",
            Era::Session => "2025-11-25",
        }
    }
}

/// The approval receipts among `lines` (`notes: audit {…}` on stderr).
fn approval_receipts(lines: &str) -> Vec<Value> {
    lines
        .lines()
        .filter_map(|line| line.split("notes: audit ").nth(1))
        .filter_map(|json| serde_json::from_str::<Value>(json).ok())
        .filter(|receipt| receipt["kind"] == "approval" && receipt["toolName"] == "notes.create")
        .collect()
}

fn error_code(result: &Value) -> &str {
    result["_meta"]["gonk-tools/error"]["code"]
        .as_str()
        .unwrap_or_default()
}

fn hits(report: &Value) -> usize {
    report["search"]["structuredContent"]["hits"]
        .as_array()
        .map_or(0, Vec::len)
}

/// What every answer must come to, given the report and the receipts.
fn check(answer: &str, era: Era, report: &Value, receipts: &[Value]) {
    assert_eq!(report["protocol_version"], era.version(), "{report}");
    let create = &report["create"];
    let last = receipts.last().cloned().unwrap_or_default();
    match answer {
        "accept" => {
            assert_eq!(
                report["asked"].as_array().map(Vec::len),
                Some(1),
                "{report}"
            );
            let question = report["asked"][0]["message"].as_str().unwrap_or_default();
            assert!(question.contains("notes.create"), "{question}");
            assert_eq!(create["isError"], false, "{report}");
            assert_eq!(hits(report), 1, "the note was written: {report}");
            assert_eq!(last["outcome"], "approved", "{receipts:?}");
            assert_eq!(last["consent"]["answer"]["action"], "accept", "{last}");
            assert_eq!(
                last["consent"]["answer"]["content"]["approve"], true,
                "{last}"
            );
            assert!(last["consent"]["question"].is_string(), "{last}");
            assert!(last["consent"]["requestId"].is_string(), "{last}");
            assert_eq!(last["principalId"], "local:tester", "{last}");
        }
        "decline" => {
            assert_eq!(
                report["asked"].as_array().map(Vec::len),
                Some(1),
                "{report}"
            );
            assert_eq!(create["isError"], true, "{report}");
            assert_eq!(error_code(create), "APPROVAL_DENIED", "{report}");
            assert_eq!(hits(report), 0, "nothing was written: {report}");
            assert_eq!(last["outcome"], "denied", "{receipts:?}");
            assert_eq!(last["consent"]["answer"]["action"], "decline", "{last}");
        }
        // Not asked at all, or asked and never answered within the bound.
        "none" | "hang" => {
            let asked = usize::from(answer == "hang");
            assert_eq!(
                report["asked"].as_array().map(Vec::len),
                Some(asked),
                "{report}"
            );
            assert_eq!(create["isError"], true, "{report}");
            assert_eq!(error_code(create), "APPROVAL_REQUIRED", "{report}");
            assert_eq!(hits(report), 0, "nothing was written: {report}");
            assert_eq!(last["outcome"], "required", "{receipts:?}");
            assert!(last.get("consent").is_none(), "{last}");
        }
        other => unreachable!("no answer {other}"),
    }
}

fn over_stdio(era: Era, answer: &str) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("notes.db").display().to_string();
    let notes = bin("notes-testbed").display().to_string();
    let output = run_python(
        "python_approval.py",
        &[
            era.mode(),
            answer,
            "stdio",
            &notes,
            "--db",
            &db,
            "mcp",
            "--approval",
            "ask",
        ],
    );
    // The SDK passes the server's stderr (the receipts) through to its own.
    let receipts = approval_receipts(&String::from_utf8_lossy(&output.stderr));
    check(answer, era, &report(&output), &receipts);
}

fn over_http(era: Era, answer: &str) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("notes.db").display().to_string();
    let mut command = notes_command();
    command
        .env("USER", "tester")
        .args(["--db", &db, "serve", "--port", "0", "--approval", "ask"]);
    let mut server = ServerProcess::start(command);
    let output = run_python(
        "python_approval.py",
        &[era.mode(), answer, "http", &server.url],
    );
    let report = report(&output);
    let receipts = approval_receipts(&server.stderr_lines().join("\n"));
    check(answer, era, &report, &receipts);
    assert!(server.is_running());
}

#[test]
fn stdio_2026_asks_and_accept_writes_with_consent_recorded() {
    over_stdio(Era::Stateless, "accept");
}

#[test]
fn stdio_2026_decline_is_denied_and_writes_nothing() {
    over_stdio(Era::Stateless, "decline");
}

#[test]
fn stdio_2026_without_elicitation_is_approval_required() {
    over_stdio(Era::Stateless, "none");
}

#[test]
fn stdio_2025_asks_and_accept_writes_with_consent_recorded() {
    over_stdio(Era::Session, "accept");
}

#[test]
fn stdio_2025_decline_is_denied_and_writes_nothing() {
    over_stdio(Era::Session, "decline");
}

#[test]
fn stdio_2025_without_elicitation_is_approval_required() {
    over_stdio(Era::Session, "none");
}

#[test]
fn http_2026_asks_and_accept_writes_with_consent_recorded() {
    over_http(Era::Stateless, "accept");
}

#[test]
fn http_2026_decline_is_denied_and_writes_nothing() {
    over_http(Era::Stateless, "decline");
}

#[test]
fn http_2026_without_elicitation_is_approval_required() {
    over_http(Era::Stateless, "none");
}

#[test]
fn http_2025_asks_and_accept_writes_with_consent_recorded() {
    over_http(Era::Session, "accept");
}

#[test]
fn http_2025_decline_is_denied_and_writes_nothing() {
    over_http(Era::Session, "decline");
}

#[test]
fn http_2025_without_elicitation_is_approval_required() {
    over_http(Era::Session, "none");
}

#[test]
fn stdio_2025_an_unanswered_question_lapses_into_approval_required() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("notes.db").display().to_string();
    let notes = bin("notes-testbed").display().to_string();
    let args = [
        "legacy",
        "hang",
        "stdio",
        &notes,
        "--db",
        &db,
        "mcp",
        "--approval",
        "ask",
        "--ask-timeout",
        "1",
    ];
    let output = run_python("python_approval.py", &args);
    let receipts = approval_receipts(&String::from_utf8_lossy(&output.stderr));
    check("hang", Era::Session, &report(&output), &receipts);
}
