//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! npm) against the `conformance` example over streamable HTTP.
//!
//! The suite's active server scenarios run once; every tools scenario must
//! pass, and so must server-initialize, ping, logging-set-level,
//! dns-rebinding-protection and the SEP-1034/SEP-1330 elicitation forms.
//! The scenarios for features the adapter does not serve (resources,
//! prompts, completion) are reported, not required. `json-schema-2020-12`
//! is not in the active suite and runs on its own.

use std::collections::BTreeMap;
use std::process::Command;

use crate::support::clients;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;

const REQUIRED: &[&str] = &[
    "server-initialize",
    "ping",
    "logging-set-level",
    "dns-rebinding-protection",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
];

/// Runs the suite (or one scenario) and returns its output.
fn suite(url: &str, scenario: Option<&str>) -> String {
    let node_dir = &clients().node_dir;
    let mut command = Command::new("node");
    command
        .arg(node_dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--url", url])
        .current_dir(node_dir);
    if let Some(scenario) = scenario {
        command.args(["--scenario", scenario]);
    }
    let output = command.output().expect("node runs the conformance suite");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The summary lines `✓ NAME: P passed, F failed` as NAME → (P, F).
fn summary(output: &str) -> BTreeMap<String, (u32, u32)> {
    let mut scenarios = BTreeMap::new();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("✓ ").or_else(|| line.strip_prefix("✗ ")) else {
            continue;
        };
        let Some((name, counts)) = rest.split_once(": ") else {
            continue;
        };
        let numbers: Vec<u32> = counts
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect();
        if let [passed, failed] = numbers[..] {
            scenarios.insert(name.to_owned(), (passed, failed));
        }
    }
    scenarios
}

fn server() -> ServerProcess {
    let mut command = Command::new(bin("conformance"));
    command.args(["--port", "0"]);
    ServerProcess::start(command)
}

#[test]
fn the_conformance_suite_passes_every_tools_scenario() {
    let server = server();
    let output = suite(&server.url, None);
    let scenarios = summary(&output);
    assert!(
        !scenarios.is_empty(),
        "the suite printed no summary:\n{output}"
    );
    let failing: Vec<String> = REQUIRED
        .iter()
        .filter(|name| !matches!(scenarios.get(**name), Some((passed, 0)) if *passed > 0))
        .map(|name| format!("{name}: {:?}", scenarios.get(*name)))
        .collect();
    assert!(
        failing.is_empty(),
        "required scenarios failed: {failing:?}\n{output}"
    );
    let not_required: Vec<&String> = scenarios
        .iter()
        .filter(|(name, (_, failed))| *failed > 0 && !REQUIRED.contains(&name.as_str()))
        .map(|(name, _)| name)
        .collect();
    eprintln!("conformance scenarios for features the adapter does not serve: {not_required:?}");
}

#[test]
fn json_schema_2020_12_keywords_are_preserved() {
    let server = server();
    let output = suite(&server.url, Some("json-schema-2020-12"));
    assert!(
        output.contains("Passed: 4/4, 0 failed"),
        "json-schema-2020-12 did not pass:\n{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_example_also_serves_stdio() {
    use gonk_tools::adapters::mcp::McpClient;
    use gonk_tools::prelude::*;

    let mut command = tokio::process::Command::new(bin("conformance"));
    command.arg("--stdio");
    let client = McpClient::connect_stdio(command).await.expect("connects");
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 13);
    let output = collect_tool_outcome(client.invoke("test_simple_text", json!({})), |_| {})
        .await
        .expect("test_simple_text");
    assert_eq!(output.data, "This is a simple text response for testing.");
    let error = collect_tool_outcome(client.invoke("test_error_handling", json!({})), |_| {})
        .await
        .expect_err("test_error_handling fails");
    assert_eq!(error.code, ErrorCode::custom("TEST_ERROR"));
    // Our client declares no sampling capability: the tool says so.
    let error = collect_tool_outcome(
        client.invoke("test_sampling", json!({"prompt": "hi"})),
        |_| {},
    )
    .await
    .expect_err("no sampling capability");
    assert_eq!(error.code, ErrorCode::custom("SAMPLING_UNSUPPORTED"));
    client.close().await.expect("closes");
}
