//! Hostile JSON-RPC lines to `notes mcp`: each gets the JSON-RPC error it is
//! owed (code, and the request's id when it can be read), the process keeps
//! serving, and a fresh call right after succeeds.

mod mcp_support;

use std::time::Duration;

use mcp_support::raw_stdio::Wire;
use mcp_support::wait_with_bound;
use serde_json::{json, Value};

#[test]
fn every_malformed_line_gets_its_json_rpc_error_and_the_server_keeps_serving() {
    let mut wire = Wire::start(&[]);
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
        wire.call_succeeds("notes.search", json!({"query": "x"}), name);
    }
    // An unknown method is still rmcp's -32601.
    wire.raw(r#"{"jsonrpc":"2.0","id":11,"method":"no/such/method","params":{}}"#);
    let answer = wire.answer();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(11), json!(-32601)),
        "{answer}"
    );
    wire.call_succeeds("notes.search", json!({"query": "x"}), "an unknown method");

    // A parse error just before end of input is still answered, then notes exits 0.
    wire.raw("{oops");
    wire.close_stdin();
    let answer = wire.answer();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let status = wait_with_bound(&mut wire.child, Duration::from_secs(60));
    assert!(status.success(), "{status}");
}
