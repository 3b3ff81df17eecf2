//! The MCP server over an in-memory duplex: arbitrary lines after an
//! opening the first byte picks (a 2025 `initialize` session, nothing, or
//! a first stateless `2026-07-28` request), then end of input. It must
//! never panic, write only JSON-RPC messages, answer only ids it was sent,
//! answer no request twice, serve no request that names a protocol
//! version it does not speak, and exit promptly after EOF. Once the
//! connection has a lifecycle (either opening), every request line with a
//! unique id gets exactly one answer with that id before the input ends
//! (see `gonk_tools_fuzz::mcp` for what counts as a request), unless the
//! input cancels something.
#![no_main]

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use gonk_tools::adapters::mcp::{serve_io, McpServerOptions};
use gonk_tools_fuzz::mcp::{answered_id, Expectations, Id, Opening};
use gonk_tools_fuzz::{plan_registry, runtime};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long the owed answers, and then the server's exit after EOF, may take.
const BOUND: Duration = Duration::from_secs(10);

fuzz_target!(|data: &[u8]| {
    let (opening, body) = match data.split_first() {
        Some((first, rest)) => (Opening::from_byte(*first), rest),
        None => (Opening::Bare, data),
    };
    let mut input = opening.prefix().as_bytes().to_vec();
    input.extend_from_slice(body);
    let expected = Expectations::of(&input);
    // A request that reaches the server only after a failed handshake, or
    // one a cancellation ends, may go unanswered.
    let every_request_answered = opening != Opening::Bare && !expected.cancels;
    let mut unanswered = if every_request_answered {
        expected.owed.clone()
    } else {
        Default::default()
    };

    let (output, unanswered) = runtime().block_on(async move {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = tokio::spawn(serve_io(
            plan_registry(),
            McpServerOptions::new("fuzz", "0"),
            server_read,
            server_write,
        ));
        let (client_read, mut client_write) = tokio::io::split(client);
        let (lines, mut received) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let reader = tokio::spawn(async move {
            let mut read = BufReader::new(client_read);
            loop {
                let mut line = Vec::new();
                match read.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if lines.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let _ = client_write.write_all(&input).await;

        // Keep the input open until every owed answer is in (end of input
        // cancels running calls, which then owe nothing).
        let mut output = Vec::new();
        let deadline = tokio::time::Instant::now() + BOUND;
        while !unanswered.is_empty() {
            match tokio::time::timeout_at(deadline, received.recv()).await {
                Ok(Some(line)) => {
                    if let Some(id) = serde_json::from_slice(&line)
                        .ok()
                        .as_ref()
                        .and_then(answered_id)
                    {
                        unanswered.remove(&id);
                    }
                    output.push(line);
                }
                Ok(None) | Err(_) => break,
            }
        }

        let _ = client_write.shutdown().await;
        drop(client_write);
        let served = tokio::time::timeout(BOUND, serving).await;
        assert!(served.is_ok(), "the server did not exit within 10 s of EOF");
        assert!(served.unwrap().is_ok(), "the server task panicked");
        tokio::time::timeout(BOUND, reader)
            .await
            .expect("output ends once the server exits")
            .expect("reader");
        while let Ok(line) = received.try_recv() {
            output.push(line);
        }
        (output, unanswered)
    });

    let mut answers: HashMap<Id, usize> = HashMap::new();
    let mut succeeded: HashSet<Id> = HashSet::new();
    for line in output
        .iter()
        .filter(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
    {
        let message: Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(line)));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        if message.get("result").is_some() || message.get("error").is_some() {
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            assert!(
                id.is_null() || expected.sent.contains(&id.to_string()),
                "answered an id it was never sent: {message}"
            );
        }
        if let Some(id) = answered_id(&message) {
            if message.get("result").is_some() {
                succeeded.insert(id.clone());
            }
            *answers.entry(id).or_default() += 1;
        }
    }
    assert!(
        unanswered.is_empty(),
        "no answer within 10 s to the requests {unanswered:?}; the server wrote:\n{}",
        String::from_utf8_lossy(&output.concat())
    );
    for id in &expected.owed {
        let count = answers.get(id).copied().unwrap_or(0);
        assert!(count <= 1, "{count} answers to the request {id:?}");
    }
    for id in &expected.refused {
        assert!(
            !succeeded.contains(id),
            "the request {id:?} names a version the server does not speak, and was served"
        );
    }
});
