//! `McpSource` against a malicious upstream (the `rogue` mode of
//! `mcp-source-fixture`): a huge description, a tool named like a local
//! one, a `$ref` to a URL, an invalid JSON-RPC line, a 10 MB result. None of it crashes
//! the importer or reaches another source's or a local tool's names.

use std::time::Duration;

use gonk_tools::adapters::mcp::{McpEndpoint, McpSource, McpSourceError};
use gonk_tools::prelude::*;
use gonk_tools_tests::workspace::bin;
use serde_json::Value;

fn rogue(flags: &str) -> McpEndpoint {
    McpEndpoint::command(bin("mcp-source-fixture").display().to_string(), ["rogue"])
        .env("ROGUE", flags)
}

async fn call(registry: &ToolRegistry, name: &str, input: Value) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(registry.invoke(name, input, ToolContext::new()), |_| {}).await
}

fn local_search() -> ToolDefinition {
    ToolDefinition::builder("notes.search")
        .description("The local search.")
        .handler(|_: NoInput, _| async move { Ok::<_, ToolError>("local") })
        .build()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_description_is_never_shown_whole() {
    let registry = ToolRegistry::new();
    let source = McpSource::builder("rogue", rogue("huge"))
        .connect(&registry)
        .await
        .expect("connects");
    assert_eq!(
        registry.get("rogue.huge").unwrap().description,
        "Remote MCP tool rogue/huge"
    );
    source.close().await.unwrap();

    let trusted = McpSource::builder("rogue", rogue("huge"))
        .trust(true)
        .connect(&registry)
        .await
        .expect("connects");
    let description = registry.get("rogue.huge").unwrap().description.clone();
    assert!(description.chars().count() <= 4097, "{}", description.len());
    assert!(description.starts_with("dddd"));
    trusted.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_named_like_a_local_one_stays_under_its_prefix() {
    let registry = ToolRegistry::new();
    registry.register(local_search()).unwrap();
    let source = McpSource::builder("rogue", rogue("local"))
        .connect(&registry)
        .await
        .expect("connects");
    assert!(registry.has("rogue.notes.search"));
    let local = call(&registry, "notes.search", json!({})).await.unwrap();
    assert_eq!(local.data, "local");
    assert_eq!(registry.get("notes.search").unwrap().provenance, None);
    source.close().await.unwrap();
    assert!(registry.has("notes.search"));

    // A source id that would land on a local name is refused as a clash.
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("rogue.empty")
                .description("Local.")
                .handler(|_: NoInput, _| async move { Ok::<_, ToolError>("local") })
                .build(),
        )
        .unwrap();
    let error = McpSource::builder("rogue", rogue(""))
        .connect(&registry)
        .await
        .expect_err("clashes with a local tool");
    assert!(matches!(error, McpSourceError::Refused { .. }), "{error}");
    assert!(error.to_string().contains("rogue.empty"), "{error}");
    assert_eq!(registry.names(), ["rogue.empty"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ref_to_a_url_refuses_the_catalog() {
    let registry = ToolRegistry::new();
    let error = McpSource::builder("rogue", rogue("refurl"))
        .connect(&registry)
        .await
        .expect_err("remote $ref");
    let message = error.to_string();
    assert!(
        message.contains("Unsupported MCP input schema $ref \"https://evil.example/schema.json\" at $.properties.a"),
        "{message}"
    );
    assert!(registry.names().is_empty());
    // The allow-list can leave the offending tool out.
    let source = McpSource::builder("rogue", rogue("refurl"))
        .allow(["empty"])
        .connect(&registry)
        .await
        .expect("connects without fetchy");
    assert_eq!(registry.names(), ["rogue.empty"]);
    source.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_json_rpc_line_does_not_take_other_tools_down() {
    let registry = ToolRegistry::new();
    registry.register(local_search()).unwrap();
    let good = McpSource::builder(
        "fx",
        McpEndpoint::command(bin("mcp-source-fixture").display().to_string(), ["stdio"]),
    )
    .connect(&registry)
    .await
    .expect("connects");
    let source = McpSource::builder("rogue", rogue("garbage"))
        .call_timeout(Duration::from_secs(20))
        .connect(&registry)
        .await
        .expect("connects");
    // The garbage line comes before the answer: the call ends one way or
    // the other, never hangs, and the answer (if read) is still mapped.
    match call(&registry, "rogue.annotated", json!({})).await {
        Ok(output) => assert_eq!(output.data["structuredContent"], json!({"said": "hi"})),
        Err(error) => assert!(error.code.as_str().starts_with("REMOTE_"), "{error:?}"),
    }
    assert_eq!(
        call(&registry, "notes.search", json!({}))
            .await
            .unwrap()
            .data,
        "local"
    );
    let echoed = call(&registry, "fx.echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(echoed.data["structuredContent"]["text"], "still here");
    source.close().await.unwrap();
    good.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_megabyte_result_is_carried_or_refused_cleanly() {
    let registry = ToolRegistry::new();
    registry.register(local_search()).unwrap();
    let source = McpSource::builder("rogue", rogue("big"))
        .connect(&registry)
        .await
        .expect("connects");
    match call(&registry, "rogue.big", json!({})).await {
        Ok(output) => {
            let text = output.data["content"][0]["text"].as_str().unwrap();
            assert_eq!(text.len(), 10 << 20);
        }
        Err(error) => assert!(error.code.as_str().starts_with("REMOTE_"), "{error:?}"),
    }
    assert_eq!(
        call(&registry, "notes.search", json!({}))
            .await
            .unwrap()
            .data,
        "local"
    );
    source.close().await.unwrap();
}
