//! The MCP server over an in-memory duplex: arbitrary lines (after a valid
//! handshake, half of the time), then end of input. It must never panic,
//! write only JSON-RPC messages, answer only ids it was sent, and exit
//! promptly after EOF.
#![no_main]

use std::collections::HashSet;
use std::time::Duration;

use gonk_tools::adapters::mcp::{serve_io, McpServerOptions};
use gonk_tools_fuzz::{plan_registry, runtime};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

fuzz_target!(|data: &[u8]| {
    let (handshake, body) = match data.split_first() {
        Some((first, rest)) => (first % 2 == 0, rest),
        None => (false, data),
    };
    let mut input = Vec::new();
    if handshake {
        input.extend_from_slice(HANDSHAKE.as_bytes());
    }
    input.extend_from_slice(body);
    // The ids a client could be answered for.
    let mut sent: HashSet<String> = HashSet::new();
    for line in input.split(|b| *b == b'\n') {
        // The server reads a line after a byte-order mark as JSON too.
        let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        if let Ok(message) = serde_json::from_slice::<Value>(line) {
            for m in message.as_array().cloned().unwrap_or_else(|| vec![message]) {
                if let Some(id) = m.get("id") {
                    sent.insert(id.to_string());
                }
            }
        }
    }

    let output = runtime().block_on(async move {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = tokio::spawn(serve_io(
            plan_registry(),
            McpServerOptions::new("fuzz", "0"),
            server_read,
            server_write,
        ));
        let (mut client_read, mut client_write) = tokio::io::split(client);
        let reader = tokio::spawn(async move {
            let mut out = Vec::new();
            let _ = client_read.read_to_end(&mut out).await;
            out
        });
        let _ = client_write.write_all(&input).await;
        let _ = client_write.shutdown().await;
        drop(client_write);
        let served = tokio::time::timeout(Duration::from_secs(10), serving).await;
        assert!(served.is_ok(), "the server did not exit within 10 s of EOF");
        let joined = served.unwrap();
        assert!(joined.is_ok(), "the server task panicked");
        tokio::time::timeout(Duration::from_secs(10), reader)
            .await
            .expect("output ends once the server exits")
            .expect("reader")
    });

    for line in output.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let message: Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(line)));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        if message.get("result").is_some() || message.get("error").is_some() {
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            assert!(
                id.is_null() || sent.contains(&id.to_string()),
                "answered an id it was never sent: {message}"
            );
        }
    }
});
