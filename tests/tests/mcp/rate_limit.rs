//! `RATE_LIMITED` over MCP, seen by the official Python SDK: two `notes`
//! server processes (replicas) launched over stdio with `--rate-limit 2/1m
//! --shared redis://…` draw on one budget on the test binary's own
//! Redis (under a key prefix of this test's own, removed afterwards).
//! The call past it, on the second replica, is a `tools/call` result with
//! `isError: true`, the code in its text and the error object with
//! `retryAfterMs` in `structuredContent.error` — a tool error, since the
//! specification defines no rate-limit shape.

use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use gonk_tools_tests::workspace::bin;
use serde_json::Value;

/// This binary's Redis (`gonk_tools_tests::services`), started on first use.
fn redis_url() -> String {
    gonk_tools_tests::services::redis().url()
}

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

/// One replica's session: the Python SDK launches a `notes` server over
/// stdio (through `env`, since the SDK passes the server only a few
/// variables of its own) and calls `diag.echo` once per name in `calls`.
fn replica(prefix: &Prefix, calls: &str) -> Value {
    let server = bin("notes-testbed");
    let variable = format!("NOTES_SHARED_PREFIX={}", prefix.0);
    let redis = redis_url();
    let output = run_python(
        "python_list_call.py",
        &[
            calls,
            "/usr/bin/env",
            &variable,
            server.to_str().expect("a UTF-8 path"),
            "--db",
            ":memory:",
            "--rate-limit",
            "2/1m",
            "--shared",
            &redis,
            "mcp",
        ],
    );
    report(&output)
}

#[test]
fn replicas_share_one_budget_and_the_call_past_it_is_a_tool_error() {
    let prefix = Prefix(format!("gonk-tests:mcp-rate-limit:{}", std::process::id()));
    // Replica 1 takes the whole budget (the second call's result is kept).
    let first = replica(&prefix, "diag.echo,diag.echo");
    let fitted = &first["calls"]["diag.echo"];
    assert_ne!(fitted["isError"], true, "{fitted}");
    assert_eq!(fitted["structuredContent"]["text"], "hi", "{fitted}");

    // Replica 2: its first call is past the shared budget.
    let second = replica(&prefix, "diag.echo");
    let refused = &second["calls"]["diag.echo"];
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with(
            "Error [RATE_LIMITED]: Rate limit reached for anonymous: 2 calls per 1m; retry in "
        ),
        "{refused}"
    );
    let error = &refused["structuredContent"]["error"];
    assert_eq!(error["code"], "RATE_LIMITED", "{refused}");
    assert_eq!(error["details"]["budget"], "principal", "{refused}");
    assert_eq!(error["details"]["limit"], 2, "{refused}");
    let wait = error["details"]["retryAfterMs"].as_u64().unwrap_or(0);
    assert!(
        wait > 0 && wait <= 30_000,
        "one call back every 30 s: {refused}"
    );
}
