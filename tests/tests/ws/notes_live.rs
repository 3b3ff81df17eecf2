//! One event source for every surface: a note created over MCP, and one
//! created by a background job, appear live on an open notes page
//! (headless Chromium) and reach a second WebSocket as broadcasts — the
//! WebSocket broadcast reads the registry's change events, not only what
//! arrived over `/ws`.

use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

use crate::support::{spawn_node, NotesServer, KEY};
use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::adapters::ws::{WsClient, WsClientOptions};
use gonk_tools::prelude::*;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_created_over_mcp_and_by_a_job_appear_on_the_page_and_a_second_socket() {
    let server = NotesServer::start(&["--allow-writes"]);
    let mut page = spawn_node(
        "browser_live.mjs",
        &[&server.page_url(), KEY, "From MCP", "From a job"],
    );
    let mut stdout = BufReader::new(page.stdout.take().unwrap());
    // The page is connected and has listed the (empty) notebook.
    let stdout = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line, "ready\n", "the page did not get ready");
        stdout
    })
    .await
    .unwrap();

    let watcher = WsClient::connect(&server.ws_url(), WsClientOptions::new().api_key(KEY))
        .await
        .unwrap();
    let mut broadcasts = watcher.broadcasts();

    let mcp = McpClient::connect_http(&server.mcp_url(), McpHttpClientOptions::new().api_key(KEY))
        .await
        .unwrap();
    let created = collect_tool_outcome(
        mcp.invoke("notes.create", json!({"title": "From MCP"})),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(created.data["title"], "From MCP");
    // A detached tool: its job creates the note (through notes.create).
    let launched = collect_tool_outcome(
        mcp.invoke("diag.create_later", json!({"title": "From a job"})),
        |_| {},
    )
    .await
    .unwrap();
    assert!(launched.data["jobId"].is_string(), "{}", launched.data);

    // The second socket hears both notes.create broadcasts.
    let mut titles = Vec::new();
    while titles.len() < 2 {
        let seen = tokio::time::timeout(Duration::from_secs(30), broadcasts.recv())
            .await
            .expect("a broadcast within 30 s")
            .unwrap();
        if seen.op == "notes.create" {
            titles.push(seen.payload["title"].as_str().unwrap().to_owned());
        }
    }
    titles.sort();
    assert_eq!(titles, ["From MCP", "From a job"]);

    // The page shows both, without a reload.
    let report: Value = tokio::task::spawn_blocking(move || {
        let mut rest = String::new();
        let mut stdout = stdout;
        stdout.read_to_string(&mut rest).unwrap();
        let status = page.wait().unwrap();
        assert!(
            status.success(),
            "the browser script failed: {status}\n{rest}"
        );
        serde_json::from_str(rest.lines().last().unwrap_or("")).unwrap()
    })
    .await
    .unwrap();
    assert!(report.get("failure").is_none(), "{}", report["failure"]);
    assert_eq!(report["initial"], json!([]));
    let mut shown: Vec<&str> = report["titles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    shown.sort();
    assert_eq!(shown, ["From MCP", "From a job"]);
    assert_eq!(report["console"], json!([]));
    mcp.close().await.unwrap();
}
