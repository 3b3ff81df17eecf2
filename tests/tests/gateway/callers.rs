//! `gonk-gateway serve` with `callers` in its config, over MCP HTTP: two
//! API keys see different unions, a hidden tool answers exactly like a
//! missing one, and a caller whose approval is `ask` is asked (an MCP
//! elicitation) before an imported (`exec`) tool runs.

use std::process::Command;
use std::sync::{Arc, Mutex};

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::ask::Elicited;
use gonk_tools::prelude::*;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;
use serde_json::{json, Value};

const UPSTREAM_KEY: &str = "callers-upstream-key-0123456789abcdef";
const ALICE_KEY: &str = "callers-alice-key-0123456789abcdef";
const BOB_KEY: &str = "callers-bob-key-0123456789abcdef";

/// `fx` (stdio) and `web` (HTTP) fixtures; alice may use fx's tools,
/// approved by the config; bob `web.echo` and `fx.echo`, asked first.
fn start() -> (ServerProcess, ServerProcess, tempfile::TempDir) {
    let mut web = Command::new(bin("mcp-source-fixture"));
    web.args(["http", UPSTREAM_KEY]);
    let web = ServerProcess::start(web);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    let body = json!({
        "mcpServers": {
            "fx": {"command": bin("mcp-source-fixture").display().to_string(), "args": ["stdio"]},
            "web": {"url": web.url, "headers": {"Authorization": format!("Bearer {UPSTREAM_KEY}")}},
        },
        "callers": {
            "alice": {"key": "${GW_ALICE_KEY}", "tools": ["fx.*"], "approval": "granted"},
            "bob": {"key": BOB_KEY, "tools": ["web.echo", "fx.echo"]},
        },
    });
    std::fs::write(&config, body.to_string()).unwrap();
    let mut command = Command::new(bin("gonk-gateway"));
    command
        .env("GW_ALICE_KEY", ALICE_KEY)
        .arg("--config")
        .arg(&config)
        .args(["serve", "--port", "0"]);
    (ServerProcess::start(command), web, dir)
}

async fn connect(url: &str, key: &str) -> McpClient {
    McpClient::connect_http(url, McpHttpClientOptions::new().api_key(key))
        .await
        .expect("the gateway accepts the key")
}

async fn names(client: &McpClient) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list answers")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

async fn call(client: &McpClient, name: &str, input: Value) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(client.invoke(name, input), |_| {}).await
}

#[tokio::test(flavor = "multi_thread")]
async fn two_keys_see_different_unions_and_hidden_tools_read_as_missing() {
    let (gw, _web, _dir) = start();
    let alice = connect(&gw.url, ALICE_KEY).await;
    let bob = connect(&gw.url, BOB_KEY).await;

    let alice_sees = names(&alice).await;
    assert!(alice_sees.contains(&"fx.echo".to_owned()), "{alice_sees:?}");
    assert!(alice_sees.contains(&"fx.slow".to_owned()), "{alice_sees:?}");
    assert!(
        alice_sees.iter().all(|n| n.starts_with("fx.")),
        "alice sees only fx: {alice_sees:?}"
    );
    assert_eq!(names(&bob).await, ["fx.echo", "web.echo"]);

    // alice's fx calls run (approved by the config).
    let output = call(&alice, "fx.echo", json!({"text": "alice"}))
        .await
        .expect("alice may call fx.echo");
    assert_eq!(output.data["structuredContent"]["text"], "alice");

    // web.echo exists (bob sees it) but is hidden from alice: its answer
    // is the answer for a tool that exists nowhere, name aside.
    let hidden = call(&alice, "web.echo", json!({"text": "x"}))
        .await
        .expect_err("hidden from alice");
    let missing = call(&alice, "web.nothing", json!({"text": "x"}))
        .await
        .expect_err("missing");
    assert_eq!(hidden.code, ErrorCode::ToolNotFound, "{hidden:?}");
    assert_eq!(hidden.code, missing.code);
    assert_eq!(
        hidden.message.replace("web.echo", "NAME"),
        missing.message.replace("web.nothing", "NAME")
    );
    assert_eq!(hidden.details, missing.details);

    // A key no caller has is refused.
    let refused = McpClient::connect_http(
        &gw.url,
        McpHttpClientOptions::new().api_key("callers-nobody-key-0123456789abcdef"),
    )
    .await;
    assert!(refused.is_err(), "an unknown key is refused");
    alice.close().await.unwrap();
    bob.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_caller_with_approval_ask_is_asked_before_an_imported_tool_runs() {
    let (gw, _web, _dir) = start();
    // Without an elicitation hook bob cannot be asked: the call is refused.
    let plain = connect(&gw.url, BOB_KEY).await;
    let error = call(&plain, "web.echo", json!({"text": "unasked"}))
        .await
        .expect_err("bob must approve first");
    assert_eq!(error.code, ErrorCode::ApprovalRequired, "{error:?}");
    plain.close().await.unwrap();

    // With one, bob is asked, accepts, and the call runs.
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&asked);
    let bob = McpClient::builder()
        .on_elicitation(move |request| {
            seen.lock().unwrap().push(request.message);
            async { Elicited::Accepted(json!({"approve": true})) }
        })
        .connect_http(&gw.url, McpHttpClientOptions::new().api_key(BOB_KEY))
        .await
        .expect("the gateway accepts bob");
    let output = call(&bob, "web.echo", json!({"text": "approved"}))
        .await
        .expect("runs once approved");
    assert_eq!(output.data["structuredContent"]["text"], "approved");
    assert_eq!(asked.lock().unwrap().len(), 1, "asked once: {asked:?}");
    bob.close().await.unwrap();
}
