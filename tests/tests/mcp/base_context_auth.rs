//! Auth from `McpServerOptions::base_context` applies to listing and
//! calling alike: a tool the policy hides is neither listed nor callable,
//! seen by the official Python SDK over stdio against a real server process
//! (`contract_fixture mcp`, `tests/fixtures/contract_fixture.rs`).

use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use gonk_tools_tests::workspace::bin;
use serde_json::Value;

#[test]
fn listing_and_calling_agree_on_base_context_auth() {
    let server = bin("contract_fixture");
    let output = run_python(
        "python_list_call.py",
        &[
            "public.echo,secret.echo",
            server.to_str().expect("a UTF-8 path"),
            "mcp",
        ],
    );
    let report = report(&output);
    let listed: Vec<&str> = report["tools"]
        .as_array()
        .expect("a tool list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        listed,
        ["public.echo", "notes.titled"],
        "the hidden tool is not listed"
    );

    let public = &report["calls"]["public.echo"];
    assert_ne!(public["isError"], true, "{public}");
    assert_eq!(public["structuredContent"]["echo"], "hi", "{public}");
    let secret = &report["calls"]["secret.echo"];
    assert_eq!(secret["isError"], true, "{secret}");
    assert_eq!(
        secret["content"][0]["text"], "Error [TOOL_NOT_FOUND]: Unknown tool: secret.echo",
        "the hidden tool reads as missing: {secret}"
    );
}
