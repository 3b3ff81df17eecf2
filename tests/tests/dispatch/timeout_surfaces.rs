//! Every surface shows a `TIMEOUT` the way it shows any other error: an
//! MCP `isError` result (the code kept for our client), a WebSocket error
//! reply, a Pi error result, an Anthropic `tool_result` with `is_error`, and
//! the command line's exit code 124. Each over its real transport, with a
//! tool whose handler never finishes and a short timeout (no time is
//! asserted; only what each surface reports).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use gonk_tools::adapters::cli::Cli;
use gonk_tools::adapters::mcp::{
    serve_http, McpClient, McpHttpClientOptions, McpHttpOptions, McpServerOptions,
};
use gonk_tools::adapters::pi::{serve_pi_io, PiOptions};
use gonk_tools::adapters::providers::{Anthropic, ProviderTools};
use gonk_tools::adapters::ws::WsHandler;
use gonk_tools::adapters::ws::{serve_ws, WsClient, WsClientOptions, WsServerOptions};
use gonk_tools::client::Transport;
use gonk_tools::prelude::*;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// `stuck` never finishes; it may run 100 ms.
fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("stuck")
                .description("Never finishes.")
                .approval(ApprovalTier::Read)
                .timeout(Duration::from_millis(100))
                .handler(|_: NoInput, _| async {
                    futures::future::pending::<()>().await;
                    Ok::<_, ToolError>(())
                })
                .build(),
        )
        .unwrap();
    registry
}

const MESSAGE: &str = "Tool stuck timed out after 100ms and was stopped";

/// Calls `stuck` through `client` and checks the `TIMEOUT` it gets back.
async fn assert_times_out(client: &impl Transport) {
    let error = collect_tool_outcome(client.invoke("stuck", json!({})), |_| {})
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(error.message, MESSAGE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_answers_an_is_error_result_with_the_timeout() {
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry(),
        McpHttpOptions::new(McpServerOptions::new("timeouts", "1.0.0")),
    )
    .await
    .unwrap();
    let client = McpClient::connect_http(&server.url(), McpHttpClientOptions::new())
        .await
        .unwrap();
    assert_times_out(&client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_replies_with_a_timeout_error() {
    let registry = registry();
    let server = serve_ws(
        "127.0.0.1:0".parse().unwrap(),
        WsHandler::builder(&registry),
        WsServerOptions::new(),
    )
    .await
    .unwrap();
    let client = WsClient::connect(&server.url(), WsClientOptions::new())
        .await
        .unwrap();
    assert_times_out(&client).await;
}

#[tokio::test]
async fn pi_gets_an_error_result_naming_the_timeout() {
    let (mut to_bridge, bridge_in) = tokio::io::duplex(64 * 1024);
    let (bridge_out, from_bridge) = tokio::io::duplex(64 * 1024);
    let served = tokio::spawn(serve_pi_io(
        registry(),
        PiOptions::new(),
        bridge_in,
        bridge_out,
    ));
    to_bridge
        .write_all(b"{\"type\":\"execute\",\"id\":\"t1\",\"tool\":\"stuck\",\"input\":{}}\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(from_bridge).lines();
    let result = loop {
        let line = lines.next_line().await.unwrap().expect("a result line");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["type"] == "result" {
            break message;
        }
    };
    assert_eq!(
        result,
        json!({"type": "result", "id": "t1", "result": {"isError": true, "content": [
            {"type": "text", "text": format!("[TIMEOUT] {MESSAGE}")},
            {"type": "text", "text": "{\n  \"timeoutMs\": 100\n}"},
        ]}})
    );
    drop(to_bridge);
    served.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_provider_tool_result_is_an_error_naming_the_timeout() {
    let anthropic = ProviderTools::new(registry(), Anthropic);
    let message = anthropic
        .call(
            &json!({"type": "tool_use", "id": "toolu_1", "name": "stuck", "input": {}}),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(message["type"], "tool_result");
    assert_eq!(message["tool_use_id"], "toolu_1");
    assert_eq!(message["is_error"], true);
    let text = message["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("TIMEOUT") && text.contains(MESSAGE), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_exits_with_124() {
    let cli = Cli::new(registry()).name("timeouts");
    let code = cli.run_async(["timeouts", "stuck"]).await;
    assert_eq!(code, ExitCode::from(124));
}
