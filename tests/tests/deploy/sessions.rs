//! A 2025 (session) client through the same balancer: its `initialize`
//! opens a session in one replica's memory, and HAProxy sends every
//! request carrying that `Mcp-Session-Id` to that replica (a stick table
//! on the header), while session-free requests keep going round robin.

use std::collections::BTreeSet;

use crate::support::raw_http::Session;
use crate::support::{call, replica, Deployment, Recipe};
use serde_json::json;

#[test]
fn a_session_sticks_to_its_replica_while_stateless_requests_rotate() {
    let deployment = Deployment::start(Recipe::default());
    let mut session = Session::open(&deployment.url, &[]);
    let mut on = BTreeSet::new();
    for id in 0..4 {
        let answer = session
            .post(&json!({ "jsonrpc": "2.0", "id": 200 + id, "method": "tools/list" }).to_string());
        assert_eq!(answer.status, 200, "{}", answer.text());
        assert!(
            answer.message()["result"]["tools"].is_array(),
            "{}",
            answer.text()
        );
        on.insert(replica(&answer));
    }
    session.call_succeeds("notes.search", json!({ "query": "sticky" }), "four lists");
    assert_eq!(on.len(), 1, "one replica holds the session: {on:?}");

    // Between the session's requests, session-free ones still rotate.
    let rotated: BTreeSet<String> = (0..3)
        .map(|_| {
            replica(&call(
                deployment.addr,
                "notes.search",
                json!({ "query": "sticky" }),
                json!({}),
                &[],
            ))
        })
        .collect();
    assert_eq!(rotated.len(), 3, "{rotated:?}");
}
