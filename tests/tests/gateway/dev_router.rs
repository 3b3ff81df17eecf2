//! `gonk-gateway serve` with a `devRouter` config, in front of two fixture
//! environments (`alpha`, `beta`: `mcp-source-fixture dev NAME` over HTTP),
//! over real HTTP: a session stays on the environment it was opened on
//! when the selection changes (and a new one goes to the new selection),
//! write tools are listed with `DEV TARGET: <env>` and the database and
//! their results say where they ran, the client's API key never reaches an
//! upstream while the environment's static header does, and an unknown
//! session gets `404` saying to reconnect.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use gonk_tools::adapters::mcp::{McpClient, McpEra, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;
use serde_json::{json, Value};

const KEY: &str = "dev-router-gateway-key-0123456789abcdef";
const ALPHA_TOKEN: &str = "alpha-static-token-0123";
const BETA_TOKEN: &str = "beta-static-token-4567";

/// The two environments, the gateway in front of them, and its config file.
struct Setup {
    gateway: ServerProcess,
    config: std::path::PathBuf,
    _alpha: ServerProcess,
    _beta: ServerProcess,
    _dir: tempfile::TempDir,
}

fn environment(name: &str) -> ServerProcess {
    let mut command = Command::new(bin("mcp-source-fixture"));
    command.args(["dev", name]);
    ServerProcess::start(command)
}

fn start() -> Setup {
    let (alpha, beta) = (environment("alpha"), environment("beta"));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    let body = json!({"devRouter": {
        "active": "alpha",
        "environments": {
            "alpha": {
                "url": alpha.url, "trust": true,
                "repo": "example/app", "branch": "main", "database": "app_alpha",
                "headers": {"X-Dev-Env-Token": ALPHA_TOKEN},
            },
            "beta": {
                "url": beta.url, "trust": true,
                "branch": "feature", "database": "app_beta",
                "headers": {"X-Dev-Env-Token": BETA_TOKEN},
            },
        },
    }});
    std::fs::write(&config, body.to_string()).unwrap();
    let mut command = Command::new(bin("gonk-gateway"));
    command
        .arg("--config")
        .arg(&config)
        .args(["serve", "--port", "0", "--api-key", KEY]);
    Setup {
        gateway: ServerProcess::start(command),
        config,
        _alpha: alpha,
        _beta: beta,
        _dir: dir,
    }
}

/// A 2025 client: one session, opened now.
async fn session(url: &str) -> McpClient {
    McpClient::builder()
        .era(McpEra::Session)
        .connect_http(url, McpHttpClientOptions::new().api_key(KEY))
        .await
        .expect("the gateway accepts the key")
}

async fn call(client: &McpClient, name: &str, input: Value) -> ToolOutput {
    collect_tool_outcome(client.invoke(name, input), |_| {})
        .await
        .unwrap_or_else(|e| panic!("{name} runs: {e:?}"))
}

/// The environment whose server answered (the fixture's own answer).
async fn answered_by(client: &McpClient) -> String {
    let output = call(client, "dev.whoami", json!({})).await;
    output.data["structuredContent"]["environment"]
        .as_str()
        .unwrap_or_else(|| panic!("whoami answers its environment: {:?}", output.data))
        .to_owned()
}

async fn description(client: &McpClient, name: &str) -> String {
    let tools = client.list_tools().await.expect("tools/list answers");
    let tool = tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} is listed"));
    tool.description.as_deref().unwrap_or_default().to_owned()
}

/// `gonk-gateway --config FILE dev use ENV`.
fn use_environment(config: &Path, name: &str) {
    let status = Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(config)
        .args(["dev", "use", name])
        .status()
        .expect("gonk-gateway runs");
    assert!(status.success(), "dev use {name} succeeds");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_stays_on_its_environment_after_the_selection_changes() {
    let setup = start();
    let url = &setup.gateway.url;
    let on_alpha = session(url).await;
    assert_eq!(answered_by(&on_alpha).await, "alpha");

    use_environment(&setup.config, "beta");
    // The gateway follows the file (bounded: a guard against a hang, not a
    // timing assertion): a session opened now goes to beta.
    let mut on_beta = session(url).await;
    for _ in 0..100 {
        if answered_by(&on_beta).await == "beta" {
            break;
        }
        on_beta.close().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        on_beta = session(url).await;
    }
    assert_eq!(answered_by(&on_beta).await, "beta");

    // The session opened on alpha is still there, listing alpha's target.
    assert_eq!(answered_by(&on_alpha).await, "alpha");
    let write = call(&on_alpha, "dev.write_row", json!({"row": "r1"})).await;
    assert_eq!(write.data["structuredContent"]["environment"], "alpha");
    assert!(description(&on_alpha, "dev.write_row")
        .await
        .starts_with("DEV TARGET: alpha"));
    assert!(description(&on_beta, "dev.write_row")
        .await
        .starts_with("DEV TARGET: beta"));

    // Without a session (the 2026 revision) a request goes to the active
    // environment, or to the one its Gonk-Dev-Environment header names.
    let stateless = McpClient::builder()
        .era(McpEra::Stateless)
        .connect_http(url, McpHttpClientOptions::new().api_key(KEY))
        .await
        .expect("a stateless client connects");
    assert_eq!(answered_by(&stateless).await, "beta");
    let asking = McpClient::builder()
        .era(McpEra::Stateless)
        .connect_http(
            url,
            McpHttpClientOptions::new()
                .api_key(KEY)
                .header("Gonk-Dev-Environment", "alpha")
                .unwrap(),
        )
        .await
        .expect("a stateless client connects");
    assert_eq!(answered_by(&asking).await, "alpha");
    for client in [on_alpha, on_beta, stateless, asking] {
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn write_tools_are_marked_and_write_results_say_where_they_ran() {
    let setup = start();
    let client = session(&setup.gateway.url).await;
    let write = description(&client, "dev.write_row").await;
    assert!(
        write.starts_with("DEV TARGET: alpha (database app_alpha, repo example/app, branch main)"),
        "{write}"
    );
    // Read-only tools (the environment is trusted, so its readOnlyHint
    // counts) carry no marker.
    for read in ["dev.whoami", "dev.seen_headers"] {
        let text = description(&client, read).await;
        assert!(!text.contains("DEV TARGET"), "{read}: {text}");
    }

    let output = call(&client, "dev.write_row", json!({"row": "r2"})).await;
    assert_eq!(
        output.data["routedTo"],
        json!({"environment": "alpha", "database": "app_alpha", "repo": "example/app", "branch": "main"})
    );
    assert_eq!(
        output.data["structuredContent"],
        json!({"environment": "alpha", "row": "r2"})
    );
    let shown = format!("{:?}", output.display);
    assert!(
        shown.contains("Routed to dev environment alpha (database app_alpha"),
        "{shown}"
    );
    // A read says nothing of routing.
    let read = call(&client, "dev.whoami", json!({})).await;
    assert!(read.data.get("routedTo").is_none(), "{:?}", read.data);
    client.close().await.unwrap();
}

/// The (name, value) pairs an environment's server has received.
async fn seen_headers(client: &McpClient) -> Vec<(String, String)> {
    let output = call(client, "dev.seen_headers", json!({})).await;
    serde_json::from_value(output.data["structuredContent"]["headers"].clone())
        .expect("pairs of strings")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_clients_credential_never_reaches_an_upstream() {
    let setup = start();
    let client = session(&setup.gateway.url).await;
    call(&client, "dev.write_row", json!({"row": "r3"})).await;
    let to_beta = McpClient::builder()
        .era(McpEra::Stateless)
        .connect_http(
            &setup.gateway.url,
            McpHttpClientOptions::new()
                .api_key(KEY)
                .header("Gonk-Dev-Environment", "beta")
                .unwrap(),
        )
        .await
        .expect("a stateless client connects");
    call(&to_beta, "dev.write_row", json!({"row": "r4"})).await;

    for (seen, own, other) in [
        (seen_headers(&client).await, ALPHA_TOKEN, BETA_TOKEN),
        (seen_headers(&to_beta).await, BETA_TOKEN, ALPHA_TOKEN),
    ] {
        assert!(
            seen.contains(&("x-dev-env-token".to_owned(), own.to_owned())),
            "the environment's static header arrives: {seen:?}"
        );
        for (name, value) in &seen {
            assert!(
                !value.contains(KEY) && !value.contains(other),
                "{name}: {value} reached an upstream"
            );
            assert_ne!(name, "gonk-dev-environment", "{seen:?}");
        }
    }
    client.close().await.unwrap();
    to_beta.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_session_gets_404_saying_to_reconnect() {
    let setup = start();
    let http = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client");
    let request = |key: Option<&str>| {
        let mut request = http
            .post(&setup.gateway.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", "no-such-session")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string());
        if let Some(key) = key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        request
    };
    // Credentials are checked first.
    let anonymous = request(None).send().await.expect("the gateway answers");
    assert_eq!(anonymous.status().as_u16(), 401);

    let answer = request(Some(KEY))
        .send()
        .await
        .expect("the gateway answers");
    assert_eq!(answer.status().as_u16(), 404);
    let body: Value = answer.json().await.expect("a JSON-RPC error");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Reconnect"), "{body}");
    assert!(message.contains("initialize"), "{body}");

    // A session that was opened and then ended is unknown too.
    let opened = http
        .post(&setup.gateway.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {KEY}"))
        .body(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "dev-router-test", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .expect("the gateway answers");
    assert_eq!(opened.status().as_u16(), 200);
    assert_eq!(
        opened.headers()["gonk-dev-environment"].to_str().unwrap(),
        "alpha"
    );
    let id = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(opened);
    let deleted = http
        .delete(&setup.gateway.url)
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-06-18")
        .header("authorization", format!("Bearer {KEY}"))
        .send()
        .await
        .expect("the gateway answers");
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let ended = http
        .post(&setup.gateway.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", &id)
        .header("authorization", format!("Bearer {KEY}"))
        .body(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string())
        .send()
        .await
        .expect("the gateway answers");
    assert_eq!(ended.status().as_u16(), 404);
    let body: Value = ended.json().await.expect("a JSON-RPC error");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Reconnect")),
        "{body}"
    );
}
