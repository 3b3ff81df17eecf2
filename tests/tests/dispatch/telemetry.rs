//! The dispatch spans (`gonk_tools::telemetry`), read back from a
//! capturing `tracing` layer: one `execute_tool {tool}` span per call with
//! the GenAI attributes; a composed call's span is a child of its parent's;
//! the outcome and `error.type`; a timeout and a cancellation as events; a
//! streamed log line as an event in the call's span; for an authenticated
//! call the principal id, the gate spans and the approval tier — and no
//! secret from the input or a resource's metadata in any span or event.

use std::time::Duration;

use futures::StreamExt;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use gonk_tools_tests::span_capture::{CapturedSpan, SpanCapture};
use serde_json::{json, Value};

#[derive(Deserialize, JsonSchema)]
struct Empty {}

#[derive(Deserialize, JsonSchema)]
struct Query {
    #[schemars(length(min = 1))]
    #[allow(dead_code)]
    query: String,
}

fn call_span(capture: &SpanCapture, tool: &str) -> CapturedSpan {
    let spans = capture.find("gen_ai.tool.name", tool);
    let calls: Vec<_> = spans
        .into_iter()
        .filter(|s| s.name == "execute_tool")
        .collect();
    assert_eq!(calls.len(), 1, "one call span of {tool}: {calls:?}");
    calls.into_iter().next().unwrap()
}

async fn run(
    registry: &ToolRegistry,
    name: &str,
    input: Value,
    ctx: ToolContext,
) -> Vec<ToolEvent> {
    registry.invoke(name, input, ctx).collect().await
}

#[tokio::test]
async fn a_composed_call_is_a_child_span_of_its_parent() {
    let capture = SpanCapture::default();
    let _guard = capture.install();
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("inner")
                .description("Answers.")
                .handler(|_: Empty, _| async { Ok::<_, ToolError>(1) })
                .build(),
            ToolDefinition::builder("outer")
                .description("Calls inner.")
                .handler(|_: Empty, ctx: ToolContext| async move {
                    let events = ctx.invoke("inner", json!({}));
                    collect_tool_outcome(events, |_| {}).await.map(|o| o.data)
                })
                .build(),
        ])
        .unwrap();

    let events = run(&registry, "outer", json!({}), ToolContext::new()).await;
    assert!(events.last().unwrap().as_error().is_none(), "{events:?}");

    let outer = call_span(&capture, "outer");
    let inner = call_span(&capture, "inner");
    assert_eq!(
        inner.parent,
        Some(outer.id),
        "inner's span is outer's child"
    );
    assert_eq!(outer.parent, None);
    assert_eq!(outer.fields["otel.name"], "execute_tool outer");
    assert_eq!(outer.fields["gen_ai.operation.name"], "execute_tool");
    assert_eq!(outer.fields["gonk.outcome"], "ok");
    assert_eq!(inner.fields["gonk.outcome"], "ok");
    assert!(!outer.fields.contains_key("error.type"));
}

#[tokio::test]
async fn a_failure_carries_its_code_as_error_type() {
    let capture = SpanCapture::default();
    let _guard = capture.install();
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("search")
                .description("Searches.")
                .handler(|_: Query, _| async { Ok::<_, ToolError>(0) })
                .build(),
        )
        .unwrap();

    run(
        &registry,
        "search",
        json!({"query": ""}),
        ToolContext::new(),
    )
    .await;
    let span = call_span(&capture, "search");
    assert_eq!(span.fields["error.type"], "INVALID_INPUT");
    assert_eq!(span.fields["gonk.outcome"], "error");
    assert_eq!(span.fields["otel.status_code"], "ERROR");

    // A missing tool is traced as what the caller asked for.
    run(&registry, "nope", json!({}), ToolContext::new()).await;
    assert_eq!(
        call_span(&capture, "nope").fields["error.type"],
        "TOOL_NOT_FOUND"
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_and_a_cancellation_are_events_on_the_call_span() {
    let capture = SpanCapture::default();
    let _guard = capture.install();
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("slow")
                .description("Sleeps.")
                .timeout(Duration::from_millis(100))
                .handler(|_: Empty, _| async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok::<_, ToolError>(0)
                })
                .build(),
            ToolDefinition::builder("waits")
                .description("Waits.")
                .handler(|_: Empty, _| async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok::<_, ToolError>(0)
                })
                .build(),
        ])
        .unwrap();

    run(&registry, "slow", json!({}), ToolContext::new()).await;
    let slow = call_span(&capture, "slow");
    assert_eq!(slow.fields["error.type"], "TIMEOUT");

    let token = tokio_util::sync::CancellationToken::new();
    let ctx = ToolContext::from_cancellation(token.clone());
    let call = run(&registry, "waits", json!({}), ctx);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        token.cancel();
    };
    let (events, ()) = futures::join!(call, cancel);
    assert_eq!(
        events.last().unwrap().as_error().unwrap().code,
        ErrorCode::Aborted
    );
    let waits = call_span(&capture, "waits");
    assert_eq!(waits.fields["error.type"], "ABORTED");
    assert_eq!(waits.fields["gonk.outcome"], "aborted");

    let events = capture.events();
    let in_span = |span: &CapturedSpan, message: &str| {
        events.iter().any(|e| {
            e.span == Some(span.id) && e.fields.get("message").map(String::as_str) == Some(message)
        })
    };
    assert!(in_span(&slow, "call timed out"), "{events:?}");
    assert!(in_span(&waits, "call cancelled"), "{events:?}");
}

#[tokio::test]
async fn a_streamed_log_line_is_an_event_in_the_call_span() {
    let capture = SpanCapture::default();
    let _guard = capture.install();
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("export")
                .description("Streams.")
                .stream_handler(|_: Empty, _| async {
                    futures::stream::iter(vec![
                        ToolEvent::log(LogLevel::Warn, "disk nearly full"),
                        ToolEvent::result(1),
                    ])
                })
                .build(),
        )
        .unwrap();
    run(&registry, "export", json!({}), ToolContext::new()).await;
    let span = call_span(&capture, "export");
    assert!(
        capture.events().iter().any(|e| e.span == Some(span.id)
            && e.fields.get("message").map(String::as_str) == Some("disk nearly full")),
        "{:?}",
        capture.events()
    );
}

const SECRET_META: &str = "meta-SECRET-4c1d";
const SECRET_INPUT: &str = "input-SECRET-8e2b";

#[tokio::test]
async fn an_authenticated_call_names_its_principal_and_gates_and_no_secret() {
    let capture = SpanCapture::default();
    let _guard = capture.install();
    let resolver = TestResolver::new(|req| {
        Ok(req.input.get("noteId").and_then(|v| v.as_str()).map(|id| {
            ResourceRef::new("note")
                .with_target(id)
                .with_tenant("acme")
                .with_metadata("apiKey", json!(SECRET_META))
        }))
    });
    let f = fixture(
        options()
            .resource_resolver(resolver)
            .approval_provider(TestProvider::approve_all()),
    );
    let policy = TestPolicy::allow_all();
    let input = json!({"noteId": "n1", "text": SECRET_INPUT});
    let events = run(&f.registry, "notes.edit", input, auth(alice(), &policy)).await;
    assert!(events.last().unwrap().as_error().is_none(), "{events:?}");
    // The secrets reached the policy, so their absence below is redaction.
    assert_eq!(policy.seen()[1].related[0].metadata["apiKey"], SECRET_META);

    let call = call_span(&capture, "notes.edit");
    assert_eq!(call.fields["enduser.id"], alice().id);
    let gates: Vec<_> = capture
        .spans()
        .into_iter()
        .filter(|s| s.name == "gate" && s.parent == Some(call.id))
        .collect();
    let names: Vec<&str> = gates
        .iter()
        .map(|g| g.fields["otel.name"].as_str())
        .collect();
    assert_eq!(names, ["authorize tool.discover", "authorize tool.invoke"]);
    assert_eq!(gates[1].fields["gonk.approval.tier"], "write");

    let all = capture.text();
    for secret in [SECRET_META, SECRET_INPUT] {
        assert!(!all.contains(secret), "{secret} reached telemetry:\n{all}");
    }
}
