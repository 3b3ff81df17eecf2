//! HTTP/1.1 by hand over a TCP socket, for requests no HTTP client will
//! send (two `Host` headers, a `Content-Length` with no body) and for
//! reading an MCP server's answers exactly as they are on the wire.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// One answer: status, headers (lower-cased names) and the de-chunked body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    /// The first header named `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The JSON-RPC message of the body: the body itself, or the last
    /// `data:` line of an SSE stream that holds a JSON object.
    pub fn message(&self) -> Value {
        let text = self.text();
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            return value;
        }
        text.lines()
            .rev()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC answer in: {text}"))
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&body[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
            .unwrap_or(0);
        body = &body[line_end + 2..];
        if size == 0 || body.len() < size {
            return out;
        }
        out.extend_from_slice(&body[..size]);
        body = body.get(size + 2..).unwrap_or_default();
    }
}

/// Sends `head` (request line and headers, without the blank line) and
/// `body`, with `Connection: close`, and reads the answer to the end. A
/// server that does not answer within 30 s fails the test.
pub fn exchange(addr: SocketAddr, head: &str, body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("{head}\r\nConnection: close\r\n\r\n").into_bytes();
    request.extend_from_slice(body);
    // A server may answer (413) and close before it read the whole body.
    if let Err(error) = stream.write_all(&request) {
        assert!(
            matches!(
                error.kind(),
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
            ),
            "send: {error}"
        );
    }
    let mut raw = Vec::new();
    if let Err(error) = stream.read_to_end(&mut raw) {
        assert!(!raw.is_empty(), "no answer ({error}) to:\n{head}");
    }
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in: {}", String::from_utf8_lossy(&raw)));
    let head_text = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head_text.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let body = &raw[split + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    Answer {
        status,
        headers,
        body: if chunked {
            dechunk(body)
        } else {
            body.to_vec()
        },
    }
}

/// A POST of `body` to `path` on `addr` with the MCP headers, `Host`
/// `host`, and extra header lines.
pub fn post(addr: SocketAddr, path: &str, host: &str, extra: &[&str], body: &str) -> Answer {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2025-06-18\r\n\
         Content-Length: {}",
        body.len()
    );
    for line in extra {
        head.push_str("\r\n");
        head.push_str(line);
    }
    exchange(addr, &head, body.as_bytes())
}

/// An MCP session opened by hand on `addr` (initialize + initialized).
pub struct Session {
    pub addr: SocketAddr,
    pub path: String,
    pub host: String,
    pub extra: Vec<String>,
    pub id: String,
    next: u64,
}

impl Session {
    /// Opens a session; `extra` header lines (e.g. `Authorization: …`) go
    /// on every request.
    pub fn open(url: &str, extra: &[&str]) -> Session {
        let rest = url.strip_prefix("http://").expect("an http:// URL");
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let addr: SocketAddr = authority.parse().expect("an IP:port URL");
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let lines: Vec<&str> = extra.iter().map(String::as_str).collect();
        let init = post(
            addr,
            path,
            authority,
            &lines,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        );
        assert_eq!(init.status, 200, "initialize: {}", init.text());
        let id = init
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        let session = Session {
            addr,
            path: path.to_owned(),
            host: authority.to_owned(),
            extra,
            id,
            next: 100,
        };
        let done = session.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(done.status, 202, "{}", done.text());
        session
    }

    /// The session's header lines.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = self.extra.clone();
        lines.push(format!("Mcp-Session-Id: {}", self.id));
        lines
    }

    /// A POST on the session.
    pub fn post(&self, body: &str) -> Answer {
        let lines = self.lines();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        post(self.addr, &self.path, &self.host, &lines, body)
    }

    /// A `tools/call`; returns the JSON-RPC answer.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.next += 1;
        let answer = self.post(
            &serde_json::json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call",
                                "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        );
        assert_eq!(answer.status, 200, "{}", answer.text());
        answer.message()
    }

    /// A fresh call of `tool` succeeds.
    pub fn call_succeeds(&mut self, tool: &str, arguments: Value, after: &str) {
        let answer = self.call(tool, arguments);
        assert_eq!(
            answer["result"]["isError"], false,
            "after {after}: {answer}"
        );
    }
}

/// Opens the session's `GET` stream and leaves it open (the session is
/// busy while it is); closing the returned socket closes the stream.
pub fn open_get_stream(session: &Session) -> BufReader<TcpStream> {
    let mut stream = TcpStream::connect(session.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n",
        session.path, session.host
    );
    for line in session.lines() {
        head.push_str(&line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.contains(" 200 "), "GET stream: {status}");
    reader
}
