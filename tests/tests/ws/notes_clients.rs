//! The real `notes serve` over WebSocket (`/ws`, on the MCP port), driven
//! by an independent client: the Python `websockets` library from PyPI.
//! The script (`tests/clients/python_ws_notes.py`) only observes and
//! prints a JSON report; the assertions are here.
//!
//! Covered: calls and error replies (reqId present and absent), a
//! broadcast received by a second connection, streaming events, hostile
//! frames (binary, invalid JSON, wrong types, a flood past the in-flight
//! cap), the handshake checks (missing or wrong key, a foreign Origin),
//! an oversize message (closed with 1009, the server keeps serving) and a
//! client that vanishes mid-call (the handler is dropped).

use std::path::Path;
use std::time::Duration;

use crate::support::{run_python, NotesServer, KEY};
use gonk_tools_tests::clients::report;
use gonk_tools_tests::process::wait_for_file;
use serde_json::{json, Value};

fn error(reply: &Value) -> (&str, &str) {
    assert_eq!(reply["type"], "error", "{reply}");
    (
        reply["code"].as_str().unwrap_or_default(),
        reply["message"].as_str().unwrap_or_default(),
    )
}

#[test]
fn python_websockets_against_notes_serve() {
    let mut server = NotesServer::start(&["--allow-writes"]);
    let markers = tempfile::tempdir().unwrap();
    let output = run_python(
        "python_ws_notes.py",
        &[&server.ws_url(), KEY, markers.path().to_str().unwrap()],
    );
    let r = report(&output);

    // A call: the reply carries the reqId and the tool's data.
    assert_eq!(r["create"]["type"], "result");
    assert_eq!(r["create"]["reqId"], 1);
    assert_eq!(r["create"]["result"]["id"], 1);
    assert_eq!(r["create"]["result"]["title"], "From Python");
    // The write reached the other connection (and the writer) as a broadcast.
    for key in ["broadcast_b", "broadcast_a"] {
        assert_eq!(r[key]["type"], "broadcast");
        assert_eq!(r[key]["op"], "notes.create");
        assert_eq!(r[key]["payload"], r["create"]["result"], "{key}");
    }
    // No reqId in, no reqId out.
    let get = &r["get_no_req_id"];
    assert_eq!(get["type"], "result");
    assert!(get.get("reqId").is_none(), "{get}");
    assert_eq!(get["result"]["title"], "From Python");

    // Error replies.
    let (code, message) = error(&r["get_missing"]);
    assert_eq!(code, "NOT_FOUND");
    assert!(message.starts_with("No note with id 999"), "{message}");
    assert_eq!(r["get_missing"]["reqId"], "m");
    assert_eq!(
        error(&r["unknown"]),
        ("TOOL_NOT_FOUND", "No such op: no.such.op")
    );
    assert_eq!(
        error(&r["duplex"]),
        ("TOOL_NOT_FOUND", "No such op: diag.duplex")
    );
    assert_eq!(r["search"]["result"]["hits"][0]["title"], "From Python");
    let (code, _) = error(&r["search_empty"]);
    assert_eq!(code, "INVALID_INPUT");
    assert_eq!(r["search_empty"]["details"][0]["path"], "/query");

    // A streaming request: its log and progress before the reply.
    assert_eq!(r["export"]["result"]["count"], 1);
    let kinds: Vec<&str> = r["export_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["log", "progress"]);
    assert_eq!(r["export_events"][1]["percent"], 100.0);

    // Hostile frames: each an error reply, and the socket keeps serving.
    let hostile = &r["hostile"];
    for (key, message) in [
        (
            "binary",
            "Binary frames are not supported; send JSON text frames",
        ),
        ("invalid_json", "Invalid JSON"),
        ("not_an_object", "A request is a JSON object"),
        ("op_not_a_string", "op must be a string"),
        ("req_id_not_scalar", "reqId must be a string or a number"),
    ] {
        let (code, text) = error(&hostile[key]);
        assert_eq!(code, "INVALID_REQUEST", "{key}");
        assert!(text.starts_with(message), "{key}: {text}");
    }
    assert_eq!(hostile["op_not_a_string"]["reqId"], "t1");
    assert_eq!(error(&hostile["input_wrong_types"]).0, "INVALID_INPUT");
    assert_eq!(hostile["input_wrong_types"]["details"][0]["path"], "/id");
    assert_eq!(error(&hostile["input_not_an_object"]).0, "INVALID_INPUT");
    assert_eq!(hostile["after"]["type"], "result");

    // A flood: 100 long calls, 32 run, 68 are BUSY at once; cancelled, the
    // running ones reply ABORTED and the socket serves again.
    let busy: Vec<String> = r["flood_busy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = (32..100).map(|i| format!("f{i}")).collect();
    assert_eq!(busy, expected);
    assert!(
        r["flood_busy_message"]
            .as_str()
            .unwrap()
            .contains("the limit is 32"),
        "{}",
        r["flood_busy_message"]
    );
    assert_eq!(r["flood_aborted"], json!(["ABORTED"]));
    assert_eq!(r["after_flood"]["type"], "result");

    // The handshake checks: no socket without the key, or from a foreign page.
    assert_eq!(r["status_no_key"], 401);
    assert_eq!(r["status_wrong_key"], 401);
    assert_eq!(r["status_evil_origin"], 403);
    assert_eq!(
        r["status_page_origin"], 101,
        "the page's own origin is allowed"
    );

    // Oversize: closed with 1009; the next connection is served.
    assert_eq!(
        r["oversize"],
        json!({"closed": true, "code": 1009, "reason": "message too big"})
    );
    assert_eq!(r["after_oversize"]["result"]["id"], 1);

    // A client gone mid-call: the handler was running (its log line came
    // back) and is dropped.
    assert_eq!(r["sleep_started"]["type"], "event");
    assert_eq!(
        r["sleep_started"]["event"]["message"],
        "sleeping for 60000 ms"
    );
    let marker = r["marker"].as_str().unwrap();
    assert_eq!(
        wait_for_file(Path::new(marker), Duration::from_secs(30)).as_deref(),
        Some("dropped")
    );
    assert_eq!(r["after_disconnect"]["type"], "result");
    assert!(server.is_running(), "the server survived all of it");
}

#[test]
fn without_allow_writes_the_socket_withholds_write_tools() {
    let server = NotesServer::start(&[]);
    let output = run_python("python_ws_withheld.py", &[&server.ws_url(), KEY]);
    let r = report(&output);
    assert_eq!(
        error(&r["create"]),
        ("TOOL_NOT_FOUND", "No such op: notes.create")
    );
    assert_eq!(r["list"]["type"], "result");
}
