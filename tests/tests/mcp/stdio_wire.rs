//! `notes mcp` driven with raw JSON-RPC lines, to see exactly what goes on
//! the wire: progress notifications only for a request that carries a
//! progress token (with that token, `total` 100, never decreasing), and log
//! notifications filtered by the level set with `logging/setLevel` — and,
//! in the stateless era (2026-07-28), by the request's own `logLevel`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

struct Wire {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Wire {
    fn start() -> Wire {
        let mut wire = Wire::spawn();
        wire.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}),
        );
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        wire
    }

    /// The server, not initialized (a stateless-era client sends no
    /// `initialize`).
    fn spawn() -> Wire {
        let mut child = notes_command()
            .args(["--db", ":memory:", "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("notes mcp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Wire {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns every notification before its response,
    /// then the response.
    fn request(&mut self, id: u64, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut notifications = Vec::new();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed stdout"
            );
            let message: Value = serde_json::from_str(&line).expect("one JSON message per line");
            if message["id"] == id {
                return (notifications, message);
            }
            notifications.push(message);
        }
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn of_method<'a>(notifications: &'a [Value], method: &str) -> Vec<&'a Value> {
    notifications
        .iter()
        .filter(|n| n["method"] == method)
        .collect()
}

#[test]
fn progress_needs_a_token_and_logs_follow_the_level() {
    let mut wire = Wire::start();
    for (id, title) in [(2, "one"), (3, "two"), (4, "three"), (5, "four")] {
        let (_, response) = wire.request(
            id,
            "tools/call",
            json!({"name": "notes.create", "arguments": {"title": title}}),
        );
        assert_ne!(response["result"]["isError"], true, "{response}");
    }

    // Without a progress token: no progress notifications. The export logs
    // one info line, which the default level (info) lets through.
    let (notifications, response) = wire.request(
        6,
        "tools/call",
        json!({"name": "notes.export", "arguments": {}}),
    );
    assert_eq!(response["result"]["structuredContent"]["count"], 4);
    assert!(of_method(&notifications, "notifications/progress").is_empty());
    let logs = of_method(&notifications, "notifications/message");
    assert_eq!(logs.len(), 1, "{notifications:?}");
    assert_eq!(logs[0]["params"]["level"], "info");
    assert_eq!(logs[0]["params"]["logger"], "notes.export");
    assert_eq!(
        logs[0]["params"]["data"],
        json!({"message": "exporting 4 notes"})
    );

    // With a token: one notification per note, with the token, out of 100,
    // never decreasing.
    let (notifications, _) = wire.request(
        7,
        "tools/call",
        json!({"name": "notes.export", "arguments": {},
               "_meta": {"progressToken": "export-1"}}),
    );
    let progress = of_method(&notifications, "notifications/progress");
    assert_eq!(progress.len(), 4, "{notifications:?}");
    let values: Vec<f64> = progress
        .iter()
        .map(|p| {
            assert_eq!(p["params"]["progressToken"], "export-1");
            assert_eq!(p["params"]["total"], 100.0);
            p["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(values, [25.0, 50.0, 75.0, 100.0]);
    assert_eq!(progress[3]["params"]["message"], "exported 4/4");

    // logging/setLevel error: the info line is filtered out.
    let (_, response) = wire.request(8, "logging/setLevel", json!({"level": "error"}));
    assert_eq!(response["result"], json!({}));
    let (notifications, _) = wire.request(
        9,
        "tools/call",
        json!({"name": "notes.export", "arguments": {}}),
    );
    assert!(of_method(&notifications, "notifications/message").is_empty());

    // logging/setLevel debug: it is back.
    wire.request(10, "logging/setLevel", json!({"level": "debug"}));
    let (notifications, _) = wire.request(
        11,
        "tools/call",
        json!({"name": "notes.export", "arguments": {}}),
    );
    assert_eq!(of_method(&notifications, "notifications/message").len(), 1);

    // ping answers.
    let (_, response) = wire.request(12, "ping", json!({}));
    assert_eq!(response["result"], json!({}));
}

/// The `_meta` of a stateless-era request, with `extra` keys.
fn meta_2026(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-2026", "version": "1"},
    });
    meta.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    meta
}

#[test]
fn a_stateless_request_hears_what_its_own_meta_asks_for() {
    let mut wire = Wire::spawn();
    for (id, title) in [(1, "one"), (2, "two")] {
        let (_, response) = wire.request(
            id,
            "tools/call",
            json!({"name": "notes.create", "arguments": {"title": title},
                   "_meta": meta_2026(json!({}))}),
        );
        assert_ne!(response["result"]["isError"], true, "{response}");
    }

    // No `logLevel`, no progress token: the export's log line and progress
    // reach no one, and the result is whole.
    let (notifications, response) = wire.request(
        3,
        "tools/call",
        json!({"name": "notes.export", "arguments": {}, "_meta": meta_2026(json!({}))}),
    );
    assert_eq!(
        response["result"]["structuredContent"]["count"], 2,
        "{response}"
    );
    assert!(notifications.is_empty(), "{notifications:?}");

    // A `logLevel` of info: the info line, and still no progress.
    let (notifications, response) = wire.request(
        4,
        "tools/call",
        json!({"name": "notes.export", "arguments": {},
               "_meta": meta_2026(json!({"io.modelcontextprotocol/logLevel": "info"}))}),
    );
    assert_eq!(
        response["result"]["structuredContent"]["count"], 2,
        "{response}"
    );
    let logs = of_method(&notifications, "notifications/message");
    assert_eq!(logs.len(), 1, "{notifications:?}");
    assert_eq!(logs[0]["params"]["logger"], "notes.export");
    assert_eq!(
        logs[0]["params"]["data"],
        json!({"message": "exporting 2 notes"})
    );
    assert!(of_method(&notifications, "notifications/progress").is_empty());

    // A progress token without a `logLevel`: the progress, no log line.
    let (notifications, _) = wire.request(
        5,
        "tools/call",
        json!({"name": "notes.export", "arguments": {},
               "_meta": meta_2026(json!({"progressToken": "export-2"}))}),
    );
    let progress = of_method(&notifications, "notifications/progress");
    assert_eq!(progress.len(), 2, "{notifications:?}");
    assert_eq!(progress[1]["params"]["progressToken"], "export-2");
    assert_eq!(progress[1]["params"]["progress"], 100.0);
    assert!(of_method(&notifications, "notifications/message").is_empty());
}
