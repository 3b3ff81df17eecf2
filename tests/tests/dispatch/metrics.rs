//! Metrics: exactly one record per invocation, with the right outcome and
//! code, children before parents, and early drops recorded.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use gonk_tools::metrics::{
    CompositeMetrics, InMemoryMetrics, MetricOutcome, MetricRecord, MetricsSink,
};
use gonk_tools::prelude::*;
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

fn registry() -> (ToolRegistry, Arc<InMemoryMetrics>) {
    let metrics = Arc::new(InMemoryMetrics::new());
    let registry = ToolRegistry::builder().metrics(metrics.clone()).build();
    registry
        .register_all([
            ToolDefinition::builder("ok")
                .description("d")
                .handler(|_: Empty, _| async { Ok::<_, ToolError>(1) })
                .build(),
            ToolDefinition::builder("fails")
                .description("d")
                .handler(|_: Empty, _| async {
                    Err::<(), _>(ToolError::new(ErrorCode::custom("BUSY"), "busy"))
                })
                .build(),
            ToolDefinition::builder("hangs")
                .description("d")
                .handler(|_: Empty, _| async {
                    futures::future::pending::<()>().await;
                    Ok::<_, ToolError>(())
                })
                .build(),
            ToolDefinition::builder("parent")
                .description("d")
                .raw_handler(|_, ctx: ToolContext| async move {
                    collect_tool_outcome(ctx.invoke("ok", json!({})), |_| {}).await
                })
                .build(),
        ])
        .unwrap();
    (registry, metrics)
}

fn summary(records: &[MetricRecord]) -> Vec<(String, MetricOutcome, Option<String>)> {
    records
        .iter()
        .map(|r| {
            (
                r.tool.clone(),
                r.outcome,
                r.error_code.as_ref().map(|c| c.to_string()),
            )
        })
        .collect()
}

async fn run(registry: &ToolRegistry, name: &str, input: serde_json::Value) {
    let _: Vec<_> = registry
        .invoke(name, input, ToolContext::new())
        .collect()
        .await;
}

#[tokio::test]
async fn one_record_per_outcome() {
    let (registry, metrics) = registry();
    run(&registry, "ok", json!({})).await;
    run(&registry, "fails", json!({})).await;
    run(&registry, "ghost", json!({})).await;
    run(&registry, "ok", json!([])).await;
    let token = CancellationToken::new();
    let stream = registry.invoke(
        "hangs",
        json!({}),
        ToolContext::new().with_cancellation(token.clone()),
    );
    let pending = tokio::spawn(stream.collect::<Vec<_>>());
    tokio::time::sleep(Duration::from_millis(10)).await;
    token.cancel();
    pending.await.unwrap();

    assert_eq!(
        summary(&metrics.snapshot()),
        [
            ("ok".into(), MetricOutcome::Ok, None),
            ("fails".into(), MetricOutcome::Error, Some("BUSY".into())),
            (
                "ghost".into(),
                MetricOutcome::Error,
                Some("TOOL_NOT_FOUND".into())
            ),
            (
                "ok".into(),
                MetricOutcome::Error,
                Some("INVALID_INPUT".into())
            ),
            (
                "hangs".into(),
                MetricOutcome::Aborted,
                Some("ABORTED".into())
            ),
        ]
    );
    let hung = &metrics.snapshot()[4];
    assert!(
        hung.duration >= Duration::from_millis(10),
        "duration covers the call: {hung:?}"
    );
}

#[tokio::test]
async fn calls_refused_before_they_start_record_no_duration() {
    // Not found and a cycle: the call never started, so its record's
    // duration is 0 (as the contract records), whatever the look-up took.
    let (registry, metrics) = registry();
    registry
        .register(
            ToolDefinition::builder("loop")
                .description("Call itself.")
                .raw_handler(|_, ctx: ToolContext| async move {
                    collect_tool_outcome(ctx.invoke("loop", json!({})), |_| {}).await
                })
                .build(),
        )
        .unwrap();
    run(&registry, "ghost", json!({})).await;
    run(&registry, "loop", json!({})).await;
    let records = metrics.snapshot();
    assert_eq!(
        summary(&records),
        [
            (
                "ghost".into(),
                MetricOutcome::Error,
                Some("TOOL_NOT_FOUND".into())
            ),
            ("loop".into(), MetricOutcome::Error, Some("CYCLE".into())),
            ("loop".into(), MetricOutcome::Error, Some("CYCLE".into())),
        ]
    );
    assert_eq!(records[0].duration, Duration::ZERO, "{:?}", records[0]);
    assert_eq!(records[1].duration, Duration::ZERO, "{:?}", records[1]);
}

#[tokio::test]
async fn a_child_is_recorded_before_its_parent() {
    let (registry, metrics) = registry();
    run(&registry, "parent", json!({})).await;
    assert_eq!(
        summary(&metrics.snapshot()),
        [
            ("ok".into(), MetricOutcome::Ok, None),
            ("parent".into(), MetricOutcome::Ok, None),
        ]
    );
}

#[tokio::test]
async fn an_early_drop_is_recorded_once() {
    let (registry, metrics) = registry();
    let mut stream = registry.invoke("hangs", json!({}), ToolContext::new());
    assert!(
        tokio::time::timeout(Duration::from_millis(5), stream.next())
            .await
            .is_err()
    );
    drop(stream);
    // A stream dropped before it was ever polled is recorded too.
    drop(registry.invoke("ok", json!({}), ToolContext::new()));
    assert_eq!(
        summary(&metrics.snapshot()),
        [
            (
                "hangs".into(),
                MetricOutcome::Aborted,
                Some("ABORTED".into())
            ),
            ("ok".into(), MetricOutcome::Aborted, Some("ABORTED".into())),
        ]
    );
    metrics.clear();
    assert!(metrics.snapshot().is_empty());
}

#[tokio::test]
async fn composite_sink_fans_out() {
    let a = Arc::new(InMemoryMetrics::new());
    let b = Arc::new(InMemoryMetrics::new());
    let composite = CompositeMetrics::new().with(a.clone()).with(b.clone());
    let record = MetricRecord {
        tool: "t".into(),
        duration: Duration::from_millis(1),
        outcome: MetricOutcome::Ok,
        error_code: None,
    };
    composite.record(&record);
    assert_eq!(a.snapshot(), std::slice::from_ref(&record));
    assert_eq!(b.snapshot(), [record]);
}
