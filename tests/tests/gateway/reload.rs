//! `gonk-gateway serve` follows its config file without a signal: an
//! edit adding a server is picked up, an edit that breaks the file is
//! refused (the old config keeps serving), and removing a server drops
//! its tools.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;
use serde_json::{json, Value};

const KEY: &str = "gateway-reload-key-0123456789abcdef";

fn write(path: &Path, servers: &Value) {
    std::fs::write(path, json!({"mcpServers": servers}).to_string()).unwrap();
}

fn fixture(args: &[&str]) -> Value {
    json!({"command": bin("mcp-source-fixture").display().to_string(), "args": args})
}

async fn names(client: &McpClient) -> Vec<String> {
    client
        .list_tools()
        .await
        .expect("tools/list answers")
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// Lists until `done` holds (bounded: a guard against a hang, not a
/// timing assertion); the last listing.
async fn until(client: &McpClient, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let mut listed = names(client).await;
    for _ in 0..300 {
        if done(&listed) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        listed = names(client).await;
    }
    listed
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_config_file_is_reloaded_without_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    write(&config, &json!({"fx": fixture(&["stdio"])}));
    let mut command = Command::new(bin("gonk-gateway"));
    command
        .arg("--config")
        .arg(&config)
        .args(["serve", "--port", "0", "--api-key", KEY]);
    let gw = ServerProcess::start(command);
    let client = McpClient::connect_http(&gw.url, McpHttpClientOptions::new().api_key(KEY))
        .await
        .expect("the gateway accepts the key");
    assert!(!names(&client).await.iter().any(|n| n.starts_with("two.")));

    // A second server is added by editing the file.
    write(
        &config,
        &json!({"fx": fixture(&["stdio"]), "two": fixture(&["stdio"])}),
    );
    let listed = until(&client, |l| l.iter().any(|n| n == "two.echo")).await;
    assert!(listed.iter().any(|n| n == "two.echo"), "{listed:?}");
    let output = collect_tool_outcome(client.invoke("two.echo", json!({"text": "new"})), |_| {})
        .await
        .expect("two.echo runs");
    assert_eq!(output.data["structuredContent"]["text"], "new");

    // A broken edit is refused; the servers stay.
    std::fs::write(&config, "{\"mcpServers\": {\"fx\": ").unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let listed = names(&client).await;
    assert!(
        listed.iter().any(|n| n == "two.echo") && listed.iter().any(|n| n == "fx.echo"),
        "{listed:?}"
    );

    // Removing a server drops its tools.
    write(&config, &json!({"fx": fixture(&["stdio"])}));
    let listed = until(&client, |l| !l.iter().any(|n| n.starts_with("two."))).await;
    assert!(!listed.iter().any(|n| n.starts_with("two.")), "{listed:?}");
    assert!(listed.iter().any(|n| n == "fx.echo"), "{listed:?}");
    client.close().await.unwrap();
}
