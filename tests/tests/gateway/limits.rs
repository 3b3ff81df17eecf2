//! `gonk-gateway --rate-limit N/PERIOD [--shared redis://…]` over MCP
//! HTTP: the call past a principal's budget is `RATE_LIMITED`; with
//! `--shared` two gateways draw on one budget on the binary's own Redis
//! (under a key prefix of this test's own, removed afterwards).

use std::path::Path;
use std::process::Command;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;
use serde_json::json;

/// This binary's Redis (`gonk_tools_tests::services`), started on first use.
fn redis_url() -> String {
    gonk_tools_tests::services::redis().url()
}
const KEY: &str = "gateway-limits-key-0123456789abcdef";

/// This test's key prefix; its keys are removed on drop.
struct Prefix(String);

impl Drop for Prefix {
    fn drop(&mut self) {
        // A failed test (maybe one whose server never started) leaves its
        // keys to the binary's own server, gone when the binary exits.
        if std::thread::panicking() {
            return;
        }
        let client = redis::Client::open(redis_url()).unwrap();
        let mut connection = client.get_connection().unwrap();
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:*", self.0))
            .query(&mut connection)
            .unwrap();
        if !keys.is_empty() {
            let _: () = redis::cmd("DEL").arg(keys).query(&mut connection).unwrap();
        }
    }
}

fn gateway(config: &Path, prefix: &str, limits: &[&str]) -> ServerProcess {
    let mut command = Command::new(bin("gonk-gateway"));
    command
        .env("GONK_GATEWAY_SHARED_PREFIX", prefix)
        .arg("--config")
        .arg(config)
        .args(limits)
        .args(["serve", "--port", "0", "--api-key", KEY]);
    ServerProcess::start(command)
}

fn config(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("gateway.json");
    let servers = json!({"mcpServers": {
        "fx": {"command": bin("mcp-source-fixture").display().to_string(), "args": ["stdio"]},
    }});
    std::fs::write(&path, servers.to_string()).unwrap();
    path
}

async fn echo(client: &McpClient) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(client.invoke("fx.echo", json!({"text": "hi"})), |_| {}).await
}

async fn connect(url: &str) -> McpClient {
    McpClient::connect_http(url, McpHttpClientOptions::new().api_key(KEY))
        .await
        .expect("the gateway accepts the key")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_call_past_the_budget_is_rate_limited() {
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(&config(dir.path()), "unused", &["--rate-limit", "2/1h"]);
    let client = connect(&gw.url).await;
    echo(&client).await.expect("first call fits");
    echo(&client).await.expect("second call fits");
    let error = echo(&client).await.expect_err("third is past 2/1h");
    assert_eq!(error.code, ErrorCode::RateLimited, "{error:?}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn two_gateways_sharing_redis_draw_on_one_budget() {
    let prefix = Prefix(format!("gonk-tests:gateway-limits:{}", std::process::id()));
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let redis = redis_url();
    let limits = ["--rate-limit", "3/1h", "--shared", &redis];
    let a = gateway(&config, &prefix.0, &limits);
    let b = gateway(&config, &prefix.0, &limits);
    let (a, b) = (connect(&a.url).await, connect(&b.url).await);
    echo(&a).await.expect("1 of 3");
    echo(&b).await.expect("2 of 3");
    echo(&a).await.expect("3 of 3");
    let error = echo(&b)
        .await
        .expect_err("the fourth, on the other gateway");
    assert_eq!(error.code, ErrorCode::RateLimited, "{error:?}");
    a.close().await.unwrap();
    b.close().await.unwrap();
}

#[test]
fn a_nats_store_is_refused_with_what_to_use_instead() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(config(dir.path()))
        // Refused before any connection: nothing listens on port 1.
        .args(["--shared", "nats://127.0.0.1:1", "list"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the gateway runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("keeps nothing on NATS") && stderr.contains("redis://"),
        "{stderr}"
    );
}
