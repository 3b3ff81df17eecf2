//! The line-surface example over a real socket: calls answered with their
//! events and outcome, the connection's principal reaching the handler,
//! bad lines and unknown tools answered, a question asked and answered
//! over the connection, and the end of the connection's
//! input cancelling a running call.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// The running example; killed when the test ends, however it ends.
struct Surface(Child);

impl Drop for Surface {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the example on a free port and returns it with its address.
fn start() -> (Surface, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_line-surface"))
        .arg("127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the example starts");
    let stdout = child.stdout.take().unwrap();
    let surface = Surface(child);
    let mut banner = String::new();
    BufReader::new(stdout).read_line(&mut banner).unwrap();
    let addr = banner
        .trim()
        .rsplit(' ')
        .next()
        .expect("the banner names the address")
        .to_owned();
    (surface, addr)
}

struct Connection {
    socket: TcpStream,
    lines: BufReader<TcpStream>,
}

impl Connection {
    fn open(addr: &str) -> Connection {
        let socket = TcpStream::connect(addr).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let lines = BufReader::new(socket.try_clone().unwrap());
        Connection { socket, lines }
    }

    fn send(&mut self, line: &str) {
        self.socket
            .write_all(format!("{line}\n").as_bytes())
            .unwrap();
    }

    /// The next line, or `None` at the end of the connection.
    fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.lines.read_line(&mut line).unwrap() {
            0 => None,
            _ => Some(serde_json::from_str(&line).unwrap()),
        }
    }

    /// Sends a call and returns the lines it gets, its outcome last.
    fn call(&mut self, line: &str) -> Vec<Value> {
        self.send(line);
        let mut lines = Vec::new();
        loop {
            let line = self.next().expect("the call's outcome");
            let kind = line["type"].clone();
            lines.push(line);
            if kind == "result" || kind == "error" {
                return lines;
            }
        }
    }
}

#[test]
fn calls_get_their_events_and_outcome_over_the_socket() {
    let (_surface, addr) = start();
    let mut conn = Connection::open(&addr);
    let me = conn.socket.local_addr().unwrap();

    assert_eq!(
        conn.call(r#"{"id": 1, "tool": "whoami"}"#),
        [json!({"id": 1, "type": "result", "data": format!("tcp:{me}")})]
    );
    assert_eq!(
        conn.call(r#"{"id": "w", "tool": "wait", "input": {"seconds": 1}}"#),
        [
            json!({"id": "w", "type": "progress", "percent": 0.0, "message": "0/1 s"}),
            json!({"id": "w", "type": "result", "data": "waited 1 s"}),
        ]
    );
    let invalid = conn.call(r#"{"id": 2, "tool": "wait", "input": {"seconds": -1}}"#);
    assert_eq!(invalid[0]["code"], "INVALID_INPUT", "{invalid:?}");
    assert_eq!(
        conn.call(r#"{"id": 3, "tool": "nope"}"#),
        [
            json!({"id": 3, "type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: nope"})
        ]
    );
    let garbage = conn.call("not json");
    assert_eq!(garbage[0]["id"], Value::Null);
    assert_eq!(garbage[0]["code"], "INVALID_INPUT");
}

#[test]
fn the_end_of_the_input_cancels_the_running_call() {
    let (_surface, addr) = start();
    let mut conn = Connection::open(&addr);
    conn.send(r#"{"id": 7, "tool": "wait", "input": {"seconds": 600}}"#);
    let started = conn.next().unwrap();
    assert_eq!(started["type"], "progress", "{started}");
    conn.socket.shutdown(Shutdown::Write).unwrap();
    assert_eq!(
        conn.next(),
        Some(
            json!({"id": 7, "type": "error", "code": "ABORTED", "message": "Tool execution aborted"})
        )
    );
    assert_eq!(conn.next(), None, "then the surface closes the connection");
}

#[test]
fn a_tool_asks_the_human_over_the_connection_and_gets_the_answer() {
    let (_surface, addr) = start();
    let mut conn = Connection::open(&addr);
    conn.send(r#"{"id": 9, "tool": "greet"}"#);
    let question = conn.next().unwrap();
    assert_eq!(question["id"], 9, "{question}");
    assert_eq!(question["type"], "question", "{question}");
    assert_eq!(question["request"]["method"], "elicitation/create");
    assert_eq!(
        question["request"]["params"]["message"],
        "What is your name?"
    );
    let asked = question["question"].as_str().unwrap().to_owned();

    // An answer of the wrong shape is refused; the question keeps waiting.
    conn.send(&json!({"answer": asked, "value": {"name": "Ada"}}).to_string());
    let refused = conn.next().unwrap();
    assert_eq!(refused["code"], "INVALID_INPUT", "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("\"action\""),
        "{refused}"
    );
    // An answer to a question nobody asked is refused too.
    conn.send(r#"{"answer": "q999", "value": {"action": "decline"}}"#);
    assert_eq!(conn.next().unwrap()["code"], "INVALID_INPUT");

    conn.send(
        &json!({"answer": asked, "value": {"action": "accept", "content": {"name": "Ada"}}})
            .to_string(),
    );
    assert_eq!(
        conn.next().unwrap(),
        json!({"id": 9, "type": "result", "data": "Hello, Ada!"})
    );
}

#[test]
fn the_end_of_the_input_fails_a_waiting_question() {
    let (_surface, addr) = start();
    let mut conn = Connection::open(&addr);
    conn.send(r#"{"id": 4, "tool": "greet"}"#);
    assert_eq!(conn.next().unwrap()["type"], "question");
    conn.socket.shutdown(Shutdown::Write).unwrap();
    let outcome = conn.next().expect("the call's outcome");
    assert_eq!(outcome["id"], 4, "{outcome}");
    assert_eq!(outcome["type"], "error", "{outcome}");
    assert_eq!(conn.next(), None, "then the surface closes the connection");
}
