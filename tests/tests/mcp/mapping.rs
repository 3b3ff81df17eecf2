//! The tools/list projection and the tools/call mapping over a real
//! connection (streamable HTTP, the Rust MCP client): `{value}` wrapping of
//! non-object schemas, `mcp_name`, degraded descriptions, annotations,
//! hidden tools, display blocks as content.

use std::net::SocketAddr;

use gonk_tools::adapters::mcp::{
    serve_http, McpClient, McpHttpClientOptions, McpHttpOptions, McpServerOptions,
};
use gonk_tools::definition::{CapabilityStatus, McpAnnotations, McpHints};
use gonk_tools::prelude::*;
use serde_json::Value;

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("double")
                .description("Double an integer.")
                .approval(ApprovalTier::Read)
                .handler(|n: i64, _ctx| async move { Ok::<_, ToolError>(n * 2) })
                .build(),
            ToolDefinition::builder("internal.name")
                .description("Normal description.")
                .degraded_description("Degraded: the backend is read-only.")
                .capability_for(|| CapabilityStatus::Degraded)
                .approval(ApprovalTier::Read)
                .mcp(McpHints {
                    mcp_name: Some("public_name".into()),
                    annotations: McpAnnotations {
                        read_only: Some(true),
                        ..McpAnnotations::default()
                    },
                    ..McpHints::default()
                })
                .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>(json!({"ok": true})) })
                .build(),
            ToolDefinition::builder("secret")
                .description("Hidden by the server's filter.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("leaked") })
                .build(),
            ToolDefinition::builder("show")
                .description("Every display kind.")
                .approval(ApprovalTier::Read)
                .handler_with_output(|_: NoInput, _ctx| async {
                    Ok::<_, ToolError>(ToolOutput::new(json!({"shown": 3})).with_display(vec![
                        DisplayBlock::Code {
                            language: "rust".into(),
                            code: "fn main() {}".into(),
                            caption: None,
                        },
                        DisplayBlock::Link {
                            url: "https://example.invalid/doc".into(),
                            title: Some("Doc".into()),
                        },
                        DisplayBlock::Image {
                            mime_type: "image/png".into(),
                            data: "iVBORw0KGgo=".into(),
                            alt: None,
                        },
                    ]))
                })
                .build(),
        ])
        .expect("the tools register");
    registry
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_and_calling_follow_the_mapping_rules() {
    let options = McpHttpOptions::new(
        McpServerOptions::new("mapping", "2.0.0").filter(|def| def.name != "secret"),
    );
    let server = serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry(), options)
        .await
        .unwrap();
    let client = McpClient::connect_http(&server.url(), McpHttpClientOptions::new())
        .await
        .unwrap();
    let info = client.server_info().unwrap();
    assert_eq!(
        (info.name.as_str(), info.version.as_str()),
        ("mapping", "2.0.0")
    );

    let tools: Vec<Value> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["double", "public_name", "show"]);

    // A non-object input schema is advertised wrapped as {value} ...
    let double = &tools[0];
    assert_eq!(double["inputSchema"]["type"], "object");
    assert_eq!(double["inputSchema"]["required"], json!(["value"]));
    assert_eq!(
        double["inputSchema"]["properties"]["value"]["type"],
        "integer"
    );
    assert!(double.get("annotations").is_none());
    // ... and unwrapped on call (the client wraps the bare value).
    let output = collect_tool_outcome(client.invoke("double", json!(21)), |_| {})
        .await
        .unwrap();
    assert_eq!(output.data, 42);
    let wrong = collect_tool_outcome(client.invoke("double", json!("x")), |_| {})
        .await
        .unwrap_err();
    assert_eq!(wrong.code, ErrorCode::InvalidInput);

    // mcp_name, the degraded description, annotations.
    let public = &tools[1];
    assert_eq!(public["description"], "Degraded: the backend is read-only.");
    assert_eq!(public["annotations"], json!({"readOnlyHint": true}));
    let output = collect_tool_outcome(client.invoke("public_name", json!({})), |_| {})
        .await
        .unwrap();
    assert_eq!(output.data, json!({"ok": true}));
    let error = collect_tool_outcome(client.invoke("internal.name", json!({})), |_| {})
        .await
        .unwrap_err();
    assert_eq!(error.message, "Unknown tool: internal.name");

    // A hidden tool answers exactly like a missing one.
    let hidden = collect_tool_outcome(client.invoke("secret", json!({})), |_| {})
        .await
        .unwrap_err();
    let missing = collect_tool_outcome(client.invoke("nope", json!({})), |_| {})
        .await
        .unwrap_err();
    assert_eq!(hidden.code, ErrorCode::ToolNotFound);
    assert_eq!(hidden.message, "Unknown tool: secret");
    assert_eq!(missing.code, hidden.code);
    assert_eq!(missing.message, "Unknown tool: nope");

    // Display blocks as content; object data as structuredContent.
    let raw = client
        .peer()
        .call_tool(gonk_tools::adapters::mcp::rmcp::model::CallToolRequestParams::new("show"))
        .await
        .unwrap();
    let raw = serde_json::to_value(raw).unwrap();
    assert_eq!(
        raw["content"],
        json!([
            {"type": "text", "text": "```rust\nfn main() {}\n```"},
            {"type": "text", "text": "Doc: https://example.invalid/doc"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        ])
    );
    assert_eq!(raw["structuredContent"], json!({"shown": 3}));

    client.close().await.unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_input_schema_is_an_open_object_and_arguments_pass_through() {
    // `{}` declares no shape: advertised as an open object (not wrapped as
    // `{value}`), and the arguments reach the tool as they were sent.
    let registry = ToolRegistry::new();
    for (name, schema) in [
        ("open", json!({})),
        ("annotated", json!({"description": "Anything goes."})),
    ] {
        registry
            .register(
                ToolDefinition::builder(name)
                    .description("Echo the arguments.")
                    .approval(ApprovalTier::Read)
                    .input_json_schema(schema)
                    .handler(|input: Value, _ctx| async move { Ok::<_, ToolError>(input) })
                    .build(),
            )
            .unwrap();
    }
    let server = serve_http(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        registry,
        McpHttpOptions::new(McpServerOptions::new("open", "1.0.0")),
    )
    .await
    .unwrap();
    let client = McpClient::connect_http(&server.url(), McpHttpClientOptions::new())
        .await
        .unwrap();
    let tools: Vec<Value> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    assert_eq!(
        tools[0]["inputSchema"],
        json!({"type": "object"}),
        "{}",
        tools[0]
    );
    assert!(tools[0].get("_meta").is_none(), "not wrapped: {}", tools[0]);
    assert_eq!(
        tools[1]["inputSchema"],
        json!({"type": "object", "description": "Anything goes."})
    );
    for name in ["open", "annotated"] {
        let output = collect_tool_outcome(client.invoke(name, json!({"a": 1, "b": [2]})), |_| {})
            .await
            .unwrap();
        assert_eq!(output.data, json!({"a": 1, "b": [2]}), "{name}");
    }
    client.close().await.unwrap();
    server.shutdown().await.unwrap();
}
