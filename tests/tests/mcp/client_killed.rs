//! A client killed (SIGKILL) in the middle of a call: the server drops the
//! call's handler — the `diag.sleep` marker file says `dropped` — and keeps
//! serving. The client is the official Python MCP SDK, in its own process:
//! over HTTP it talks to `notes serve`; over stdio it runs `notes mcp` as
//! its child, whose stdin closes when the client dies. (`notes-testbed` is
//! `notes` with the diagnostic tools.)
#![cfg(unix)]

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::raw_http::Session;
use gonk_tools_tests::clients::client_script;
use gonk_tools_tests::mcp_clients::clients;
use gonk_tools_tests::process::{signal, wait_for_file, wait_with_bound, ServerProcess};
use gonk_tools_tests::workspace::{bin, notes_command};
use serde_json::json;

const BOUND: Duration = Duration::from_secs(60);

fn kill_client_mid_call(args: &[&str], dir: &std::path::Path) {
    let marker = dir.join("marker");
    let started = dir.join("started");
    let mut client = Command::new(&clients().python)
        .arg(client_script("python_hang.py"))
        .arg(args[0])
        .arg(&marker)
        .arg(&started)
        .args(&args[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the Python client starts");
    if wait_for_file(&started, BOUND).is_none() {
        let _ = client.kill();
        panic!("the handler never started");
    }
    signal(&client, libc::SIGKILL);
    let status = wait_with_bound(&mut client, BOUND);
    assert_eq!(status.code(), None, "killed by a signal: {status}");
    assert_eq!(
        wait_for_file(&marker, BOUND).as_deref(),
        Some("dropped"),
        "the handler was not dropped after the client died"
    );
}

#[test]
fn over_http_the_handler_is_dropped_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = notes_command();
    command.args(["--db", ":memory:", "serve", "--port", "0"]);
    let mut server = ServerProcess::start(command);
    kill_client_mid_call(&["http", &server.url], dir.path());
    assert!(server.is_running());
    let mut session = Session::open(&server.url, &[]);
    session.call_succeeds("notes.search", json!({"query": "x"}), "a killed client");
}

#[test]
fn over_stdio_the_handler_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let notes = bin("notes-testbed").display().to_string();
    kill_client_mid_call(&["stdio", &notes, "--db", ":memory:", "mcp"], dir.path());
}
