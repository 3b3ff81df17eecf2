//! The notes' resources, prompt and completions through the real Python
//! SDK (`mcp` on PyPI) against `notes serve`, in both protocol eras: list
//! and read `notes://{id}` (Markdown, tags in `_meta`), `notes://recent`, a
//! missing note, the `summarize` prompt with the note embedded, completion
//! of a tag prefix and of note ids, and an update of `notes://1` heard on
//! one connection after `notes.rename` on another — through
//! `subscriptions/listen` in 2026-07-28, `resources/subscribe` in 2025.

use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

fn serve() -> (tempfile::TempDir, ServerProcess) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut command = notes_command();
    command.args([
        "--db",
        db.to_str().unwrap(),
        "serve",
        "--port",
        "0",
        "--allow-writes",
    ]);
    (dir, ServerProcess::start(command))
}

fn check(report: &Value, era: &str) {
    assert_eq!(report["protocol_version"], era);

    let resources = report["resources"].as_array().unwrap();
    assert!(
        resources.iter().any(|r| r["uri"] == "notes://recent"),
        "{resources:?}"
    );
    let templates: Vec<&str> = report["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert!(templates.contains(&"notes://{id}"), "{templates:?}");
    assert!(templates.contains(&"notes://tag/{tag}"), "{templates:?}");

    let read = &report["read"]["contents"][0];
    assert_eq!(read["uri"], "notes://1");
    assert_eq!(read["mimeType"], "text/markdown");
    assert!(read["text"]
        .as_str()
        .unwrap()
        .starts_with("# Release checklist\n"));
    assert_eq!(read["_meta"]["tags"], json!(["release", "rust"]));

    let recent: Value =
        serde_json::from_str(report["recent"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(recent.as_array().unwrap().len(), 2);

    // The notes board, an MCP App: listed and read with its `_meta.ui` (a
    // CSP that declares no domain), as an HTML page.
    let listed = resources
        .iter()
        .find(|r| r["uri"] == "ui://notes/board")
        .unwrap_or_else(|| panic!("the board is listed: {resources:?}"));
    assert_eq!(listed["mimeType"], "text/html;profile=mcp-app");
    let app = &report["app"]["contents"][0];
    assert_eq!(app["uri"], "ui://notes/board");
    assert_eq!(app["mimeType"], "text/html;profile=mcp-app");
    assert!(app["_meta"]["ui"]["csp"].is_object(), "{app}");
    assert_eq!(app["_meta"]["ui"], listed["_meta"]["ui"]);
    assert!(app["text"].as_str().unwrap().starts_with("<!doctype html>"));

    // A missing note is a protocol error naming the URI, never empty contents.
    assert_eq!(report["read_missing"]["type"], "MCPError");
    assert!(
        report["read_missing"]["text"]
            .as_str()
            .unwrap()
            .contains("notes://999"),
        "{}",
        report["read_missing"]
    );

    let prompt = report["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "summarize")
        .expect("summarize is listed");
    assert_eq!(
        prompt["arguments"][0],
        json!({"name": "id", "description": "The id of the note to summarize.", "required": true})
    );
    let messages = report["prompt"]["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"]["type"], "resource");
    assert_eq!(messages[0]["content"]["resource"]["uri"], "notes://1");
    assert!(messages[1]["content"]["text"]
        .as_str()
        .unwrap()
        .contains("bullet"));

    assert_eq!(
        report["complete_tag"]["completion"]["values"],
        json!(["release"])
    );
    assert_eq!(
        report["complete_id"]["completion"]["values"],
        json!(["1", "2"])
    );

    // The update of the watched note, from the other connection's rename;
    // note 2 was renamed too and is not watched.
    let updates = report["updates"].as_array().unwrap();
    assert!(!updates.is_empty(), "no update heard: {report}");
    for update in updates {
        let text = update.to_string();
        assert!(
            text.contains("notes://1") && !text.contains("notes://2"),
            "{text}"
        );
    }
    assert!(report["read_after"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("# Release checklist v2\n"));
}

#[test]
fn python_sdk_reads_gets_completes_and_hears_updates_in_2026() {
    let (_dir, mut server) = serve();
    let output = run_python("python_resources.py", &["auto", &server.url]);
    check(&report(&output), "2026-07-28");
    assert!(server.is_running());
}

#[test]
fn python_sdk_reads_gets_completes_and_hears_updates_in_2025() {
    let (_dir, mut server) = serve();
    let output = run_python("python_resources.py", &["legacy", &server.url]);
    check(&report(&output), "2025-11-25");
    assert!(server.is_running());
}
