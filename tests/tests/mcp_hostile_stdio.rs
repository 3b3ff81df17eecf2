//! Hostile JSON-RPC lines to `notes mcp`: each gets the JSON-RPC error it is
//! owed (code, and the request's id when it can be read), the process keeps
//! serving, and a fresh call right after succeeds.

mod mcp_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use mcp_support::{notes_command, wait_with_bound};
use serde_json::{json, Value};

struct Wire {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Wire {
    fn start() -> Wire {
        let mut child = notes_command()
            .args(["--db", ":memory:", "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("notes mcp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut wire = Wire {
            child,
            stdin,
            stdout,
            next_id: 1000,
        };
        wire.raw(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}})
            .to_string(),
        );
        let init = wire.answer();
        assert_eq!(init["id"], 1, "{init}");
        wire.raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        wire
    }

    fn raw(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that is not a notification.
    fn answer(&mut self) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "notes closed stdout instead of answering"
            );
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message.get("method").is_none() {
                return message;
            }
        }
    }

    /// A fresh `tools/call` succeeds.
    fn fresh_call_succeeds(&mut self, after: &str) {
        self.next_id += 1;
        let id = self.next_id;
        self.raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "notes.search", "arguments": {"query": "x"}}})
            .to_string(),
        );
        let answer = self.answer();
        assert_eq!(answer["id"], id, "after {after}: {answer}");
        assert_eq!(
            answer["result"]["isError"], false,
            "after {after}: {answer}"
        );
    }
}

#[test]
fn every_malformed_line_gets_its_json_rpc_error_and_the_server_keeps_serving() {
    let mut wire = Wire::start();
    let cases: Vec<(&str, String, i64, Value)> = vec![
        ("unparseable JSON", r#"{"jsonrpc": "2.0", "id": 5,"#.into(), -32700, Value::Null),
        ("not JSON at all", "hello".into(), -32700, Value::Null),
        (
            "a batch",
            r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#.into(),
            -32600,
            Value::Null,
        ),
        (
            "an object id",
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}"#.into(),
            -32600,
            Value::Null,
        ),
        (
            "a null id",
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#.into(),
            -32600,
            Value::Null,
        ),
        (
            "params as an array",
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["notes.search"]}"#.into(),
            -32600,
            json!(7),
        ),
        (
            "jsonrpc 1.0",
            r#"{"jsonrpc":"1.0","id":"eight","method":"tools/list"}"#.into(),
            -32600,
            json!("eight"),
        ),
        (
            "arguments as a string",
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"notes.search","arguments":"x"}}"#.into(),
            -32602,
            json!(9),
        ),
        (
            "a line over 16 MiB",
            format!(
                r#"{{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{{"name":"notes.create","arguments":{{"title":"{}"}}}}}}"#,
                "x".repeat(16 * 1024 * 1024)
            ),
            -32600,
            json!(10),
        ),
    ];
    for (n, (name, line, code, id)) in cases.into_iter().enumerate() {
        wire.raw(&line);
        // A ping right behind it: its answer must come after the error (so
        // a line left unanswered fails the test instead of hanging it).
        let ping = format!("ping-{n}");
        wire.raw(&json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}).to_string());
        let answer = wire.answer();
        assert_ne!(
            answer["id"],
            ping.as_str(),
            "{name}: no error answer before the ping's"
        );
        let pong = wire.answer();
        assert_eq!(pong["id"], ping.as_str(), "{name}: {pong}");
        assert_eq!(answer["jsonrpc"], "2.0", "{name}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{name}: {answer}");
        assert_eq!(answer["id"], id, "{name}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.len() < 400),
            "{name}: {answer}"
        );
        wire.fresh_call_succeeds(name);
    }
    // An unknown method is still rmcp's -32601.
    wire.raw(r#"{"jsonrpc":"2.0","id":11,"method":"no/such/method","params":{}}"#);
    let answer = wire.answer();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(11), json!(-32601)),
        "{answer}"
    );
    wire.fresh_call_succeeds("an unknown method");

    // A parse error just before end of input is still answered, then notes exits 0.
    wire.raw("{oops");
    let Wire {
        mut child,
        stdin,
        mut stdout,
        ..
    } = wire;
    drop(stdin);
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let status = wait_with_bound(&mut child, Duration::from_secs(60));
    assert!(status.success(), "{status}");
}
