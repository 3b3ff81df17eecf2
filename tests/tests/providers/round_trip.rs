//! The way back from each provider: a tool call as the model sends it →
//! `ToolRegistry::invoke` → the provider's tool-result message, for a
//! success, an `INVALID_INPUT` and an optional field sent as `null`; plus
//! unknown tools, unreadable arguments, payloads of the wrong provider and
//! a whole turn's reply.

use std::sync::Arc;

use gonk_tools::adapters::providers::{Anthropic, CallError, Gemini, OpenAi, ProviderTools};
use gonk_tools::metrics::{InMemoryMetrics, MetricOutcome};
use gonk_tools::prelude::*;
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
struct Search {
    /// Free-text query.
    #[schemars(length(min = 1))]
    query: String,
    #[schemars(range(min = 1, max = 20))]
    limit: Option<u32>,
}

fn registry() -> (ToolRegistry, Arc<InMemoryMetrics>) {
    let metrics = Arc::new(InMemoryMetrics::new());
    let registry = ToolRegistry::builder().metrics(metrics.clone()).build();
    registry
        .register(
            ToolDefinition::builder("notes.search")
                .description("Search notes.")
                .approval(ApprovalTier::Read)
                .handler_with_output(|input: Search, _ctx| async move {
                    let limit = input.limit;
                    Ok::<_, ToolError>(
                        ToolOutput::new(json!({"query": input.query, "limit": limit}))
                            .with_display(format!("found {} (limit {limit:?})", input.query)),
                    )
                })
                .build(),
        )
        .unwrap();
    registry
        .register(
            ToolDefinition::builder("math.double")
                .description("Doubles a number (a non-object input).")
                .approval(ApprovalTier::Read)
                .handler(|n: i64, _ctx| async move { Ok::<_, ToolError>(n * 2) })
                .build(),
        )
        .unwrap();
    (registry, metrics)
}

const SHORT: &str =
    "Error [INVALID_INPUT]: Input validation failed\n  /query: \"\" is shorter than 1 character";

fn outcomes(metrics: &InMemoryMetrics) -> Vec<(String, MetricOutcome)> {
    metrics
        .snapshot()
        .into_iter()
        .map(|r| (r.tool, r.outcome))
        .collect()
}

fn openai_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn openai_chat_completions_round_trip() {
    let (registry, metrics) = registry();
    let openai = ProviderTools::new(registry, OpenAi::chat_completions());
    let ctx = ToolContext::new;

    let ok = openai
        .call(
            &openai_call("call_1", "notes_search", r#"{"query":"rust","limit":3}"#),
            ctx(),
        )
        .await
        .unwrap();
    assert_eq!(
        ok,
        json!({"role": "tool", "tool_call_id": "call_1", "content": "found rust (limit Some(3))"})
    );

    let invalid = openai
        .call(
            &openai_call("call_2", "notes_search", r#"{"query":"","limit":null}"#),
            ctx(),
        )
        .await
        .unwrap();
    assert_eq!(
        invalid,
        json!({"role": "tool", "tool_call_id": "call_2", "content": SHORT})
    );

    let null = openai
        .call(
            &openai_call("call_3", "notes_search", r#"{"query":"rust","limit":null}"#),
            ctx(),
        )
        .await
        .unwrap();
    assert_eq!(null["content"], "found rust (limit None)");

    // Every call went through dispatch: one metric each.
    assert_eq!(
        outcomes(&metrics),
        [
            ("notes.search".to_owned(), MetricOutcome::Ok),
            ("notes.search".to_owned(), MetricOutcome::Error),
            ("notes.search".to_owned(), MetricOutcome::Ok),
        ]
    );
}

#[tokio::test]
async fn openai_responses_round_trip() {
    let (registry, _) = registry();
    let openai = ProviderTools::new(registry, OpenAi::responses());
    let call = |id: &str, arguments: &str| json!({"type": "function_call", "call_id": id, "name": "notes_search", "arguments": arguments});
    let ok = openai
        .call(
            &call("fc_1", r#"{"query":"rust","limit":3}"#),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        ok,
        json!({"type": "function_call_output", "call_id": "fc_1", "output": "found rust (limit Some(3))"})
    );
    let invalid = openai
        .call(
            &call("fc_2", r#"{"query":"","limit":null}"#),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        invalid,
        json!({"type": "function_call_output", "call_id": "fc_2", "output": SHORT})
    );
    let null = openai
        .call(
            &call("fc_3", r#"{"query":"rust","limit":null}"#),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(null["output"], "found rust (limit None)");
}

#[tokio::test]
async fn anthropic_round_trip() {
    let (registry, metrics) = registry();
    let anthropic = ProviderTools::new(registry, Anthropic);
    let tool_use = |id: &str, input: Value| json!({"type": "tool_use", "id": id, "name": "notes_search", "input": input});

    let ok = anthropic
        .call(
            &tool_use("toolu_1", json!({"query": "rust", "limit": 3})),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        ok,
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "found rust (limit Some(3))"}]})
    );
    let invalid = anthropic
        .call(
            &tool_use("toolu_2", json!({"query": ""})),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        invalid,
        json!({"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": SHORT}], "is_error": true})
    );
    let null = anthropic
        .call(
            &tool_use("toolu_3", json!({"query": "rust", "limit": null})),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(null["content"][0]["text"], "found rust (limit None)");
    assert!(null.get("is_error").is_none());
    assert_eq!(metrics.snapshot().len(), 3);
}

#[tokio::test]
async fn gemini_round_trip() {
    let (registry, metrics) = registry();
    let gemini = ProviderTools::new(registry, Gemini);
    let part =
        |args: Value| json!({"functionCall": {"id": "fc-1", "name": "notes_search", "args": args}});

    let ok = gemini
        .call(
            &part(json!({"query": "rust", "limit": 3})),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        ok,
        json!({"functionResponse": {"id": "fc-1", "name": "notes_search", "response": {
            "output": {"query": "rust", "limit": 3},
            "display": "found rust (limit Some(3))"
        }}})
    );
    let invalid = gemini
        .call(&part(json!({"query": ""})), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(
        invalid,
        json!({"functionResponse": {"id": "fc-1", "name": "notes_search", "response": {"error": {
            "code": "INVALID_INPUT",
            "message": "Input validation failed",
            "details": [{"path": "/query", "message": "\"\" is shorter than 1 character"}]
        }}}})
    );
    // The bare functionCall object works too; no id means none comes back.
    let null = gemini
        .call(
            &json!({"name": "notes_search", "args": {"query": "rust", "limit": null}}),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        null,
        json!({"functionResponse": {"name": "notes_search", "response": {
            "output": {"query": "rust", "limit": null},
            "display": "found rust (limit None)"
        }}})
    );
    assert_eq!(metrics.snapshot().len(), 3);
}

#[tokio::test]
async fn unknown_tools_and_unreadable_arguments_are_answered() {
    let (registry, metrics) = registry();
    let openai = ProviderTools::new(registry.clone(), OpenAi::chat_completions());
    let unknown = openai
        .call(&openai_call("c1", "notes.search", "{}"), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(
        unknown["content"], "Error [TOOL_NOT_FOUND]: No such tool: notes.search",
        "only provider names map back"
    );
    let broken = openai
        .call(
            &openai_call("c2", "notes_search", r#"{"query": "#),
            ToolContext::new(),
        )
        .await
        .unwrap();
    let text = broken["content"].as_str().unwrap();
    assert!(text.starts_with("Error [INVALID_INPUT]: Input validation failed\n  (input): the arguments are not valid JSON"), "{text}");
    assert!(metrics.snapshot().is_empty(), "neither reached a tool");

    // Arguments of a non-object input arrive wrapped and are unwrapped.
    let anthropic = ProviderTools::new(registry, Anthropic);
    let tools = anthropic.tools().unwrap();
    let double = tools.iter().find(|t| t["name"] == "math_double").unwrap();
    assert_eq!(
        double["input_schema"],
        json!({"type": "object", "properties": {"value": {"type": "integer", "format": "int64", "minimum": i64::MIN, "maximum": i64::MAX}}, "required": ["value"], "additionalProperties": false})
    );
    let doubled = anthropic
        .call(
            &json!({"type": "tool_use", "id": "t", "name": "math_double", "input": {"value": 21}}),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(doubled["content"][0]["text"], "42");
}

#[tokio::test]
async fn payloads_of_another_shape_are_refused_without_running_anything() {
    let (registry, metrics) = registry();
    let anthropic = ProviderTools::new(registry.clone(), Anthropic);
    let error = anthropic
        .call(&openai_call("c", "notes_search", "{}"), ToolContext::new())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        CallError::NotACall {
            expected: "an Anthropic tool_use block",
            problem:
                "expected a `{\"type\": \"tool_use\", \"id\", \"name\", \"input\"}` content block"
                    .into()
        }
    );
    let openai = ProviderTools::new(registry.clone(), OpenAi::chat_completions());
    let missing_id = openai
        .call(
            &json!({"type": "function", "function": {"name": "notes_search", "arguments": "{}"}}),
            ToolContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        missing_id.to_string().contains("no string `id`"),
        "{missing_id}"
    );
    // One bad payload in a turn: nothing runs.
    let turn = [
        openai_call("a", "notes_search", r#"{"query":"x"}"#),
        json!("not a call"),
    ];
    assert!(openai.call_all(&turn, ToolContext::new()).await.is_err());
    assert!(metrics.snapshot().is_empty());
}

#[tokio::test]
async fn a_turn_of_calls_becomes_what_the_conversation_appends() {
    let (registry, metrics) = registry();
    let anthropic = ProviderTools::new(registry.clone(), Anthropic);
    let turn = [
        json!({"type": "tool_use", "id": "a", "name": "notes_search", "input": {"query": "one"}}),
        json!({"type": "tool_use", "id": "b", "name": "notes_search", "input": {"query": ""}}),
    ];
    let reply = anthropic.call_all(&turn, ToolContext::new()).await.unwrap();
    assert_eq!(reply.len(), 1, "one user message");
    assert_eq!(reply[0]["role"], "user");
    let blocks = reply[0]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["tool_use_id"], "a");
    assert_eq!(blocks[1]["tool_use_id"], "b");
    assert_eq!(blocks[1]["is_error"], true);

    let gemini = ProviderTools::new(registry.clone(), Gemini);
    let parts = [
        json!({"functionCall": {"name": "notes_search", "args": {"query": "one"}}}),
        json!({"functionCall": {"name": "math_double", "args": {"value": 2}}}),
    ];
    let reply = gemini.call_all(&parts, ToolContext::new()).await.unwrap();
    assert_eq!(reply.len(), 1);
    assert_eq!(reply[0]["role"], "user");
    assert_eq!(
        reply[0]["parts"][1]["functionResponse"]["response"]["output"],
        4
    );

    let openai = ProviderTools::new(registry, OpenAi::chat_completions());
    let calls = [
        openai_call("x", "notes_search", r#"{"query":"one"}"#),
        openai_call("y", "math_double", r#"{"value":5}"#),
    ];
    let reply = openai.call_all(&calls, ToolContext::new()).await.unwrap();
    assert_eq!(
        reply,
        [
            json!({"role": "tool", "tool_call_id": "x", "content": "found one (limit None)"}),
            json!({"role": "tool", "tool_call_id": "y", "content": "10"}),
        ]
    );
    assert_eq!(metrics.snapshot().len(), 6);
}
