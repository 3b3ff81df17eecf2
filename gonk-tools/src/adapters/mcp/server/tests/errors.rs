//! How a failed `tools/call` reaches the client: an unknown or hidden tool
//! under the name the client called, the error object where the tool's
//! output schema lets it go, a missing client capability as the era says,
//! and a call the shutdown cancelled.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::adapters::mcp::McpRequestContext;
use crate::definition::McpHints;
use crate::error::ErrorCode;

fn failing(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Fails.")
        .approval(ApprovalTier::Read)
        .handler(|_: NoInput, _ctx| async {
            Err::<String, _>(ToolError::new(ErrorCode::InvalidInput, "no such note"))
        })
        .build()
}

#[tokio::test]
async fn an_unknown_a_filtered_and_an_unauthorized_tool_answer_alike() {
    let admin = ToolDefinition::builder("admin.reset")
        .description("Admins only.")
        .approval(ApprovalTier::Read)
        .mcp(McpHints {
            mcp_name: Some("admin_reset".to_owned()),
            ..McpHints::default()
        })
        .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("reset") })
        .build();
    let registry = registry_of([admin, read_tool("secret")]);
    let options = McpServerOptions::new("unit", "1.0.0").filter(|def| def.name != "secret");
    let server = server_with(registry, options);

    let unknown = |name: &str| json!({ "error": { "code": "TOOL_NOT_FOUND", "message": format!("Unknown tool: {name}") } });
    for name in ["nope", "secret"] {
        let result = call(&server, name, json!({}), session_request(&server, 1))
            .await
            .unwrap();
        assert_eq!(result["isError"], true, "{name}");
        assert_eq!(result["structuredContent"], unknown(name), "{name}");
    }
    // The registry hides the tool from bob: the answer names it as bob
    // called it, not by its registry name.
    let mut context = session_request(&server, 2);
    with_auth(&mut context, auth_for("bob"));
    let result = call(&server, "admin_reset", json!({}), context)
        .await
        .unwrap();
    assert_eq!(result["structuredContent"], unknown("admin_reset"));
    assert_eq!(
        text(&result),
        "Error [TOOL_NOT_FOUND]: Unknown tool: admin_reset"
    );

    let mut context = session_request(&server, 3);
    with_auth(&mut context, auth_for("alice"));
    let result = call(&server, "admin_reset", json!({}), context)
        .await
        .unwrap();
    assert_eq!(data(&result), "reset");
}

#[tokio::test]
async fn the_error_object_goes_where_the_output_schema_lets_it() {
    let with_schema = ToolDefinition::builder("typed")
        .description("Fails, with an output schema.")
        .approval(ApprovalTier::Read)
        .output_schema(json!({ "type": "object", "properties": { "id": { "type": "string" } } }))
        .handler(|_: NoInput, _ctx| async {
            Err::<Value, _>(ToolError::new(ErrorCode::InvalidInput, "no such note"))
        })
        .build();
    let server = server(registry_of([failing("plain"), with_schema]));
    let error = json!({ "code": "INVALID_INPUT", "message": "no such note" });

    let plain = call(&server, "plain", json!({}), session_request(&server, 1))
        .await
        .unwrap();
    assert_eq!(plain["isError"], true);
    assert_eq!(plain["structuredContent"], json!({ "error": error }));
    assert_eq!(text(&plain), "Error [INVALID_INPUT]: no such note");

    // Clients check any structuredContent against the output schema.
    let typed = call(&server, "typed", json!({}), session_request(&server, 2))
        .await
        .unwrap();
    assert_eq!(typed["isError"], true);
    assert_eq!(typed["structuredContent"], Value::Null);
    assert_eq!(typed["_meta"]["gonk-tools/error"], error);
    assert_eq!(text(&typed), "Error [INVALID_INPUT]: no such note");
}

fn needs_sampling() -> ToolDefinition {
    ToolDefinition::builder("summarize")
        .description("Needs the client's model.")
        .approval(ApprovalTier::Read)
        .handler(|_: NoInput, ctx: ToolContext| async move {
            let mcp = ctx.host::<McpRequestContext>().expect("the MCP request");
            mcp.require_client_capability("sampling")?;
            Ok::<_, ToolError>("summary")
        })
        .build()
}

#[tokio::test]
async fn a_missing_client_capability_is_a_protocol_error_only_in_the_stateless_era() {
    let server = server(registry_of([needs_sampling()]));
    let stateless = stateless_request(&server, 1, ClientCapabilities::default());
    let refused = call(&server, "summarize", json!({}), stateless)
        .await
        .unwrap_err();
    assert_eq!(
        refused.code,
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
    );
    assert_eq!(
        refused.data,
        Some(json!({ "requiredCapabilities": { "sampling": {} } }))
    );

    // A 2025 session gets an error result the model can read.
    let session = call(&server, "summarize", json!({}), session_request(&server, 2))
        .await
        .unwrap();
    assert_eq!(session["isError"], true);
    assert_eq!(
        session["structuredContent"]["error"]["code"],
        "INPUT_UNAVAILABLE"
    );

    // A client that declared it gets the tool's answer.
    let declared: ClientCapabilities = serde_json::from_value(json!({ "sampling": {} })).unwrap();
    let stateless = stateless_request(&server, 3, declared);
    let result = call(&server, "summarize", json!({}), stateless)
        .await
        .unwrap();
    assert_eq!(data(&result), "summary");
}

#[tokio::test]
async fn a_call_the_shutdown_cancels_says_so() {
    let started = Arc::new(tokio::sync::Notify::new());
    let running = Arc::clone(&started);
    let stuck = ToolDefinition::builder("stuck")
        .description("Runs until cancelled.")
        .approval(ApprovalTier::Read)
        .handler(move |_: NoInput, _ctx| {
            let running = Arc::clone(&running);
            async move {
                running.notify_one();
                std::future::pending::<Result<String, ToolError>>().await
            }
        })
        .build();
    let server = server(registry_of([stuck]));
    let context = session_request(&server, 1);
    let calling = server.clone();
    let answer = tokio::spawn(async move { call(&calling, "stuck", json!({}), context).await });
    started.notified().await;
    server.inflight().drain(Duration::ZERO).await;
    let result = answer.await.unwrap().unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["structuredContent"]["error"],
        json!({
            "code": "ABORTED",
            "message": "The server is shutting down: the call was cancelled before it finished",
        })
    );
}
