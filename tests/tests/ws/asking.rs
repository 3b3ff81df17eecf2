//! Asking the caller over a real WebSocket (#28), answered by an
//! independent client (Python `websockets`, `tests/clients/python_ws_ask.py`):
//!
//! * a tool's own question: `notes serve` with the diagnostic tools, whose
//!   `diag.ask` asks an order form — answered, declined, not asked without
//!   `canAnswer`, bad answers refused, and a socket closed mid-question
//!   (the server keeps serving);
//! * an approval: a server whose write tools ask the caller (the notes
//!   tools with `notes::approval::security()`, calls authenticated as the
//!   local user) — yes runs the tool and the receipt records the consent,
//!   no is `APPROVAL_DENIED`, silence past the bound and a request that
//!   cannot answer are `APPROVAL_REQUIRED`; nothing is written unless
//!   approved.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use gonk_tools::adapters::ws::{serve_ws, WsHandler, WsServerOptions};
use gonk_tools::security::InMemoryAuditSink;
use gonk_tools::ToolContext;
use gonk_tools_tests::clients::report;
use notes::store::{Store, MEMORY};
use serde_json::{json, Value};

use crate::support::{run_node, run_python, NotesServer, KEY};

fn code(reply: &Value) -> &str {
    assert_eq!(reply["type"], "error", "{reply}");
    reply["code"].as_str().unwrap_or_default()
}

#[test]
fn a_tools_question_is_answered_over_the_socket() {
    let server = NotesServer::start(&[]);
    let output = run_python("python_ws_ask.py", &[&server.ws_url(), KEY, "form"]);
    let r = report(&output);

    // The question: the call's reqId, a socket-wide id, the call's key,
    // and the elicitation as an MCP request.
    let question = &r["accept_question"];
    assert_eq!(question["type"], "question");
    assert_eq!(question["reqId"], 1);
    assert_eq!(question["key"], "elicitation-1");
    assert_eq!(question["request"]["method"], "elicitation/create");
    assert_eq!(question["request"]["params"]["message"], "Place an order?");
    let schema = &question["request"]["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["count"]["maximum"], 10);

    assert_eq!(r["accept"]["type"], "result", "{}", r["accept"]);
    assert_eq!(
        r["accept"]["result"],
        json!({"action": "accept", "order": {
            "name": "Ada", "count": 3, "size": "large", "gift": true, "note": null
        }})
    );
    assert_eq!(r["decline"]["result"], json!({"action": "decline"}));

    // No canAnswer: refused at once, saying how to ask for questions.
    assert_eq!(code(&r["unanswerable"]), "INPUT_UNAVAILABLE");

    assert_eq!(code(&r["bad_shape"]), "INVALID_REQUEST");
    assert!(
        r["bad_shape"]["message"]
            .as_str()
            .unwrap()
            .contains("is not an answer to elicitation/create"),
        "{}",
        r["bad_shape"]
    );
    assert_eq!(code(&r["no_such_question"]), "INVALID_REQUEST");
    assert!(r["no_such_question"]["message"]
        .as_str()
        .unwrap()
        .starts_with("No question q999 is waiting"));
    assert_eq!(r["after_bad"]["result"], json!({"action": "cancel"}));

    // A socket closed while its question waited: the server goes on.
    assert_eq!(r["abandoned_question"]["type"], "question");
    assert_eq!(r["after_close"]["type"], "result", "{}", r["after_close"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_asked_over_the_socket() {
    let store = Arc::new(Store::new(Some(PathBuf::from(MEMORY))));
    let audit = Arc::new(InMemoryAuditSink::new());
    let security = notes::approval::security().audit_sink(Arc::clone(&audit));
    let registry = notes::tools::registry_with(store, security, None).unwrap();
    let handler = WsHandler::<()>::builder(&registry)
        .context(|_: &()| {
            Ok::<_, String>(ToolContext::new().with_auth(notes::approval::local_user()))
        })
        // Short, so the unanswered question ends soon; the test reads no clock.
        .ask_timeout(Duration::from_millis(300));
    let server = serve_ws(
        "127.0.0.1:0".parse().unwrap(),
        handler,
        WsServerOptions::new(),
    )
    .await
    .unwrap();
    let url = server.url();
    let output = tokio::task::spawn_blocking(move || {
        run_python("python_ws_ask.py", &[&url, "", "approval"])
    })
    .await
    .unwrap();
    let r = report(&output);

    let question = &r["approve_question"];
    assert_eq!(question["key"], "approval-1");
    assert_eq!(
        question["request"]["params"]["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );
    assert!(question["request"]["params"]["message"]
        .as_str()
        .unwrap()
        .starts_with("Allow notes.create to run? It needs write approval."));
    assert_eq!(r["approve"]["type"], "result", "{}", r["approve"]);
    assert_eq!(r["approve"]["result"]["title"], "Asked");

    assert_eq!(code(&r["deny"]), "APPROVAL_DENIED");
    assert_eq!(r["silent_question"]["type"], "question");
    assert_eq!(code(&r["silent"]), "APPROVAL_REQUIRED");
    assert_eq!(code(&r["unasked"]), "APPROVAL_REQUIRED");

    // Only the approved call wrote.
    let titles: Vec<&str> = r["list"]["result"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|note| note["title"].as_str())
        .collect();
    assert_eq!(titles, ["Asked"]);

    // The approved call's receipt records the consent: the question and
    // the answer as the client gave it.
    let consents: Vec<Value> = audit
        .snapshot()
        .iter()
        .filter_map(|receipt| receipt.as_approval())
        .filter_map(|approval| approval.consent.as_ref())
        .map(|consent| serde_json::to_value(consent).unwrap())
        .collect();
    assert!(
        consents.iter().any(|c| c["question"] == "approval-1"
            && c["answer"] == json!({"action": "accept", "content": {"approve": true}})),
        "{consents:?}"
    );
    server.shutdown().await.unwrap();
}

#[test]
fn the_page_renders_a_question_and_answers_it() {
    let mut server = NotesServer::start(&[]);
    let output = run_node("browser_ask.mjs", &[&server.page_url(), KEY]);
    let r = report(&output);
    assert!(
        r.get("failure").is_none(),
        "the browser run failed: {}",
        r["failure"]
    );
    assert_eq!(r["message"], "Place an order?");
    // One input per field, labelled by its description.
    let labels: Vec<&str> = r["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for label in [
        "count — How many.",
        "name — Who orders.",
        "size — Which size.",
    ] {
        assert!(
            labels.iter().any(|shown| shown.starts_with(label)),
            "{label} in {labels:?}"
        );
    }
    assert_eq!(r["size_options"], json!(["small", "large"]));
    assert_eq!(
        r["accepted"],
        json!({"action": "accept", "order": {
            "name": "Page", "count": 3, "size": "large", "gift": true, "note": null
        }})
    );
    assert_eq!(r["forms_after_answer"], 0);
    assert_eq!(r["declined"], json!({"action": "decline"}));
    assert_eq!(r["forms_after_decline"], 0);
    assert_eq!(r["console"], json!([]));
    assert!(server.is_running());
}
