//! Per-tool timeouts: a call past its limit ends with `TIMEOUT`, its
//! handler dropped; the registry's default applies to tools without one;
//! a composed call gets what its parent has left. Time is Tokio's paused
//! clock, so nothing here depends on the machine's speed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use gonk_tools::definition::ToolBuilder;
use gonk_tools::metrics::{InMemoryMetrics, MetricOutcome};
use gonk_tools::prelude::*;
use serde_json::Value;

/// Sets its flag when dropped: proves a handler's future was dropped.
struct DropGuard(Arc<AtomicBool>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A tool that sleeps `secs` (holding a drop guard), then returns `secs`.
fn sleeper(name: &str, secs: u64, dropped: Arc<AtomicBool>) -> ToolBuilder {
    ToolDefinition::builder(name)
        .description("Sleeps, then answers.")
        .handler(move |_: NoInput, _| {
            let guard = DropGuard(dropped.clone());
            async move {
                tokio::time::sleep(Duration::from_secs(secs)).await;
                drop(guard);
                Ok::<_, ToolError>(secs)
            }
        })
}

async fn outcome(registry: &ToolRegistry, name: &str) -> Result<Value, ToolError> {
    collect_tool_outcome(registry.invoke(name, json!({}), ToolContext::new()), |_| {})
        .await
        .map(|output| output.data)
}

#[tokio::test(start_paused = true)]
async fn a_call_past_its_timeout_ends_with_timeout_and_drops_the_handler() {
    let metrics = Arc::new(InMemoryMetrics::new());
    let registry = ToolRegistry::builder().metrics(metrics.clone()).build();
    let dropped = Arc::new(AtomicBool::new(false));
    registry
        .register(
            sleeper("slow", 3600, dropped.clone())
                .timeout(Duration::from_millis(1500))
                .build(),
        )
        .unwrap();

    let started = tokio::time::Instant::now();
    let events: Vec<ToolEvent> = registry
        .invoke("slow", json!({}), ToolContext::new())
        .collect()
        .await;

    assert_eq!(events.len(), 1, "one terminal event: {events:?}");
    let error = events[0].as_error().expect("an error event");
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(error.code.as_str(), "TIMEOUT");
    assert_eq!(
        error.message,
        "Tool slow timed out after 1s 500ms and was stopped"
    );
    assert_eq!(error.details, Some(json!({"timeoutMs": 1500})));
    assert!(dropped.load(Ordering::SeqCst), "the handler was dropped");
    assert_eq!(started.elapsed(), Duration::from_millis(1500));

    let records = metrics.snapshot();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].outcome, MetricOutcome::Error);
    assert_eq!(records[0].error_code, Some(ErrorCode::Timeout));
}

#[tokio::test(start_paused = true)]
async fn a_call_within_its_timeout_answers_and_the_code_parses_back() {
    let registry = ToolRegistry::new();
    let dropped = Arc::new(AtomicBool::new(false));
    registry
        .register(
            sleeper("quick", 2, dropped)
                .timeout(Duration::from_secs(3))
                .build(),
        )
        .unwrap();
    assert_eq!(outcome(&registry, "quick").await.unwrap(), json!(2));
    assert_eq!(ErrorCode::parse("TIMEOUT"), ErrorCode::Timeout);
    assert_eq!(ErrorCode::custom("TIMEOUT"), ErrorCode::Timeout);
}

#[tokio::test(start_paused = true)]
async fn the_registry_default_applies_to_tools_without_a_timeout_of_their_own() {
    let registry = ToolRegistry::builder()
        .default_timeout(Duration::from_secs(1))
        .build();
    let defaulted = Arc::new(AtomicBool::new(false));
    let own = Arc::new(AtomicBool::new(false));
    registry
        .register_all([
            sleeper("defaulted", 2, defaulted.clone()).build(),
            sleeper("own", 2, own.clone())
                .timeout(Duration::from_secs(5))
                .build(),
        ])
        .unwrap();

    let error = outcome(&registry, "defaulted").await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(error.details, Some(json!({"timeoutMs": 1000})));
    assert!(defaulted.load(Ordering::SeqCst));

    // The tool's own, longer timeout overrides the default.
    assert_eq!(outcome(&registry, "own").await.unwrap(), json!(2));

    // Derived registries keep the default.
    let derived = registry.filter(|def| def.name == "defaulted");
    let error = outcome(&derived, "defaulted").await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout);
}

#[tokio::test(start_paused = true)]
async fn a_handler_sees_its_deadline_and_a_call_without_a_timeout_has_none() {
    let registry = ToolRegistry::new();
    let report = |name: &str| {
        ToolDefinition::builder(name)
            .description("Reports how long it has.")
            .handler(|_: NoInput, ctx: ToolContext| async move {
                Ok::<_, ToolError>(
                    ctx.deadline()
                        .map(|d| (d - tokio::time::Instant::now()).as_millis() as u64),
                )
            })
    };
    registry
        .register_all([
            report("unlimited").build(),
            report("limited")
                .timeout(Duration::from_millis(700))
                .build(),
        ])
        .unwrap();
    assert_eq!(outcome(&registry, "unlimited").await.unwrap(), Value::Null);
    assert_eq!(outcome(&registry, "limited").await.unwrap(), json!(700));
}

#[tokio::test(start_paused = true)]
async fn a_composed_call_gets_what_its_parent_has_left() {
    let registry = ToolRegistry::new();
    let child_dropped = Arc::new(AtomicBool::new(false));
    registry
        .register_all([
            // The child alone could run for a minute.
            ToolDefinition::builder("child")
                .description("Reports its time left, or sleeps past it.")
                .timeout(Duration::from_secs(60))
                .handler({
                    let child_dropped = child_dropped.clone();
                    move |input: Value, ctx: ToolContext| {
                        let guard = DropGuard(child_dropped.clone());
                        async move {
                            if input["sleep"] == json!(true) {
                                tokio::time::sleep(Duration::from_secs(3600)).await;
                            }
                            drop(guard);
                            let left = ctx.deadline().map(|d| d - tokio::time::Instant::now());
                            Ok::<_, ToolError>(left.map(|d| d.as_millis() as u64))
                        }
                    }
                })
                .input_json_schema(
                    json!({"type": "object", "properties": {"sleep": {"type": "boolean"}}}),
                )
                .build(),
            // The parent has 10 s; it spends 4 before it composes.
            ToolDefinition::builder("parent")
                .description("Waits, then calls the child.")
                .timeout(Duration::from_secs(10))
                .raw_handler(|input: Value, ctx: ToolContext| async move {
                    tokio::time::sleep(Duration::from_secs(4)).await;
                    let child = collect_tool_outcome(ctx.invoke("child", input), |_| {}).await;
                    Ok::<_, ToolError>(ToolOutput::new(match child {
                        Ok(output) => json!({"left": output.data}),
                        Err(error) => json!({"code": error.code, "details": error.details}),
                    }))
                })
                .build(),
        ])
        .unwrap();

    let reported = collect_tool_outcome(
        registry.invoke("parent", json!({}), ToolContext::new()),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(
        reported.data,
        json!({"left": 6000}),
        "the child had the parent's 6 s left, not its own 60 s"
    );

    // A child that would outlive the parent is stopped when the parent's
    // time is up: the parent's whole call ends with TIMEOUT at 10 s.
    let started = tokio::time::Instant::now();
    let error = collect_tool_outcome(
        registry.invoke("parent", json!({"sleep": true}), ToolContext::new()),
        |_| {},
    )
    .await
    .unwrap_err();
    // The child timed out at the parent's deadline; the parent, answering
    // at that instant, is past its own time too.
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(
        error.message,
        "Tool parent timed out after 10s and was stopped"
    );
    assert!(
        child_dropped.load(Ordering::SeqCst),
        "the child's handler was dropped"
    );
    assert_eq!(started.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn a_streaming_call_past_its_timeout_keeps_its_progress_and_ends_with_timeout() {
    let registry = ToolRegistry::new();
    let dropped = Arc::new(AtomicBool::new(false));
    registry
        .register(
            ToolDefinition::builder("stream")
                .description("Reports progress, then stalls.")
                .timeout(Duration::from_secs(2))
                .raw_stream_handler({
                    let dropped = dropped.clone();
                    move |_, _| {
                        let guard = DropGuard(dropped.clone());
                        futures::stream::once(async { ToolEvent::progress(10.0, None) }).chain(
                            futures::stream::once(async move {
                                let _guard = guard;
                                tokio::time::sleep(Duration::from_secs(3600)).await;
                                ToolEvent::result(json!(1))
                            }),
                        )
                    }
                })
                .build(),
        )
        .unwrap();
    let events: Vec<ToolEvent> = registry
        .invoke("stream", json!({}), ToolContext::new())
        .collect()
        .await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(matches!(events[0], ToolEvent::Progress { .. }));
    assert_eq!(events[1].as_error().unwrap().code, ErrorCode::Timeout);
    assert!(dropped.load(Ordering::SeqCst));
}

#[tool(timeout = "2s")]
/// Sleeps an hour.
async fn nap() -> Result<(), ToolError> {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_macro_sets_the_timeout() {
    let registry = ToolRegistry::new();
    registry.register(Nap::definition()).unwrap();
    assert_eq!(
        registry.get("nap").unwrap().timeout,
        Some(Duration::from_secs(2))
    );
    let error = outcome(&registry, "nap").await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(error.details, Some(json!({"timeoutMs": 2000})));
}
