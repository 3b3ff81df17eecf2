//! Hostile JSON-RPC lines to `notes mcp`: each gets the JSON-RPC error it is
//! owed (code, and the request's id when it can be read), the process keeps
//! serving, and a fresh call right after succeeds.

use std::time::Duration;

use crate::support::malformed::{self, Malformed};
use crate::support::raw_stdio::Wire;
use gonk_tools_tests::process::wait_with_bound;
use serde_json::json;

#[test]
fn every_malformed_line_gets_its_json_rpc_error_and_the_server_keeps_serving() {
    let mut wire = Wire::start(&[]);
    let mut cases = malformed::messages();
    cases.push(Malformed {
        name: "a line over 16 MiB",
        text: format!(
            r#"{{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{{"name":"notes.create","arguments":{{"title":"{}"}}}}}}"#,
            "x".repeat(16 * 1024 * 1024)
        ),
        code: -32600,
        id: json!(10),
    });
    for (n, case) in cases.iter().enumerate() {
        wire.raw(&case.text);
        // A ping right behind it: its answer must come after the error (so
        // a line left unanswered fails the test instead of hanging it).
        let ping = format!("ping-{n}");
        wire.raw(&json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}).to_string());
        let answer = wire.answer();
        assert_ne!(
            answer["id"],
            ping.as_str(),
            "{}: no error answer before the ping's",
            case.name
        );
        let pong = wire.answer();
        assert_eq!(pong["id"], ping.as_str(), "{}: {pong}", case.name);
        malformed::assert_answer(case, &answer);
        wire.call_succeeds("notes.search", json!({"query": "x"}), case.name);
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
