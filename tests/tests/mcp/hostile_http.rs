//! Hostile requests to `notes serve`, by hand over TCP: each gets the HTTP
//! status and JSON-RPC error it is owed, the server keeps serving, and a
//! fresh call right after succeeds. Also the start-up checks: an empty API
//! key is refused, `--allow-host` names are accepted, and a wildcard bind
//! accepts the machine's own addresses and name.

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use crate::support::malformed::{self, Malformed};
use crate::support::raw_http::{exchange, post, Session};
use gonk_tools_tests::process::{wait_with_bound, ServerProcess};
use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

fn serve(args: &[&str]) -> ServerProcess {
    let mut command = notes_command();
    command
        .args(["--db", ":memory:", "serve", "--port", "0"])
        .args(args);
    ServerProcess::start(command)
}

fn addr_of(url: &str) -> SocketAddr {
    let rest = url.strip_prefix("http://").unwrap();
    rest[..rest.find('/').unwrap()].parse().unwrap()
}

#[test]
fn every_malformed_request_gets_its_status_and_code_and_the_server_keeps_serving() {
    let server = serve(&[]);
    let mut session = Session::open(&server.url, &[]);
    session.call_succeeds("notes.search", json!({"query": "x"}), "the start");

    let mut bodies = malformed::messages();
    bodies.push(Malformed {
        name: "an empty body",
        text: String::new(),
        code: -32700,
        id: Value::Null,
    });
    for case in &bodies {
        let answer = session.post(&case.text);
        assert_eq!(answer.status, 400, "{}: {}", case.name, answer.text());
        assert_eq!(
            answer.header("content-type"),
            Some("application/json"),
            "{}",
            case.name
        );
        malformed::assert_answer(case, &answer.message());
        session.call_succeeds("notes.search", json!({"query": "x"}), case.name);
    }

    let addr = session.addr;
    let port = addr.port();
    let lines = session.lines().join("\r\n");
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let head = |host_lines: &str, length: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\n{host_lines}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMCP-Protocol-Version: 2025-06-18\r\n{lines}\r\n\
             Content-Length: {length}"
        )
    };
    let cases: Vec<(&str, String, &[u8], u16)> = vec![
        (
            "two Host headers",
            head(
                &format!("Host: 127.0.0.1:{port}\r\nHost: evil.example:{port}"),
                ping.len(),
            ),
            ping.as_bytes(),
            400,
        ),
        (
            "two identical Host headers",
            head(
                &format!("Host: 127.0.0.1:{port}\r\nHost: 127.0.0.1:{port}"),
                ping.len(),
            ),
            ping.as_bytes(),
            400,
        ),
        (
            "a port out of range",
            head("Host: 127.0.0.1:99999", ping.len()),
            ping.as_bytes(),
            400,
        ),
        (
            "a port that is not a number",
            head("Host: 127.0.0.1:80x", ping.len()),
            ping.as_bytes(),
            400,
        ),
        (
            "another port",
            head(
                &format!("Host: 127.0.0.1:{}", port.wrapping_add(1).max(1)),
                ping.len(),
            ),
            ping.as_bytes(),
            403,
        ),
        (
            "a name not allowed",
            head(&format!("Host: evil.example:{port}"), ping.len()),
            ping.as_bytes(),
            403,
        ),
        // Nothing of the body is sent: the answer must not wait for it.
        (
            "a declared Content-Length over the limit",
            head(&format!("Host: 127.0.0.1:{port}"), 5 * 1024 * 1024),
            b"",
            413,
        ),
    ];
    for (name, head, body, status) in cases {
        let answer = exchange(addr, &head, body);
        assert_eq!(answer.status, status, "{name}: {}", answer.text());
        session.call_succeeds("notes.search", json!({"query": "x"}), name);
    }

    // A body over the limit without a declared length (chunked) is 413 too.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"notes.search","arguments":{{"query":"{}"}}}}}}"#,
        "x".repeat(5 * 1024 * 1024)
    );
    let mut chunked = format!("{:x}\r\n", big.len()).into_bytes();
    chunked.extend_from_slice(big.as_bytes());
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let answer = exchange(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMCP-Protocol-Version: 2025-06-18\r\n{lines}\r\n\
             Transfer-Encoding: chunked"
        ),
        &chunked,
    );
    assert_eq!(answer.status, 413, "{}", answer.text());
    session.call_succeeds(
        "notes.search",
        json!({"query": "x"}),
        "a chunked body over the limit",
    );

    // A body that is not JSON by its Content-Type is still 415.
    let answer = exchange(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: text/plain\r\nMCP-Protocol-Version: 2025-06-18\r\n{lines}\r\n\
             Content-Length: {}",
            ping.len()
        ),
        ping.as_bytes(),
    );
    assert_eq!(answer.status, 415, "{}", answer.text());
    session.call_succeeds("notes.search", json!({"query": "x"}), "a text/plain body");
}

#[test]
fn an_empty_or_blank_api_key_is_refused_at_start_up() {
    for key in ["", " ", " padded "] {
        let mut child = notes_command()
            .args(["--db", ":memory:", "serve", "--port", "0", "--api-key", key])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = wait_with_bound(&mut child, Duration::from_secs(60));
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(1), "{key:?}: {stderr}");
        assert!(stderr.contains("API key"), "{key:?}: {stderr}");
        assert!(!stderr.contains("serving MCP at"), "{key:?}: {stderr}");
    }
}

#[test]
fn allowed_hosts_and_the_bound_address_are_accepted() {
    // On loopback with --allow-host: the extra name passes, others do not.
    let server = serve(&[
        "--allow-host",
        "notes.example",
        "--allow-host",
        "pinned.example:1",
    ]);
    let addr = addr_of(&server.url);
    let port = addr.port();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    for (host, status) in [
        (format!("notes.example:{port}"), 200),
        ("notes.example".to_owned(), 200),
        (format!("NOTES.example:{port}"), 200),
        (format!("other.example:{port}"), 403),
        (format!("pinned.example:{port}"), 403),
        (format!("localhost:{port}"), 200),
    ] {
        let answer = post(addr, "/mcp", &host, &[], ping);
        assert_eq!(answer.status, status, "{host}: {}", answer.text());
    }

    // A wildcard bind with a key: the machine's addresses and name pass.
    let server = serve(&["--host", "0.0.0.0", "--api-key", "k"]);
    let port = addr_of(&server.url).port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut hosts = vec![format!("0.0.0.0:{port}"), format!("127.0.0.2:{port}")];
    // An address of this machine on a real interface, when it has one (a
    // UDP "connect" only picks the route; nothing is sent).
    if let Some(ip) = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.connect("192.0.2.1:9").map(|()| s))
        .and_then(|s| s.local_addr())
        .ok()
        .map(|a| a.ip())
        .filter(|ip| !ip.is_unspecified())
    {
        hosts.push(format!("{ip}:{port}"));
    }
    if let Ok(name) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        hosts.push(format!("{}:{port}", name.trim()));
    }
    for host in &hosts {
        let answer = post(addr, "/mcp", host, &["Authorization: Bearer k"], ping);
        assert_eq!(answer.status, 200, "{host}: {}", answer.text());
    }
    for host in [format!("192.0.2.1:{port}"), format!("evil.example:{port}")] {
        let answer = post(addr, "/mcp", &host, &["Authorization: Bearer k"], ping);
        assert_eq!(answer.status, 403, "{host}: {}", answer.text());
    }
}
