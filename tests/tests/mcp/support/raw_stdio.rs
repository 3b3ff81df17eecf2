//! `notes mcp` driven with raw JSON-RPC lines, to see its answers exactly
//! as they are on the wire.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{json, Value};

use gonk_tools_tests::workspace::notes_command;

/// A `notes mcp` process with an initialized session.
pub struct Wire {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Wire {
    /// Starts `notes --db :memory: mcp ARGS` and initializes a session.
    pub fn start(args: &[&str]) -> Wire {
        let mut child = notes_command()
            .args(["--db", ":memory:", "mcp"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("notes mcp starts");
        let stdin = child.stdin.take();
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

    /// Writes one line.
    pub fn raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next message that is not a notification; `None` at end of output.
    pub fn next_answer(&mut self) -> Option<Value> {
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).unwrap() == 0 {
                return None;
            }
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message.get("method").is_none() {
                return Some(message);
            }
        }
    }

    /// The next message that is not a notification.
    pub fn answer(&mut self) -> Value {
        self.next_answer()
            .expect("notes closed stdout instead of answering")
    }

    /// Sends a `tools/call` with a fresh id; returns the id.
    pub fn send_call(&mut self, tool: &str, arguments: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.raw(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        );
        id
    }

    /// A fresh `tools/call` of `tool` succeeds.
    pub fn call_succeeds(&mut self, tool: &str, arguments: Value, after: &str) {
        let id = self.send_call(tool, arguments);
        let answer = self.answer();
        assert_eq!(answer["id"], id, "after {after}: {answer}");
        assert_eq!(
            answer["result"]["isError"], false,
            "after {after}: {answer}"
        );
    }
}
