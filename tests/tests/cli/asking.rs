//! Asking the human on the terminal (#28): `notes --approval ask` runs a
//! write tool only after the person at the terminal says yes, and a tool's
//! own question (`diag.ask`'s order form) is filled in field by field. The
//! terminal is a real pseudo-terminal: the test reads the prompt the CLI
//! shows and types the answer. Without a terminal nothing waits: the
//! question is refused at once and nothing is written.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use gonk_tools_tests::process::wait_with_bound;
use gonk_tools_tests::pty::OnTerminal;
use gonk_tools_tests::workspace::bin;
use serde_json::Value;

/// Guards against a hang; never a timing check.
const BOUND: Duration = Duration::from_secs(60);

fn notes(db: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin("notes"));
    command
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("XDG_DATA_HOME")
        .env_remove("NOTES_SAVED_SEARCHES");
    command
}

/// The titles of the notes in `db`, read without a terminal.
fn titles(db: &Path) -> Vec<String> {
    let output = notes(db, &["--json", "notes.list"])
        .stdin(Stdio::null())
        .output()
        .expect("notes runs");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["type"] == "result")
        .expect("a result line");
    result["data"]["notes"]
        .as_array()
        .expect("a list of notes")
        .iter()
        .map(|note| note["title"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn yes_on_the_terminal_runs_the_write_tool() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut term = OnTerminal::spawn(notes(&db, &["--approval", "ask", "notes.create", "Plans"]));
    term.wait_for("Approve", BOUND);
    let shown = term.screen();
    assert!(
        shown.contains("Allow notes.create to run? It needs write approval."),
        "{shown}"
    );
    term.type_keys("y\n");
    let (status, screen) = term.finish(BOUND);
    assert_eq!(status.code(), Some(0), "{screen}");
    assert!(screen.contains("Created note 1: Plans"), "{screen}");
    assert_eq!(titles(&db), ["Plans"]);
}

#[test]
fn no_on_the_terminal_denies_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut term = OnTerminal::spawn(notes(&db, &["--approval", "ask", "notes.create", "Plans"]));
    term.wait_for("[y/n] > ", BOUND);
    // A line that is not an answer is asked again.
    term.type_keys("maybe\n");
    term.wait_for("Answer y or n.", BOUND);
    term.type_keys("n\n");
    let (status, screen) = term.finish(BOUND);
    assert_eq!(status.code(), Some(1), "{screen}");
    assert!(screen.contains("Error [APPROVAL_DENIED]"), "{screen}");
    assert!(
        screen.contains("The caller declined to approve notes.create"),
        "{screen}"
    );
    assert!(titles(&db).is_empty());
}

#[test]
fn ctrl_d_on_the_terminal_cancels_the_question_and_denies() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut term = OnTerminal::spawn(notes(&db, &["--approval", "ask", "notes.create", "Plans"]));
    term.wait_for("[y/n] > ", BOUND);
    term.type_keys("\u{4}");
    let (status, screen) = term.finish(BOUND);
    assert_eq!(status.code(), Some(1), "{screen}");
    assert!(screen.contains("Error [APPROVAL_DENIED]"), "{screen}");
    assert!(titles(&db).is_empty());
}

#[test]
fn without_a_terminal_approval_is_required_at_once_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    // stdin is a pipe that stays open: a CLI that waited on it would hang.
    let mut child = notes(&db, &["--approval", "ask", "notes.create", "Plans"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("notes starts");
    let stdin = child.stdin.take();
    let status = wait_with_bound(&mut child, BOUND);
    drop(stdin);
    let output = child.wait_with_output().expect("its output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Error [APPROVAL_REQUIRED]"), "{stderr}");
    assert!(
        stderr.contains("needs an answer on a terminal"),
        "the refusal says why: {stderr}"
    );
    assert!(titles(&db).is_empty());
}

#[test]
fn without_the_flag_nothing_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let output = notes(&db, &["notes.create", "Plans"])
        .stdin(Stdio::null())
        .output()
        .expect("notes runs");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).is_empty(),
        "{output:?}"
    );
    assert_eq!(titles(&db), ["Plans"]);
}

fn testbed(db: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin("notes-testbed"));
    command
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("XDG_DATA_HOME")
        .env_remove("NOTES_SAVED_SEARCHES");
    command
}

#[test]
fn a_tools_form_is_filled_in_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut term = OnTerminal::spawn(testbed(&db, &["--json", "diag.ask"]));
    term.wait_for("Place an order?", BOUND);
    // Required fields first (count, name, size), then the optional ones.
    term.wait_for("How many.", BOUND);
    term.type_keys("11\n");
    term.wait_for("At most 10, please.", BOUND);
    term.type_keys("3\n");
    term.wait_for("Who orders.", BOUND);
    term.type_keys("Ada\n");
    term.wait_for("2) large", BOUND);
    term.type_keys("2\n");
    term.wait_for("Wrap it as a gift?", BOUND);
    // Empty: the field's default (false).
    term.type_keys("\n");
    term.wait_for("A note for the order.", BOUND);
    term.type_keys("\n");
    let (status, screen) = term.finish(BOUND);
    assert_eq!(status.code(), Some(0), "{screen}");
    let result: Value = screen
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .find(|event| event["type"] == "result")
        .unwrap_or_else(|| panic!("a result line in:\n{screen}"));
    assert_eq!(
        result["data"],
        serde_json::json!({"action": "accept", "order": {
            "name": "Ada", "count": 3, "size": "large", "gift": false, "note": null
        }})
    );
}

#[test]
fn a_form_can_be_declined() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut term = OnTerminal::spawn(testbed(&db, &["--json", "diag.ask"]));
    term.wait_for("How many.", BOUND);
    term.type_keys("/decline\n");
    let (status, screen) = term.finish(BOUND);
    assert_eq!(status.code(), Some(0), "{screen}");
    assert!(
        screen.contains(r#""data":{"action":"decline"}"#),
        "{screen}"
    );
}

#[test]
fn a_tools_question_without_a_terminal_is_input_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let output = testbed(&db, &["diag.ask"])
        .stdin(Stdio::null())
        .output()
        .expect("the testbed runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Error [INPUT_UNAVAILABLE]"), "{stderr}");
    assert!(
        stderr.contains("needs an answer on a terminal, and stdin is not a terminal"),
        "{stderr}"
    );
}
