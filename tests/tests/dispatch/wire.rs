//! The JSON wire shape of events, displays, errors and outcomes — what
//! other languages read, pinned field by field — and outcome-collection
//! precedence.

use gonk_tools::event::ResourceContents;
use gonk_tools::prelude::*;
use gonk_tools::scope::{InMemoryScopeStore, ScopeStore, ScopeTier};
use serde_json::Value;

fn round_trip(event: ToolEvent, expected: Value) {
    assert_eq!(serde_json::to_value(&event).unwrap(), expected);
    let back: ToolEvent = serde_json::from_value(expected).unwrap();
    assert_eq!(back, event);
}

#[test]
fn events_keep_their_wire_shape_and_absent_optionals_are_absent() {
    round_trip(
        ToolEvent::log(LogLevel::Warn, "careful"),
        json!({"type": "log", "level": "warn", "message": "careful"}),
    );
    round_trip(
        ToolEvent::Log {
            level: LogLevel::Debug,
            message: "m".into(),
            meta: Some(json!({"k": 1})),
        },
        json!({"type": "log", "level": "debug", "message": "m", "meta": {"k": 1}}),
    );
    round_trip(ToolEvent::progress(None, None), json!({"type": "progress"}));
    round_trip(
        ToolEvent::progress(42.5, Some("indexing".to_owned())),
        json!({"type": "progress", "percent": 42.5, "message": "indexing"}),
    );
    round_trip(
        ToolEvent::data(json!([1, 2])),
        json!({"type": "data", "chunk": [1, 2]}),
    );
    round_trip(
        ToolEvent::result(json!({"ok": true})),
        json!({"type": "result", "data": {"ok": true}}),
    );
    round_trip(
        ToolEvent::Result {
            data: json!(1),
            display: Some(ToolDisplay::Text("one".into())),
        },
        json!({"type": "result", "data": 1, "display": "one"}),
    );
    round_trip(
        ToolEvent::error(ToolError::not_found("x")),
        json!({"type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: x"}),
    );
    round_trip(
        ToolEvent::error(
            ToolError::new(ErrorCode::custom("MINE"), "m").with_details(json!({"why": 1})),
        ),
        json!({"type": "error", "code": "MINE", "message": "m", "details": {"why": 1}}),
    );
}

#[test]
fn a_null_result_keeps_its_data_key() {
    round_trip(
        ToolEvent::result(Value::Null),
        json!({"type": "result", "data": null}),
    );
}

#[test]
fn display_blocks_have_stable_shapes() {
    let blocks = vec![
        DisplayBlock::Text { text: "t".into() },
        DisplayBlock::Markdown { text: "# h".into() },
        DisplayBlock::Code {
            language: "rust".into(),
            code: "fn main(){}".into(),
            caption: None,
        },
        DisplayBlock::Code {
            language: "sh".into(),
            code: "ls".into(),
            caption: Some("list".into()),
        },
        DisplayBlock::Json {
            value: json!({"a": 1}),
            caption: None,
        },
        DisplayBlock::Image {
            mime_type: "image/png".into(),
            data: "iVBO".into(),
            alt: Some("logo".into()),
        },
        DisplayBlock::Link {
            url: "https://example.com".into(),
            title: None,
        },
        DisplayBlock::Audio {
            mime_type: "audio/wav".into(),
            data: "UklG".into(),
        },
        DisplayBlock::Resource {
            uri: "file:///a.txt".into(),
            mime_type: Some("text/plain".into()),
            contents: ResourceContents::Text {
                text: "hello".into(),
            },
        },
        DisplayBlock::Resource {
            uri: "file:///a.bin".into(),
            mime_type: None,
            contents: ResourceContents::Blob {
                blob: "AAEC".into(),
            },
        },
    ];
    let expected = json!([
        {"type": "text", "text": "t"},
        {"type": "markdown", "text": "# h"},
        {"type": "code", "language": "rust", "code": "fn main(){}"},
        {"type": "code", "language": "sh", "code": "ls", "caption": "list"},
        {"type": "json", "value": {"a": 1}},
        {"type": "image", "mimeType": "image/png", "data": "iVBO", "alt": "logo"},
        {"type": "link", "url": "https://example.com"},
        {"type": "audio", "mimeType": "audio/wav", "data": "UklG"},
        {"type": "resource", "uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"},
        {"type": "resource", "uri": "file:///a.bin", "blob": "AAEC"},
    ]);
    let display = ToolDisplay::Blocks(blocks);
    assert_eq!(serde_json::to_value(&display).unwrap(), expected);
    let back: ToolDisplay = serde_json::from_value(expected).unwrap();
    assert_eq!(back, display);
    assert_eq!(
        serde_json::to_value(ToolDisplay::from("plain")).unwrap(),
        json!("plain")
    );
}

#[test]
fn error_codes_round_trip_as_strings() {
    for code in [
        "TOOL_NOT_FOUND",
        "INVALID_INPUT",
        "OUTPUT_INVALID",
        "ABORTED",
        "CYCLE",
        "AUTHORIZATION_DENIED",
        "AUTH_RESOURCE_UNRESOLVED",
        "AUTH_AUDIT_FAILED",
        "APPROVAL_REQUIRED",
        "APPROVAL_DENIED",
        "INTERNAL",
        "NO_RESULT",
        "SOMETHING_ELSE",
    ] {
        let parsed: ErrorCode = serde_json::from_value(json!(code)).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), json!(code));
        assert_eq!(parsed.as_str(), code);
    }
    assert_eq!(ErrorCode::custom("CYCLE"), ErrorCode::Cycle);
    assert!(matches!(ErrorCode::parse("MINE"), ErrorCode::Custom(_)));
}

#[test]
fn invalid_input_details_are_the_issues() {
    let error = ToolError::invalid_input(vec![gonk_tools::ValidationIssue {
        path: "/query".into(),
        message: "too short".into(),
    }]);
    assert_eq!(
        serde_json::to_value(ToolEvent::<Value>::error(error)).unwrap(),
        json!({
            "type": "error",
            "code": "INVALID_INPUT",
            "message": "Input validation failed",
            "details": [{"path": "/query", "message": "too short"}],
        })
    );
}

#[test]
fn tool_output_shape() {
    assert_eq!(
        serde_json::to_value(ToolOutput::new(json!(1))).unwrap(),
        json!({"data": 1})
    );
    assert_eq!(
        serde_json::to_value(ToolOutput::new(json!(1)).with_display("one")).unwrap(),
        json!({"data": 1, "display": "one"})
    );
}

async fn collect(events: Vec<ToolEvent>) -> (Result<ToolOutput, ToolError>, usize) {
    let mut seen = 0;
    let outcome = collect_tool_outcome(futures::stream::iter(events), |_| seen += 1).await;
    (outcome, seen)
}

#[tokio::test]
async fn outcome_collection_precedence() {
    let err = || ToolEvent::error(ToolError::internal("late failure"));
    let res = |n: i32| ToolEvent::result(json!(n));

    let (outcome, seen) = collect(vec![ToolEvent::progress(1.0, None), res(1), err()]).await;
    assert_eq!(
        outcome.unwrap_err().message,
        "late failure",
        "an error after a result wins"
    );
    assert_eq!(seen, 3, "every event is handed to on_event");

    let (outcome, _) = collect(vec![err(), res(2)]).await;
    assert_eq!(
        outcome.unwrap_err().message,
        "late failure",
        "an error before a result wins too"
    );

    let (outcome, _) = collect(vec![
        ToolEvent::error(ToolError::internal("first")),
        ToolEvent::error(ToolError::internal("second")),
    ])
    .await;
    assert_eq!(
        outcome.unwrap_err().message,
        "second",
        "the last error wins"
    );

    let (outcome, _) = collect(vec![res(1), res(2)]).await;
    assert_eq!(outcome.unwrap().data, json!(2), "the last result wins");

    let (outcome, _) = collect(vec![ToolEvent::data(json!(1))]).await;
    let error = outcome.unwrap_err();
    assert_eq!(error.code, ErrorCode::NoResult);
    assert_eq!(error.message, "Tool produced no result");
}

#[test]
fn scope_get_walks_from_most_to_least_specific() {
    let store = InMemoryScopeStore::new();
    assert_eq!(store.get("k"), None);
    store.set(ScopeTier::Global, "k", json!("global"));
    assert_eq!(store.get("k"), Some(json!("global")));
    store.set(ScopeTier::Project, "k", json!("project"));
    assert_eq!(store.get("k"), Some(json!("project")));
    store.set(ScopeTier::Session, "k", json!("session"));
    assert_eq!(store.get("k"), Some(json!("session")));
    assert_eq!(store.get_at(ScopeTier::Persona, "k"), None);
    assert_eq!(store.get_at(ScopeTier::Global, "k"), Some(json!("global")));
    assert_eq!(
        store.remove(ScopeTier::Session, "k"),
        Some(json!("session"))
    );
    assert_eq!(store.get("k"), Some(json!("project")));
}
