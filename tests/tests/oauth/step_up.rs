//! Scope step-up: a `notes:read` token calling `notes.create` (which needs
//! `notes:write`) gets `403` with `error="insufficient_scope"` naming the
//! scope and the metadata; nothing runs; the tool stays listed; a
//! `notes:write` token calls it.

use gonk_tools::adapters::mcp::McpEra;
use serde_json::json;

use crate::support::{bearer, raw_call_of, Protected};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_scope_is_a_403_step_up_not_a_hidden_tool() {
    let server = Protected::start().await;
    let read = server.token("notes:read");
    let create = json!({"title": "t"});
    let (status, challenge, body) = raw_call_of(
        &server.url,
        "notes.create",
        create.clone(),
        &[("authorization", &bearer(&read))],
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let metadata = server
        .url
        .replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        challenge,
        format!("Bearer error=\"insufficient_scope\", scope=\"notes:write\", resource_metadata=\"{metadata}\"")
    );
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], "c1", "{answer}");
    assert_eq!(server.runs(), 0, "nothing ran");

    // Still listed, in both eras.
    for era in [McpEra::Session, McpEra::Stateless] {
        let client = server.client(era, &read).await.unwrap();
        let names: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect();
        assert!(names.contains(&"notes.create".to_owned()), "{names:?}");
        // The session era's call gets the same 403.
        let refused = gonk_tools::prelude::collect_tool_outcome(
            client.invoke("notes.create", create.clone()),
            |_| {},
        )
        .await;
        assert!(refused.is_err(), "{era:?}");
        client.close().await.unwrap();
    }
    assert_eq!(server.runs(), 0);

    let write = server.token("notes:read notes:write");
    let (status, _, body) = raw_call_of(
        &server.url,
        "notes.create",
        create,
        &[("authorization", &bearer(&write))],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.runs(), 1);
}
