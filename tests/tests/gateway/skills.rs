//! `gonk-gateway` passes its upstreams' skills through: the notes
//! server's `triage-notes` is served as `skill://notes/triage-notes/SKILL.md`
//! (namespaced by the upstream's id, as its tools are), with the upstream's
//! frontmatter, digests and sizes unchanged — so a client behind the
//! gateway verifies the files against what the upstream published.

use std::process::Command;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::{bin, notes_command};
use serde_json::json;

const NOTES_KEY: &str = "gateway-skills-notes-key-0123456789abcdef";
const GATEWAY_KEY: &str = "gateway-skills-front-key-0123456789abcdef";

#[tokio::test(flavor = "multi_thread")]
async fn the_gateway_serves_an_upstreams_skills_namespaced_and_verifiable() {
    let mut notes = notes_command();
    notes.args([
        "--db",
        ":memory:",
        "serve",
        "--port",
        "0",
        "--api-key",
        NOTES_KEY,
    ]);
    let notes = ServerProcess::start(notes);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.json");
    let servers = json!({"mcpServers": {
        "notes": {"url": notes.url, "headers": {"Authorization": format!("Bearer {NOTES_KEY}")}},
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut gateway = Command::new(bin("gonk-gateway"));
    gateway
        .arg("--config")
        .arg(&config)
        .args(["serve", "--port", "0", "--api-key", GATEWAY_KEY]);
    let gateway = ServerProcess::start(gateway);

    let upstream =
        McpClient::connect_http(&notes.url, McpHttpClientOptions::new().api_key(NOTES_KEY))
            .await
            .unwrap();
    let published = upstream.list_skills().await.unwrap();
    assert_eq!(published.len(), 1);

    let client = McpClient::connect_http(
        &gateway.url,
        McpHttpClientOptions::new().api_key(GATEWAY_KEY),
    )
    .await
    .unwrap();
    let listed = client
        .list_skills()
        .await
        .expect("the gateway lists skills");
    assert_eq!(listed.len(), 1, "{listed:?}");
    let entry = &listed[0];
    assert_eq!(entry.uri, "skill://notes/triage-notes/SKILL.md");
    assert_eq!(entry.frontmatter, published[0].frontmatter);
    let digests = |entry: &gonk_tools::adapters::mcp::McpSkillEntry| -> Vec<(String, u64)> {
        match &entry.resources {
            gonk_tools::adapters::mcp::rmcp::model::SkillResources::Files(files) => {
                files.iter().map(|f| (f.digest.clone(), f.size)).collect()
            }
            _ => Vec::new(),
        }
    };
    assert_eq!(digests(entry), digests(&published[0]));
    assert!(!digests(entry).is_empty());
    let loaded = client.load_skill(entry).await.expect("the files verify");
    assert_eq!(loaded.name(), "triage-notes");
    let upstream_loaded = upstream.load_skill(&published[0]).await.unwrap();
    for (ours, theirs) in loaded.files().iter().zip(upstream_loaded.files()) {
        assert_eq!(ours.path(), theirs.path());
        assert_eq!(&*ours.read().unwrap(), &*theirs.read().unwrap());
    }
}
