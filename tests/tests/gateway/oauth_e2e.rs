//! `gonk-gateway` in front of the real `notes` server behind a real
//! authorization server (`notes serve --auth-issuer`, `oidc-provider` on a
//! loopback port). `login notes` once — the person's login and consent
//! played by a browser that submits the authorization server's forms and
//! comes back to the gateway's loopback port — then a caller with the
//! gateway's own key lists and calls through it: the upstream's receipts
//! name the gateway's OAuth subject, never the caller, and the caller's key
//! never reaches it. And with no token at all, `gateway.login` asks the
//! real Python SDK client to open the authorization page (URL-mode
//! elicitation); once the test has signed in there, the upstream's tools
//! are served and the calls succeed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use gonk_tools_tests::oidc_provider::{browse, OidcProvider};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::{bin, notes_serve_command};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

const CALLER_KEY: &str = "oauth-e2e-carol-key-0123456789abcdef";
/// The account the gateway is logged in to the upstream as.
const GATEWAY_ACCOUNT: &str = "gateway-operator";

/// `notes serve` behind `provider`, writes exposed (the scopes decide).
fn notes_behind(provider: &OidcProvider, dir: &Path) -> ServerProcess {
    let command = notes_serve_command(&dir.join("notes.db"), &["--auth-issuer", &provider.issuer]);
    ServerProcess::start(command)
}

/// A gateway config: upstream `notes` behind OAuth (its token in
/// `tokens/notes.json` beside the config), caller carol with her own key.
fn write_config(dir: &Path, upstream: &str) -> PathBuf {
    let config = dir.join("gateway.json");
    let body = json!({
        "mcpServers": {
            "notes": {
                "url": upstream,
                "auth": {"oauth": {
                    "scopes": ["notes:read", "notes:write"],
                    "tokenStore": "tokens/notes.json",
                }},
            },
        },
        "callers": {
            "carol": {"key": CALLER_KEY, "tools": ["*"], "approval": "granted"},
        },
    });
    std::fs::write(&config, body.to_string()).unwrap();
    config
}

fn serve(config: &Path) -> ServerProcess {
    let mut command = std::process::Command::new(bin("gonk-gateway"));
    command
        .arg("--config")
        .arg(config)
        .args(["serve", "--port", "0"]);
    ServerProcess::start(command)
}

/// The receipts the upstream wrote (`notes: audit {…}` on stderr).
fn receipts(server: &ServerProcess) -> Vec<Value> {
    server
        .stderr_lines()
        .iter()
        .filter_map(|line| line.split("notes: audit ").nth(1))
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect()
}

/// Asserts that the upstream's receipts of `tool` name the gateway's
/// account and nothing of the caller's.
fn assert_upstream_saw_the_gateway(upstream: &ServerProcess, tool: &str) {
    let receipts = receipts(upstream);
    let of_tool: Vec<&Value> = receipts
        .iter()
        .filter(|receipt| receipt.to_string().contains(&format!("\"{tool}\"")))
        .collect();
    assert!(
        of_tool.iter().any(|receipt| receipt
            .to_string()
            .contains(&format!("\"{GATEWAY_ACCOUNT}\""))),
        "no receipt of {tool} names the gateway's account: {receipts:#?}"
    );
    for line in upstream.stderr_lines() {
        assert!(
            !line.contains(CALLER_KEY) && !line.contains("carol"),
            "the upstream heard of the gateway's caller: {line}"
        );
    }
}

/// Runs `login notes` and plays the person: signs in at the URL it prints
/// and follows the authorization server back to the gateway's port.
async fn login(config: &Path) {
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
    let back = browse(&url, GATEWAY_ACCOUNT)
        .await
        .expect("the login and consent forms");
    assert!(back.starts_with("http://127.0.0.1:"), "{back}");
    let page = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .get(&back)
        .send()
        .await
        .expect("the gateway's callback");
    assert!(page
        .text()
        .await
        .unwrap()
        .contains("Authorization complete"));
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("login ends")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("Logged in to notes"),
        "login failed: {stdout}\n{}",
        said.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_once_then_callers_list_and_call_an_upstream_behind_oidc_provider() {
    let provider = OidcProvider::start();
    let dir = tempfile::tempdir().unwrap();
    let upstream = notes_behind(&provider, dir.path());
    let config = write_config(dir.path(), &upstream.url);

    login(&config).await;
    let token_file = dir.path().join("tokens").join("notes.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is its owner's alone");
    }
    let authorizations = provider.events_of("authorize");
    assert_eq!(authorizations.len(), 1);
    assert_eq!(authorizations[0]["resource"], json!(upstream.url));
    assert_eq!(authorizations[0]["code_challenge_method"], "S256");

    let gateway = serve(&config);
    let client = McpClient::connect_http(
        &gateway.url,
        McpHttpClientOptions::new().api_key(CALLER_KEY),
    )
    .await
    .expect("carol connects to the gateway");
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list through the gateway")
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(
        names.contains(&"notes.notes.create".to_owned()),
        "{names:?}"
    );
    let title = "Through the gateway behind OAuth";
    let created = collect_tool_outcome(
        client.invoke("notes.notes.create", json!({"title": title, "body": "b"})),
        |_| {},
    )
    .await
    .expect("notes.create through the gateway");
    assert_ne!(created.data["isError"], true, "{:?}", created.data);
    let found = collect_tool_outcome(
        client.invoke("notes.notes.search", json!({"query": "gateway behind"})),
        |_| {},
    )
    .await
    .expect("notes.search through the gateway");
    assert!(found.data.to_string().contains(title), "{:?}", found.data);
    client.close().await.unwrap();

    assert_upstream_saw_the_gateway(&upstream, "notes.create");
    assert_eq!(
        provider.events_of("authorize").len(),
        1,
        "one login in all: the gateway used and kept the token"
    );
}

#[test]
fn a_caller_logs_the_gateway_in_through_url_elicitation() {
    let provider = OidcProvider::start();
    let dir = tempfile::tempdir().unwrap();
    let upstream = notes_behind(&provider, dir.path());
    let config = write_config(dir.path(), &upstream.url);
    let gateway = serve(&config);
    assert!(
        gateway
            .stderr_lines()
            .iter()
            .any(|line| line.contains("notes needs a login")),
        "{:?}",
        gateway.stderr_lines()
    );

    let title = "Logged in through the caller";
    let report = report(&run_python(
        "python_gateway_login.py",
        &[&gateway.url, CALLER_KEY, GATEWAY_ACCOUNT, title],
    ));
    // Before the login the upstream's tools are not served; the login tool is.
    let before = report["before"].to_string();
    assert!(before.contains("gateway.login"), "{report}");
    assert!(!before.contains("notes.notes.create"), "{report}");
    // The gateway asked once, in URL mode, to open the authorization page.
    let asked = report["asked"].as_array().expect("asked");
    assert_eq!(asked.len(), 1, "{report}");
    assert_eq!(asked[0]["mode"], "url");
    let url = asked[0]["url"].as_str().unwrap_or_default();
    assert!(
        url.starts_with(&format!("{}/auth?", provider.issuer)),
        "{url}"
    );
    assert!(
        !asked[0].to_string().contains("access_token"),
        "no token in the elicitation"
    );
    // The browser came back to the gateway, which finished the login.
    assert_eq!(report["callbacks"][0]["status"], 200, "{report}");
    assert_ne!(report["login"]["isError"], true, "{report}");
    assert!(
        report["login"].to_string().contains("notes.notes.search"),
        "{report}"
    );
    assert!(report["after"].to_string().contains("notes.notes.create"));
    assert_ne!(report["created"]["isError"], true, "{report}");
    assert!(report["found"].to_string().contains(title), "{report}");
    assert!(dir.path().join("tokens").join("notes.json").exists());
    assert_upstream_saw_the_gateway(&upstream, "notes.create");
}
