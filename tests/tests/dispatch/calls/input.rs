//! Look-up and input: an unknown tool is `TOOL_NOT_FOUND`; the enforced
//! schema is the advertised one, and every violation is one issue with a
//! JSON pointer; serde errors past a looser schema are `INVALID_INPUT`;
//! a unit input takes the empty object.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gonk_tools::prelude::*;

use super::{events, outcome};

#[derive(Deserialize, JsonSchema)]
struct SearchNotes {
    /// Free-text query.
    #[schemars(length(min = 1))]
    query: String,
    #[schemars(range(min = 1, max = 20))]
    limit: Option<u32>,
}

fn search_tool(calls: Arc<AtomicUsize>) -> ToolDefinition {
    ToolDefinition::builder("notes.search")
        .description("Search notes.")
        .handler(move |input: SearchNotes, _| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ToolError>(json!({"query": input.query, "limit": input.limit})) }
        })
        .build()
}

#[tokio::test]
async fn unknown_tool_is_tool_not_found() {
    let registry = ToolRegistry::new();
    let events = events(&registry, "ghost", json!({})).await;
    assert_eq!(
        events,
        [ToolEvent::Error {
            code: ErrorCode::ToolNotFound,
            message: "No such tool: ghost".into(),
            details: None
        }]
    );
}

#[tokio::test]
async fn every_schema_violation_is_one_issue_with_a_json_pointer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::new();
    registry.register(search_tool(calls.clone())).unwrap();

    let err = outcome(&registry, "notes.search", json!({"query": "", "limit": 99}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert_eq!(err.message, "Input validation failed");
    let mut paths: Vec<String> = err.issues().into_iter().map(|i| i.path).collect();
    paths.sort();
    assert_eq!(paths, ["/limit", "/query"]);
    assert_eq!(err.issues().len(), 2);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the handler must not run on invalid input"
    );

    // Wrong types and a missing required field.
    let err = outcome(&registry, "notes.search", json!({"limit": "five"}))
        .await
        .unwrap_err();
    let issues = err.issues();
    assert!(issues.iter().any(|i| i.path == "/limit"), "{issues:?}");
    assert!(
        issues
            .iter()
            .any(|i| i.path.is_empty() && i.message.contains("query")),
        "{issues:?}"
    );

    // A non-object input.
    let err = outcome(&registry, "notes.search", json!([1, 2]))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);

    let ok = outcome(
        &registry,
        "notes.search",
        json!({"query": "rust", "limit": 5}),
    )
    .await
    .unwrap();
    assert_eq!(ok.data, json!({"query": "rust", "limit": 5}));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_enforced_schema_is_the_advertised_schema() {
    let registry = ToolRegistry::new();
    registry
        .register(search_tool(Arc::new(AtomicUsize::new(0))))
        .unwrap();
    let def = registry.get("notes.search").unwrap();
    let schema = def.effective_input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["query"]["minLength"], 1);
    assert_eq!(schema["properties"]["limit"]["maximum"], 20);
    assert_eq!(schema["required"], json!(["query"]));
    assert!(schema.get("$schema").is_none());
}

#[tokio::test]
async fn serde_errors_past_the_schema_are_invalid_input_not_internal() {
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Needs {
        count: u8,
    }
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("loose")
                .description("A trusted override that is looser than the type.")
                .input_json_schema(json!({"type": "object"}))
                .handler(|_: Needs, _| async { Ok::<_, ToolError>(()) })
                .build(),
        )
        .unwrap();
    let err = outcome(&registry, "loose", json!({"count": 300}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert_eq!(err.issues().len(), 1);
    assert!(
        err.issues()[0].message.contains("300"),
        "{:?}",
        err.issues()
    );
}

#[tokio::test]
async fn a_unit_input_takes_the_empty_object() {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("ping")
                .description("Takes nothing.")
                .handler(|(): (), _| async { Ok::<_, ToolError>("pong") })
                .build(),
        )
        .unwrap();
    let def = registry.get("ping").unwrap();
    assert_eq!(def.input_schema["type"], "object");
    assert_eq!(
        outcome(&registry, "ping", json!({})).await.unwrap().data,
        "pong"
    );
    let err = outcome(&registry, "ping", json!(5)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}
