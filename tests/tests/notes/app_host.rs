//! The notes board as an MCP App in a real host: a page built on the
//! official `@modelcontextprotocol/ext-apps` `AppBridge` and the TypeScript
//! SDK's client (`tests/clients/apps_host/`), in Debian's headless
//! Chromium, against `notes serve --approval ask`. The host keeps the
//! app-only `notes.board` from its model's tool list, calls `notes.search`,
//! renders `ui://notes/board` in a frame sandboxed to `allow-scripts` under
//! the CSP the resource declares, and the app creates a note through the
//! bridge (its user approving the write) that a following `notes.search`
//! over MCP finds; a declined write shows the error in the app. The script
//! (`tests/clients/apps_host.mjs`) only observes; the assertions are here.
//! `GONK_BLESS=1` also rewrites the screenshot `docs/notes-app.png`.

use std::process::Command;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::clients::{install, report, run_node_in};
use gonk_tools_tests::golden;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::{notes_command, root};
use serde_json::Value;

const KEY: &str = "apps-host-key";

fn seed(db: &str, title: &str, tags: &str) {
    let output = Command::new(gonk_tools_tests::workspace::bin("notes"))
        .args(["--db", db, "notes.create", title, "--tags", tags])
        .output()
        .expect("run the notes CLI");
    assert!(output.status.success(), "{output:?}");
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("a list of strings, got {value}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["host"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} is listed: {}", report["host"]["tools"]))
}

async fn search_titles(url: &str, query: &str) -> Vec<String> {
    let client = McpClient::connect_http(url, McpHttpClientOptions::new().api_key(KEY))
        .await
        .expect("connect to notes serve");
    let found = collect_tool_outcome(
        client.invoke("notes.search", json!({"query": query})),
        |_| {},
    )
    .await
    .expect("notes.search over MCP");
    found.data["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["title"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_host_renders_the_board_and_the_app_creates_a_note_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db").to_string_lossy().into_owned();
    seed(&db, "Board planning", "board");
    seed(&db, "Groceries", "home");

    let mut command = notes_command();
    command.args([
        "--db",
        &db,
        "--approval",
        "ask",
        "serve",
        "--port",
        "0",
        "--api-key",
        KEY,
    ]);
    let mut server = ServerProcess::start(command);

    let node_dir = install(
        "install-ws-clients",
        "WS_CLIENTS_DIR",
        "ws-clients",
        "the MCP Apps host test needs node/npm and Debian's chromium",
    )
    .join("node");
    let host_dir = root().join("tests").join("clients").join("apps_host");
    let screenshot = dir.path().join("notes-app.png");
    let args = [
        host_dir.to_str().unwrap().to_owned(),
        server.url.clone(),
        KEY.to_owned(),
        screenshot.to_str().unwrap().to_owned(),
        "board".to_owned(),
    ];
    let output = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_node_in(&node_dir, "apps_host.mjs", &args)
    })
    .await
    .unwrap();
    let r = report(&output);
    assert!(
        r.get("failure").is_none(),
        "the browser run failed: {}\nhost: {}",
        r["failure"],
        r["host"]
    );
    let host = &r["host"];
    assert_eq!(host["errors"], json!([]), "{host}");

    // tools/list: the link, in both forms; the app-only tool is listed for
    // the host, which keeps it from its model.
    let search = tool(&r, "notes.search");
    assert_eq!(search["ui"]["resourceUri"], "ui://notes/board");
    assert_eq!(search["legacyResourceUri"], "ui://notes/board");
    let board = tool(&r, "notes.board");
    assert_eq!(board["ui"]["visibility"], json!(["app"]));
    let model = strings(&host["modelTools"]);
    assert!(!model.contains(&"notes.board"), "{model:?}");
    for name in ["notes.search", "notes.create", "notes.list"] {
        assert!(model.contains(&name), "{name} is the model's: {model:?}");
    }

    // The resource: an app, with its CSP (nothing external declared).
    assert_eq!(host["resource"]["uri"], "ui://notes/board");
    assert_eq!(host["resource"]["mimeType"], "text/html;profile=mcp-app");
    assert!(host["resource"]["ui"]["csp"].is_object(), "{host}");
    assert_eq!(host["resource"]["ui"]["prefersBorder"], true);

    // The frame: sandboxed to scripts only (an opaque origin), under the
    // policy built from the CSP, and the policy holds from the inside.
    let policy = host["frame"]["policy"].as_str().unwrap();
    assert_eq!(host["frame"]["sandbox"], "allow-scripts");
    assert!(policy.starts_with("default-src 'none'; "), "{policy}");
    assert!(policy.contains("connect-src 'none'"), "{policy}");
    let inside = &r["inside"];
    assert_eq!(inside["policy"], policy);
    assert_eq!(inside["origin"], "null");
    assert_eq!(inside["parentDocument"], "denied");
    assert_eq!(inside["fetched"], "failed");
    assert_eq!(inside["violations"], json!(["connect-src"]));
    assert!(
        r["frameHeight"].as_f64().unwrap() > 300.0,
        "the frame follows the app's size"
    );
    assert!(!host["sizes"].as_array().unwrap().is_empty());
    assert_eq!(host["appVersion"]["name"], "notes-board");

    // The app shows the search that opened it (tool-input, tool-result) and
    // its own state from the app-only tool.
    let initial = &r["initial"];
    assert_eq!(initial["status"], "ready");
    assert_eq!(initial["query"], "board");
    assert_eq!(strings(&initial["results"]), ["Board planning"]);
    assert_eq!(initial["boardSummary"], "2 notes");
    assert_eq!(strings(&initial["notes"]), ["Groceries", "Board planning"]);

    // Created in the app, approved by the host's user.
    let approvals = host["approvals"].as_array().unwrap();
    assert_eq!(approvals.len(), 2, "{approvals:?}");
    assert_eq!(approvals[0]["answer"], "accept");
    assert_eq!(approvals[1]["answer"], "decline");
    assert!(
        r["approvalMessage"]
            .as_str()
            .unwrap()
            .contains("notes.create"),
        "{}",
        r["approvalMessage"]
    );
    let after = &r["afterCreate"];
    assert_eq!(after["error"], "");
    assert_eq!(after["boardSummary"], "3 notes");
    assert_eq!(strings(&after["notes"])[0], "Made in the app");
    assert_eq!(strings(&after["boardTags"]), ["board 2", "app 1", "home 1"]);
    // Declined: nothing written, and the app says why.
    let declined = r["afterDecline"]["error"].as_str().unwrap();
    assert!(declined.contains("APPROVAL_DENIED"), "{declined}");
    assert_eq!(r["afterDecline"]["boardSummary"], "3 notes");
    assert_eq!(strings(&r["afterSearch"]["results"]), ["Made in the app"]);

    // Every call of the app went through the bridge, the app-only one too.
    assert_eq!(
        strings(&host["appCalls"]),
        [
            "notes.board",
            "notes.create",
            "notes.board",
            "notes.create",
            "notes.search"
        ]
    );
    assert_eq!(host["refusedAppCalls"], json!([]));

    // The only console errors are the CSP's, refusing the probe's fetch.
    for line in strings(&r["console"]) {
        assert!(
            line.contains("Content Security Policy"),
            "unexpected console error: {line}"
        );
    }

    // A following notes.search over MCP finds the app's note, not the declined one.
    assert_eq!(
        search_titles(&server.url, "Made in the app").await,
        ["Made in the app"]
    );
    assert!(search_titles(&server.url, "Declined").await.is_empty());

    let png = std::fs::read(&screenshot).expect("the screenshot was taken");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    if golden::blessing() {
        std::fs::write(root().join("docs").join("notes-app.png"), &png).unwrap();
    }
    assert!(server.is_running());
}
