//! SIGTERM with calls in flight, on the real `notes` binary: the server
//! stops taking calls, lets running calls finish within the grace period
//! (`--shutdown-grace`), cancels the rest — each still gets a terminal
//! error answer saying the server is shutting down, not a stream that just
//! ends — and exits 0. Over HTTP (`notes serve`) and stdio (`notes mcp`).
#![cfg(unix)]

use std::path::Path;
use std::time::Duration;

use crate::support::raw_http::Session;
use crate::support::raw_stdio::Wire;
use gonk_tools_tests::process::{signal, wait_for_file, wait_with_bound, ServerProcess};
use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

const BOUND: Duration = Duration::from_secs(60);

fn sleep_args(ms: u64, dir: &Path) -> Value {
    json!({
        "ms": ms,
        "marker": dir.join("marker").display().to_string(),
        "started": dir.join("started").display().to_string(),
    })
}

fn wait_started(dir: &Path) {
    assert_eq!(
        wait_for_file(&dir.join("started"), BOUND).as_deref(),
        Some("started"),
        "the handler never started"
    );
}

/// A `tools/call` answer that is the shutdown's terminal error.
fn assert_cancelled_by_shutdown(answer: &Value) {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.starts_with("Error [ABORTED]"), "{answer}");
    assert!(text.contains("shutting down"), "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["code"], "ABORTED",
        "{answer}"
    );
}

/// The process exited 0, and the handler's marker says `marker`.
fn exited_0_with_marker(status: std::process::ExitStatus, dir: &Path, marker: &str) {
    assert_eq!(status.code(), Some(0), "{status}");
    assert_eq!(
        std::fs::read_to_string(dir.join("marker")).ok().as_deref(),
        Some(marker)
    );
}

fn serve(grace: &str) -> ServerProcess {
    let mut command = notes_command();
    command.args([
        "--db",
        ":memory:",
        "serve",
        "--port",
        "0",
        "--shutdown-grace",
        grace,
    ]);
    ServerProcess::start(command)
}

#[test]
fn serve_cancels_a_call_still_running_after_the_grace_with_an_error_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve("1");
    let mut session = Session::open(&server.url, &[]);
    let args = sleep_args(60_000, dir.path());
    let call = std::thread::spawn(move || session.call("diag.sleep", args));
    wait_started(dir.path());
    server.terminate();
    let answer = call.join().unwrap();
    assert_cancelled_by_shutdown(&answer);
    exited_0_with_marker(server.wait(BOUND), dir.path(), "dropped");
}

#[test]
fn serve_lets_a_call_finish_within_the_grace_then_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve("60");
    let mut session = Session::open(&server.url, &[]);
    let args = sleep_args(1_500, dir.path());
    let call = std::thread::spawn(move || session.call("diag.sleep", args));
    wait_started(dir.path());
    server.terminate();
    let answer = call.join().unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["slept_ms"], 1500,
        "{answer}"
    );
    exited_0_with_marker(server.wait(BOUND), dir.path(), "completed");
}

#[test]
fn mcp_cancels_a_call_still_running_after_the_grace_with_an_error_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(&["--shutdown-grace", "1"]);
    let id = wire.send_call("diag.sleep", sleep_args(60_000, dir.path()));
    wait_started(dir.path());
    signal(&wire.child, libc::SIGTERM);
    let answer = wire.answer();
    assert_eq!(answer["id"], id, "{answer}");
    assert_cancelled_by_shutdown(&answer);
    assert!(wire.next_answer().is_none(), "notes closes stdout");
    exited_0_with_marker(
        wait_with_bound(&mut wire.child, BOUND),
        dir.path(),
        "dropped",
    );
}

#[test]
fn mcp_refuses_new_calls_once_shutting_down() {
    let dir = tempfile::tempdir().unwrap();
    let mut wire = Wire::start(&["--shutdown-grace", "600"]);
    let sleeping = wire.send_call("diag.sleep", sleep_args(60_000, dir.path()));
    wait_started(dir.path());
    signal(&wire.child, libc::SIGTERM);
    // Calls answered before the signal is handled succeed; once it is, a
    // call is refused (the loop bound only guards against a hang).
    let mut refused = None;
    for _ in 0..5_000 {
        let id = wire.send_call("notes.search", json!({"query": "x"}));
        let answer = wire.answer();
        assert_eq!(answer["id"], id, "{answer}");
        if answer.get("error").is_some() {
            refused = Some(answer);
            break;
        }
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        std::thread::sleep(Duration::from_millis(5));
    }
    let refused = refused.expect("no call was refused after SIGTERM");
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert_eq!(
        refused["error"]["data"]["code"], "SHUTTING_DOWN",
        "{refused}"
    );
    // The running call still runs; end of input cancels it, and notes exits 0.
    wire.close_stdin();
    let answer = wire.answer();
    assert_eq!(answer["id"], sleeping, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    exited_0_with_marker(
        wait_with_bound(&mut wire.child, BOUND),
        dir.path(),
        "dropped",
    );
}
