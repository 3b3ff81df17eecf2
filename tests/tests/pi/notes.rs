//! The notes example in a real Pi (`@mariozechner/pi-coding-agent`,
//! installed by `.ci/install-pi`), set up the way the README says:
//! `notes --db PATH pi-extension > notes.ts`, then `pi -e ./notes.ts`. A
//! scripted model calls the notes tools through the bridge (`notes pi`) and
//! the tests read what Pi handed back to the model.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use gonk_tools_tests::pi::{run_pi, turn, PiRun};
use gonk_tools_tests::workspace::bin;

/// `BINARY --db DB pi-extension > DIR/notes.ts`, for `notes` or
/// `notes-testbed` (`notes` plus the diagnostic tools).
fn notes_extension(binary: &str, dir: &Path, db: &Path) -> PathBuf {
    let output = Command::new(bin(binary))
        .arg("--db")
        .arg(db)
        .arg("pi-extension")
        .output()
        .expect("notes runs");
    assert!(output.status.success(), "{output:?}");
    let path = dir.join("notes.ts");
    std::fs::write(&path, &output.stdout).unwrap();
    path
}

fn session(binary: &str, turns: &[Value], abort_on: Option<&str>) -> PiRun {
    let dir = tempfile::tempdir().unwrap();
    let extension = notes_extension(binary, dir.path(), &dir.path().join("notes.db"));
    let run = run_pi(&extension, turns, abort_on, &[]);
    assert_eq!(run.code, Some(0), "Pi failed:\n{}", run.stderr);
    run
}

#[test]
fn a_scripted_pi_session_creates_searches_and_exports_notes() {
    let run = session(
        "notes",
        &[
            turn(&[(
                "notes_create",
                json!({"title": "Release checklist", "body": "- tag v1", "tags": ["release"]}),
            )]),
            turn(&[(
                "notes_create",
                json!({"title": "Rust ownership", "body": "Borrowing rules."}),
            )]),
            turn(&[("notes_search", json!({"query": "release", "limit": 5}))]),
            turn(&[("notes_export", json!({"format": "markdown"}))]),
            // 2^63: within the i64 range as JavaScript rounds it, so Pi's
            // validator lets it through; the registry refuses it.
            turn(&[("notes_get", json!({"id": 9_223_372_036_854_775_808_u64}))]),
        ],
        None,
    );
    let results = run.tool_results();
    let tools: Vec<&str> = results.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(
        tools,
        [
            "notes_create",
            "notes_create",
            "notes_search",
            "notes_export",
            "notes_get"
        ]
    );

    // Successes: the display is what the model reads, the data the details.
    let created = &results[0];
    assert!(!created.is_error, "{created:?}");
    assert_eq!(created.text(), "Created note 1: Release checklist");
    assert_eq!(created.details["id"], 1);
    assert_eq!(created.details["tags"], json!(["release"]));
    assert_eq!(results[1].text(), "Created note 2: Rust ownership");

    let search = &results[2];
    assert!(!search.is_error);
    assert_eq!(search.details["hits"][0]["title"], "Release checklist");
    assert_eq!(search.details["hits"].as_array().unwrap().len(), 1);
    assert!(
        search.text().contains("Release checklist"),
        "{}",
        search.text()
    );

    // notes.export streams progress: Pi's onUpdate sees each step.
    let progress: Vec<(Value, Value)> = run
        .updates_of("notes_export")
        .iter()
        .map(|u| {
            (
                u["details"]["percent"].clone(),
                u["content"][0]["text"].clone(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [
            (json!(50), json!("exported 1/2")),
            (json!(100), json!("exported 2/2")),
        ]
    );
    let export = &results[3];
    assert!(!export.is_error);
    assert_eq!(export.details["count"], 2);
    assert!(
        export.text().starts_with("# Release checklist"),
        "{}",
        export.text()
    );
    // Its log line went to Pi's event bus, not to the model.
    assert!(
        run.logs
            .iter()
            .any(|l| l["tool"] == "notes.export" && l["message"] == "exporting 2 notes"),
        "{:?}",
        run.logs
    );
    assert!(!export.text().contains("exporting 2 notes"));

    // An INVALID_INPUT the model sees, with the issue.
    let invalid = &results[4];
    assert!(invalid.is_error);
    assert_eq!(
        invalid.content[0]["text"],
        "[INVALID_INPUT] Input validation failed"
    );
    let issues: Value = serde_json::from_str(invalid.content[1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(issues[0]["path"], "/id");
    assert_eq!(run.last_assistant()["content"][0]["text"], "done");
}

#[test]
fn an_abort_from_pi_drops_the_notes_handler() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let run = session(
        "notes-testbed",
        &[turn(&[(
            "diag_sleep",
            json!({"ms": 600000, "marker": marker.to_str().unwrap()}),
        )])],
        // The scripted model's extension aborts the agent (Pi's Escape) when
        // the handler logs that it is sleeping: it is running by then.
        Some("diag_sleep"),
    );
    assert!(
        run.logs
            .iter()
            .any(|l| l["tool"] == "diag.sleep" && l["message"] == "sleeping for 600000 ms"),
        "{:?}",
        run.logs
    );
    let slept = run.result_of("diag_sleep");
    assert!(slept.is_error);
    assert_eq!(slept.text(), "[ABORTED] Tool execution aborted");
    assert_eq!(run.last_assistant()["stopReason"], "aborted");
    assert_eq!(
        std::fs::read_to_string(&marker).expect("the drop guard wrote the marker"),
        "dropped",
        "the handler was dropped, not finished"
    );
}

#[test]
fn a_question_through_pi_is_input_unavailable_at_once() {
    // `diag.ask` asks an order form; Pi's bridge carries no questions.
    let run = session("notes-testbed", &[turn(&[("diag_ask", json!({}))])], None);
    let asked = run.result_of("diag_ask");
    assert!(asked.is_error, "{asked:?}");
    let text = asked.text();
    assert!(
        text.starts_with(
            "[INPUT_UNAVAILABLE] This call needs the caller to answer (elicitation), and the \
             Pi bridge does not carry questions to Pi"
        ),
        "{text}"
    );
}
