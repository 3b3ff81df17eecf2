//! The Rust MCP client transport ([`McpClient`]) against the real `notes`
//! binary, over stdio (`notes mcp`) and over HTTP (`notes serve`): a call
//! is an event stream like a local `registry.invoke` — results decode into
//! the tool's types, progress and log notifications arrive as events before
//! the result, errors keep their code and issues, and dropping the stream
//! cancels the handler in the server.

mod mcp_support;

use std::time::Duration;

use futures::StreamExt;
use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use mcp_support::{notes_command, wait_for_file, ServerProcess};

#[derive(Debug, Deserialize)]
struct Note {
    id: i64,
    title: String,
    tags: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Hits {
    hits: Vec<Hit>,
}

#[derive(Debug, Deserialize)]
struct Hit {
    id: i64,
}

async fn exercise(client: &McpClient, marker: &std::path::Path) {
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.iter().any(|n| n == "notes.export"), "{names:?}");
    assert!(!names.iter().any(|n| n == "diag.duplex"), "{names:?}");

    for (id, (title, tag)) in [("Release checklist", "release"), ("Rust ownership", "rust")]
        .into_iter()
        .enumerate()
    {
        let output = collect_tool_outcome(
            client.invoke("notes.create", json!({"title": title, "tags": [tag]})),
            |_| {},
        )
        .await
        .expect("notes.create");
        let note: Note = serde_json::from_value(output.data).expect("a Note");
        assert_eq!(note.id, id as i64 + 1);
        assert_eq!(note.title, title);
        assert_eq!(note.tags, [tag]);
    }
    let output = collect_tool_outcome(
        client.invoke("notes.search", json!({"query": "rust"})),
        |_| {},
    )
    .await
    .expect("notes.search");
    let hits: Hits = serde_json::from_value(output.data).expect("hits");
    assert_eq!(hits.hits.iter().map(|h| h.id).collect::<Vec<_>>(), [2]);

    // Progress and logs arrive as events, in order, before the result.
    let events: Vec<ToolEvent> = client
        .invoke("notes.export", json!({"format": "markdown"}))
        .collect()
        .await;
    let kinds: Vec<&str> = events.iter().map(ToolEvent::kind).collect();
    assert_eq!(
        kinds,
        ["log", "progress", "progress", "result"],
        "{events:?}"
    );
    let percents: Vec<Option<f64>> = events
        .iter()
        .filter_map(|e| match e {
            ToolEvent::Progress { percent, .. } => Some(*percent),
            _ => None,
        })
        .collect();
    assert_eq!(percents, [Some(50.0), Some(100.0)]);
    match &events[0] {
        ToolEvent::Log { level, message, .. } => {
            assert_eq!(*level, LogLevel::Info);
            assert_eq!(message, "exporting 2 notes");
        }
        other => panic!("expected a log event, got {other:?}"),
    }

    // Errors keep their code, message and issues.
    let error = collect_tool_outcome(client.invoke("notes.search", json!({"query": ""})), |_| {})
        .await
        .expect_err("an empty query is invalid");
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(
        error
            .issues()
            .iter()
            .map(|i| i.path.as_str())
            .collect::<Vec<_>>(),
        ["/query"]
    );
    let error = collect_tool_outcome(client.invoke("notes.get", json!({"id": 999})), |_| {})
        .await
        .expect_err("no note 999");
    assert_eq!(error.code, ErrorCode::custom("NOT_FOUND"));
    let error = collect_tool_outcome(client.invoke("diag.duplex", json!({})), |_| {})
        .await
        .expect_err("duplex tools are not served");
    assert_eq!(error.code, ErrorCode::ToolNotFound);
    assert_eq!(error.message, "Unknown tool: diag.duplex");

    // Dropping the stream cancels the call: the handler is dropped in the
    // server, and the connection keeps working.
    let mut sleep = client.invoke(
        "diag.sleep",
        json!({"ms": 60000, "marker": marker.display().to_string()}),
    );
    match sleep.next().await {
        Some(ToolEvent::Log { message, .. }) => assert_eq!(message, "sleeping for 60000 ms"),
        other => panic!("expected the handler's first log line, got {other:?}"),
    }
    drop(sleep);
    assert_eq!(
        wait_for_file(marker, Duration::from_secs(15)).as_deref(),
        Some("dropped")
    );
    let output = collect_tool_outcome(client.invoke("notes.get", json!({"id": 1})), |_| {})
        .await
        .expect("the session still works");
    assert_eq!(output.data["title"], "Release checklist");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut command = tokio::process::Command::from(notes_command());
    command.arg("--db").arg(&db).arg("mcp");
    let client = McpClient::connect_stdio(command).await.expect("connects");
    assert_eq!(client.server_info().expect("server info").name, "notes");
    exercise(&client, &dir.path().join("marker")).await;
    client.close().await.expect("closes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db").display().to_string();
    let mut command = notes_command();
    command.args([
        "--db",
        &db,
        "serve",
        "--port",
        "0",
        "--allow-writes",
        "--api-key",
        "s3cret",
    ]);
    let server = ServerProcess::start(command);
    let client =
        McpClient::connect_http(&server.url, McpHttpClientOptions::new().api_key("s3cret"))
            .await
            .expect("connects");
    exercise(&client, &dir.path().join("marker")).await;
    client.close().await.expect("closes");
}
