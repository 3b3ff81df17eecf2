//! An `INVALID_INPUT` answer never echoes a whole bad value: each value it
//! quotes is cut to its first 80 characters plus its size, so a 3.9 MB
//! title gets a small answer from dispatch — and from the MCP server and
//! the command line, which print what dispatch gives (real processes:
//! `tests/fixtures/contract_fixture.rs`).

use std::io::Write;
use std::process::{Command, Stdio};

use futures::StreamExt;
use gonk_tools::adapters::mcp::McpClient;
use gonk_tools::prelude::*;
use gonk_tools_tests::workspace::bin;

/// The largest answer we accept for one bad value, in bytes of JSON.
const SMALL: usize = 2_000;

const SIZE: usize = 3_900_000;

fn huge_title() -> String {
    "t".repeat(SIZE)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Titled {
    #[schemars(length(max = 200))]
    title: String,
}

#[derive(Deserialize, JsonSchema)]
struct Count {
    count: u32,
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("titled")
                .description("Takes a short title.")
                .handler(|input: Titled, _| async move { Ok::<_, ToolError>(input.title.len()) })
                .build(),
            // The schema lets anything through; serde refuses it.
            ToolDefinition::builder("counted")
                .description("Takes a count, with a permissive schema.")
                .input_json_schema(json!({"type": "object"}))
                .handler(|input: Count, _| async move { Ok::<_, ToolError>(input.count) })
                .build(),
        ])
        .unwrap();
    registry
}

async fn invalid(registry: &ToolRegistry, tool: &str, input: serde_json::Value) -> ToolError {
    let events: Vec<ToolEvent> = registry
        .invoke(tool, input, ToolContext::new())
        .collect()
        .await;
    assert_eq!(events.len(), 1, "{tool}");
    let error = events[0].as_error().expect("an error");
    assert_eq!(error.code, ErrorCode::InvalidInput, "{tool}: {error:?}");
    let size = serde_json::to_string(&events[0]).unwrap().len();
    assert!(size < SMALL, "{tool}: the answer is {size} bytes");
    error
}

#[tokio::test]
async fn a_schema_violation_quotes_the_start_of_the_value_and_its_size() {
    let error = invalid(&registry(), "titled", json!({"title": huge_title()})).await;
    let issues = error.issues();
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].path, "/title");
    let message = &issues[0].message;
    assert!(message.contains(&"t".repeat(80)), "{message}");
    assert!(!message.contains(&"t".repeat(81)), "{message}");
    assert!(message.contains("3900000 characters"), "{message}");
    assert!(
        message.ends_with("is longer than 200 characters"),
        "the rest of the message is kept: {message}"
    );
}

#[tokio::test]
async fn a_short_value_is_quoted_whole() {
    let error = invalid(&registry(), "titled", json!({"title": 7})).await;
    assert_eq!(error.issues()[0].message, r#"7 is not of type "string""#);
}

#[tokio::test]
async fn an_unexpected_huge_key_is_cut_too() {
    let mut input = serde_json::Map::new();
    input.insert("title".into(), json!("ok"));
    input.insert("k".repeat(SIZE), json!(1));
    let error = invalid(&registry(), "titled", serde_json::Value::Object(input)).await;
    let message = &error.issues()[0].message;
    assert!(
        message.starts_with("Additional properties are not allowed"),
        "{message}"
    );
}

#[tokio::test]
async fn a_serde_error_past_the_schema_is_cut_too() {
    let error = invalid(&registry(), "counted", json!({"count": huge_title()})).await;
    let message = &error.issues()[0].message;
    assert!(message.starts_with("invalid type: string"), "{message}");
}

#[tokio::test]
async fn the_mcp_server_answers_small() {
    let mut command = tokio::process::Command::new(bin("contract_fixture"));
    command.arg("mcp");
    let client = McpClient::connect_stdio(command).await.expect("connects");
    let events: Vec<ToolEvent> = client
        .invoke("notes.titled", json!({"title": huge_title()}))
        .collect()
        .await;
    assert_eq!(events.len(), 1, "{events:?}");
    let error = events[0].as_error().expect("an error");
    assert_eq!(error.code, ErrorCode::InvalidInput);
    let size = serde_json::to_string(&error).unwrap().len();
    assert!(size < SMALL, "the MCP answer is {size} bytes");
    assert!(error.message.starts_with("Input validation failed"));
    // The server keeps serving.
    let events: Vec<ToolEvent> = client
        .invoke("notes.titled", json!({"title": "short"}))
        .collect()
        .await;
    assert_eq!(events, [ToolEvent::result(json!({"length": 5}))]);
    client.close().await.expect("closes");
}

#[test]
fn the_command_line_prints_small() {
    let mut child = Command::new(bin("contract_fixture"))
        .args(["notes.titled", "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the fixture runs");
    let input = serde_json::to_vec(&json!({"title": huge_title()})).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().expect("the fixture ends");
    writer.join().unwrap().expect("stdin written");
    assert_eq!(output.status.code(), Some(2), "INVALID_INPUT exits 2");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.stderr.len() < SMALL,
        "stderr is {} bytes:\n{}",
        output.stderr.len(),
        &stderr[..stderr.len().min(500)]
    );
    assert!(stderr.contains("3900000 characters"), "{stderr}");
    assert!(output.stdout.is_empty());
}
