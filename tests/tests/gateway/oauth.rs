//! `gonk-gateway` in front of an upstream behind OAuth (a mock in this
//! process: our MCP endpoint behind a bearer check, its protected resource
//! metadata and a toy authorization server that approves at once): `list`
//! says the upstream needs a login; `login notes` prints the URL to open,
//! takes the browser's return on its loopback port and keeps the token in
//! the `tokenStore` file (`0600`); later runs list and call through with
//! it; and the upstream only ever sees the gateway's token, never the key a
//! caller of the gateway presented.

use std::process::Stdio;
use std::time::Duration;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::mock_oauth::{MockOAuth, MockOptions};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;
use tokio::io::{AsyncBufReadExt, BufReader};

const ALICE_KEY: &str = "oauth-gateway-alice-key-0123456789abcdef";

/// A config with the mock as upstream `notes` (its token in
/// `tokens/notes.json` beside the config) and caller alice.
fn write_config(dir: &std::path::Path, upstream: &str) -> std::path::PathBuf {
    let config = dir.join("gateway.json");
    let body = json!({
        "mcpServers": {
            "notes": {
                "url": upstream,
                "auth": {"oauth": {"scopes": ["notes:read"], "tokenStore": "tokens/notes.json"}},
            },
        },
        "callers": {
            "alice": {"key": ALICE_KEY, "tools": ["*"], "approval": "granted"},
        },
    });
    std::fs::write(&config, body.to_string()).unwrap();
    config
}

async fn gateway(config: &std::path::Path, args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .await
        .expect("the gateway runs")
}

/// Runs `login notes`, and plays the person: opens the URL it prints (the
/// mock approves at once and redirects to the gateway's loopback port).
async fn login(config: &std::path::Path) -> std::process::Output {
    let mut child = tokio::process::Command::new(bin("gonk-gateway"))
        .arg("--config")
        .arg(config)
        .args(["login", "notes"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("login starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(60), stderr.next_line())
            .await
            .expect("login prints the URL to open")
            .unwrap()
            .unwrap_or_else(|| panic!("login ended without a URL:\n{}", said.join("\n")));
        said.push(line.clone());
        if let Some(url) = line.trim().strip_prefix("http") {
            break format!("http{url}");
        }
    };
    assert!(
        said.iter().any(|line| line.contains("Open this URL")),
        "{said:?}"
    );
    let browser = gonk_tools::adapters::http::OutboundHttp::new()
        .client_builder()
        .expect("an HTTP client builder")
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let approved = browser
        .get(&url)
        .send()
        .await
        .expect("the authorization page");
    let back = approved
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|location| location.to_str().ok())
        .expect("the authorization server sends the browser back")
        .to_owned();
    assert!(back.starts_with("http://127.0.0.1:"), "{back}");
    let page = browser
        .get(&back)
        .send()
        .await
        .expect("the gateway answers");
    assert!(page
        .text()
        .await
        .unwrap()
        .contains("Authorization complete"));
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("login ends")
        .unwrap();
    let mut rest = Vec::new();
    while let Ok(Some(line)) = stderr.next_line().await {
        rest.push(line);
    }
    assert!(
        output.status.success(),
        "login failed: {}\n{}",
        said.join("\n"),
        rest.join("\n")
    );
    output
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_once_then_list_and_call_through_without_the_callers_key_reaching_the_upstream() {
    let mock = MockOAuth::start(MockOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &mock.url);

    // Before any login: the upstream is not served, and the gateway says
    // how to log in.
    let listed = gateway(&config, &["list"]).await;
    let stderr = String::from_utf8_lossy(&listed.stderr);
    assert!(
        stderr.contains(&format!(
            "notes needs a login: run `gonk-gateway --config {} login notes`",
            config.display()
        )),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&listed.stdout).contains("notes.whoami"));
    assert!(
        mock.events_of("authorize").is_empty(),
        "list never asks a person"
    );

    let logged_in = login(&config).await;
    let said = String::from_utf8_lossy(&logged_in.stdout);
    let token_file = dir.path().join("tokens").join("notes.json");
    assert!(
        said.contains("Logged in to notes (3 tools)") && said.contains("notes.json"),
        "{said}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is its owner's alone");
    }
    assert_eq!(mock.events_of("authorize").len(), 1);
    assert_eq!(
        mock.events_of("authorize")[0]["query"]["scope"],
        "notes:read offline_access",
        "the configured scopes (and a refresh token)"
    );

    // Later runs use the stored token: listed, and called from the shell.
    let listed = gateway(&config, &["list"]).await;
    let out = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{out}");
    assert!(out.contains("notes.whoami"), "{out}");
    let called = gateway(&config, &["call", "notes.whoami"]).await;
    assert!(
        String::from_utf8_lossy(&called.stdout).contains("alice"),
        "{called:?}"
    );

    // Served over HTTP, a caller of the gateway calls through with its own
    // key; the upstream sees the gateway's token only.
    let mut command = std::process::Command::new(bin("gonk-gateway"));
    command
        .arg("--config")
        .arg(&config)
        .args(["serve", "--port", "0"]);
    let served = ServerProcess::start(command);
    let client =
        McpClient::connect_http(&served.url, McpHttpClientOptions::new().api_key(ALICE_KEY))
            .await
            .expect("alice connects to the gateway");
    let output = collect_tool_outcome(client.invoke("notes.whoami", json!({})), |_| {})
        .await
        .expect("notes.whoami through the gateway");
    assert_eq!(output.data["content"][0]["text"], "\"alice\"");
    client.close().await.unwrap();

    let issued = mock.issued_tokens();
    let seen = mock.mcp_authorizations();
    assert!(!seen.is_empty());
    for authorization in seen.iter().flatten() {
        assert!(
            !authorization.contains(ALICE_KEY),
            "the caller's key reached the upstream"
        );
        let token = authorization.strip_prefix("Bearer ").unwrap_or_default();
        assert!(
            issued.iter().any(|t| t == token),
            "{authorization} is not a token the upstream's authorization server issued"
        );
    }
    assert_eq!(mock.events_of("authorize").len(), 1, "one login in all");
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_says_what_is_wrong_with_the_server_named() {
    let mock = MockOAuth::start(MockOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &mock.url);
    let unknown = gateway(&config, &["login", "calendar"]).await;
    assert!(!unknown.status.success());
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        said.contains("no server \"calendar\" (it has: notes)"),
        "{said}"
    );
    mock.shutdown().await;
}
