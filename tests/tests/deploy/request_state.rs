//! A `2026-07-28` asking call through the balancer: `notes serve
//! --approval ask` asks before `notes.create`; the retry with the answer
//! lands on another replica, which opens the sealed `requestState` with
//! the shared key ring (`GONK_MCP_REQUEST_STATE_KEYS`) and creates the
//! note; a replay of that state on the third replica is refused (used
//! states are kept on Redis with `--shared`). Without a shared ring the
//! other replica cannot open the state.

use std::net::SocketAddr;

use crate::support::{call, redis_url, replica, Deployment, Recipe, RedisPrefix};
use serde_json::{json, Value};

const KEYS: &str = "a=YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=";

/// The question: (replica, input key, requestState).
fn ask(at: SocketAddr, title: &str) -> (String, String, String) {
    let answer = call(
        at,
        "notes.create",
        json!({ "title": title }),
        json!({}),
        &[],
    );
    let result = answer.message()["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let key = result["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .expect("one input request");
    let state = result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    (replica(&answer), key, state)
}

/// The retry with the approval: (replica, JSON-RPC message).
fn retry(at: SocketAddr, title: &str, key: &str, state: &str) -> (String, Value) {
    let answers = json!({ key: { "action": "accept", "content": { "approve": true } } });
    let answer = call(
        at,
        "notes.create",
        json!({ "title": title }),
        json!({ "inputResponses": answers, "requestState": state }),
        &[],
    );
    (replica(&answer), answer.message())
}

fn deployment(keys: Option<&str>, prefix: &RedisPrefix) -> Deployment {
    let mut env = vec![("NOTES_SHARED_PREFIX".to_owned(), prefix.0.clone())];
    if let Some(keys) = keys {
        env.push(("GONK_MCP_REQUEST_STATE_KEYS".to_owned(), keys.to_owned()));
    }
    Deployment::start(Recipe {
        shared: Some(redis_url()),
        serve: vec!["--approval".into(), "ask".into()],
        env,
        ..Recipe::default()
    })
}

#[test]
fn a_retry_on_another_replica_verifies_with_the_shared_key_and_opens_once() {
    let prefix = RedisPrefix::new("request-state");
    let deployment = deployment(Some(KEYS), &prefix);
    let at = deployment.addr;
    let (asked_on, key, state) = ask(at, "approved elsewhere");
    let (done_on, done) = retry(at, "approved elsewhere", &key, &state);
    assert_ne!(asked_on, done_on, "the retry went to the next replica");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["title"], "approved elsewhere",
        "{done}"
    );

    let (replayed_on, replayed) = retry(at, "approved elsewhere", &key, &state);
    assert!(
        replayed_on != asked_on && replayed_on != done_on,
        "the third replica"
    );
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert_eq!(
        replayed["error"]["data"]["requestState"], "replayed",
        "{replayed}"
    );

    let stored = crate::support::stored_notes(&deployment.db);
    let titled = stored
        .iter()
        .filter(|n| n["title"] == "approved elsewhere")
        .count();
    assert_eq!(titled, 1, "{stored:?}");
}

#[test]
fn without_a_shared_key_ring_another_replica_cannot_open_the_state() {
    let prefix = RedisPrefix::new("request-state-unshared");
    let deployment = deployment(None, &prefix);
    let at = deployment.addr;
    let (asked_on, key, state) = ask(at, "sealed elsewhere");
    let (refused_on, refused) = retry(at, "sealed elsewhere", &key, &state);
    assert_ne!(asked_on, refused_on);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requestState"], "tampered",
        "{refused}"
    );
    assert!(crate::support::stored_notes(&deployment.db).is_empty());
}
