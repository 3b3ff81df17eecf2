//! `notes serve --auth-issuer`: the real binary as a resource server over
//! the mock issuer. A `notes:read` token searches, and its `notes.create`
//! is a `403` step-up; a `notes:read notes:write` token creates (the
//! scope is the user's consent, so the write tier needs no further
//! approval); the receipts on stderr name the subject and never the token;
//! the metadata names the issuer. And `--auth-audience` must be a usable
//! URL.

use gonk_tools::adapters::mcp::{McpClient, McpEra, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::mock_issuer::MockIssuer;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::{notes_command, notes_serve_command};
use serde_json::{json, Value};

use crate::support::{bearer, raw_call_of};

fn token(issuer: &MockIssuer, audience: &str, scope: &str) -> String {
    let mut claims = issuer.claims(audience);
    claims.body["scope"] = json!(scope);
    issuer.sign(&claims)
}

async fn call(client: &McpClient, tool: &str, input: Value) -> Result<Value, ToolError> {
    collect_tool_outcome(client.invoke(tool, input), |_| {})
        .await
        .map(|output| output.data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_serve_takes_the_issuers_tokens_with_scopes() {
    let issuer = MockIssuer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let command = notes_serve_command(
        &dir.path().join("notes.db"),
        &["--auth-issuer", issuer.issuer()],
    );
    let server = tokio::task::block_in_place(|| ServerProcess::start(command));
    let url = server.url.clone();

    let metadata: Value = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], url.as_str());
    assert_eq!(metadata["authorization_servers"], json!([issuer.issuer()]));

    let read = token(&issuer, &url, "notes:read");
    let client = McpClient::builder()
        .era(McpEra::Session)
        .connect_http(&url, McpHttpClientOptions::new().api_key(&read))
        .await
        .expect("a notes:read token connects");
    call(&client, "notes.search", json!({"query": "anything"}))
        .await
        .expect("notes:read searches");
    let (status, challenge, _) = raw_call_of(
        &url,
        "notes.create",
        json!({"title": "not allowed"}),
        &[("authorization", &bearer(&read))],
    )
    .await;
    assert_eq!(status, 403);
    assert!(challenge.contains("scope=\"notes:write\""), "{challenge}");
    client.close().await.unwrap();

    let write = token(&issuer, &url, "notes:read notes:write");
    let client = McpClient::builder()
        .era(McpEra::Stateless)
        .connect_http(&url, McpHttpClientOptions::new().api_key(&write))
        .await
        .unwrap();
    let created = call(&client, "notes.create", json!({"title": "from a token"}))
        .await
        .expect("notes:write creates");
    assert_eq!(created["title"], "from a token", "{created}");
    let found = call(&client, "notes.search", json!({"query": "token"}))
        .await
        .unwrap();
    assert!(found.to_string().contains("from a token"), "{found}");

    // A token for another resource is refused.
    let elsewhere = token(&issuer, "http://127.0.0.1:1/mcp", "notes:read");
    let (status, _, _) = raw_call_of(
        &url,
        "notes.search",
        json!({"query": "x"}),
        &[("authorization", &bearer(&elsewhere))],
    )
    .await;
    assert_eq!(status, 401);

    let stderr = server.stderr_lines().join("\n");
    assert!(stderr.contains("\"subjectId\":\"alice\""), "{stderr}");
    for token in [&read, &write, &elsewhere] {
        assert!(!stderr.contains(token.as_str()), "a token was logged");
    }
}

#[test]
fn a_bad_issuer_or_audience_is_refused_at_start() {
    for (args, says) in [
        (vec!["--auth-issuer", "http://idp.example"], "https://"),
        (
            vec![
                "--auth-issuer",
                "https://idp.example",
                "--auth-audience",
                "notes.example/mcp",
            ],
            "--auth-audience",
        ),
        (
            vec!["--host", "0.0.0.0", "--auth-issuer", "https://idp.example"],
            "--auth-audience",
        ),
    ] {
        let mut command = notes_command();
        command
            .args(["--db", ":memory:", "serve", "--port", "0"])
            .args(&args);
        let output = command.output().unwrap();
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
