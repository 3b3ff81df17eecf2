//! The outcome rule of dispatch: every call's stream ends with exactly one
//! outcome event, last. An `error` is terminal (nothing follows it and the
//! handler is dropped at that point); the latest `result` wins and is
//! emitted when the handler's stream ends; a stream that ends without
//! either ends with `NO_RESULT`; a handler that settles after its token
//! fired is `ABORTED`. The metric records the outcome the consumer saw.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use gonk_tools::definition::ValidateOutput;
use gonk_tools::metrics::{InMemoryMetrics, MetricOutcome};
use gonk_tools::prelude::*;
use gonk_tools::ToolEventStream;
use serde_json::Value;

#[derive(Serialize, JsonSchema)]
struct Count {
    n: u32,
}

/// Sets its flag when dropped: proves the handler's stream was dropped.
struct DropGuard(Arc<AtomicBool>);
impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn progress() -> ToolEvent {
    ToolEvent::progress(50.0, Some("half".to_owned()))
}

fn failure() -> ToolEvent {
    ToolEvent::error(ToolError::new(ErrorCode::custom("NOTE_LOCKED"), "locked"))
}

fn no_result() -> ToolEvent {
    ToolEvent::error(ToolError::new(
        ErrorCode::NoResult,
        "Tool produced no result",
    ))
}

/// What the handler's stream does after its scripted events.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Then {
    /// Ends.
    Ends,
    /// Never ends (only a terminal event can end the call).
    Hangs,
}

struct Case {
    name: &'static str,
    mode: ValidateOutput,
    script: Vec<ToolEvent>,
    then: Then,
    expected: Vec<ToolEvent>,
    metric: (MetricOutcome, Option<&'static str>),
}

fn case(
    name: &'static str,
    script: Vec<ToolEvent>,
    then: Then,
    expected: Vec<ToolEvent>,
    metric: (MetricOutcome, Option<&'static str>),
) -> Case {
    Case {
        name,
        mode: ValidateOutput::Off,
        script,
        then,
        expected,
        metric,
    }
}

/// A registry with one streaming tool that plays `script`, then ends or
/// hangs; `dropped` is set when dispatch drops its stream.
fn scripted(
    mode: ValidateOutput,
    script: Vec<ToolEvent>,
    then: Then,
) -> (ToolRegistry, Arc<InMemoryMetrics>, Arc<AtomicBool>) {
    let metrics = Arc::new(InMemoryMetrics::new());
    let registry = ToolRegistry::builder().metrics(metrics.clone()).build();
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    registry
        .register(
            ToolDefinition::builder("scripted")
                .description("Plays a script of events.")
                .output_schema_for::<Count>()
                .validate_output(mode)
                .raw_stream_handler(move |_, _| {
                    let guard = DropGuard(flag.clone());
                    let tail = match then {
                        Then::Ends => futures::stream::empty().boxed(),
                        Then::Hangs => futures::stream::pending().boxed(),
                    };
                    futures::stream::iter(script.clone())
                        .chain(tail)
                        .map(move |event| {
                            let _keep = &guard;
                            event
                        })
                })
                .build(),
        )
        .unwrap();
    (registry, metrics, dropped)
}

/// All events of a call; a call that never ends fails the test instead of
/// hanging it.
async fn all_events(events: ToolEventStream) -> Vec<ToolEvent> {
    tokio::time::timeout(Duration::from_secs(30), events.collect::<Vec<_>>())
        .await
        .expect("the call's stream must end")
}

#[tokio::test]
async fn every_stream_ends_with_exactly_one_outcome_last() {
    let ok = (MetricOutcome::Ok, None);
    let locked = (MetricOutcome::Error, Some("NOTE_LOCKED"));
    let none = (MetricOutcome::Error, Some("NO_RESULT"));
    let mut cases = vec![
        case("nothing", vec![], Then::Ends, vec![no_result()], none),
        case(
            "progress only",
            vec![progress()],
            Then::Ends,
            vec![progress(), no_result()],
            none,
        ),
        case(
            "two results: the last wins",
            vec![
                ToolEvent::result(json!({"n": 1})),
                ToolEvent::result(json!({"n": 2})),
            ],
            Then::Ends,
            vec![ToolEvent::result(json!({"n": 2}))],
            ok,
        ),
        case(
            "a result, then progress: the result comes last",
            vec![ToolEvent::result(json!({"n": 1})), progress()],
            Then::Ends,
            vec![progress(), ToolEvent::result(json!({"n": 1}))],
            ok,
        ),
        case(
            "log and data pass through around results",
            vec![
                ToolEvent::log(LogLevel::Info, "start"),
                ToolEvent::result(json!({"n": 1})),
                ToolEvent::data(json!("chunk")),
                ToolEvent::result(json!({"n": 2})),
            ],
            Then::Ends,
            vec![
                ToolEvent::log(LogLevel::Info, "start"),
                ToolEvent::data(json!("chunk")),
                ToolEvent::result(json!({"n": 2})),
            ],
            ok,
        ),
        case(
            "an error is terminal",
            vec![
                progress(),
                failure(),
                ToolEvent::result(json!({"n": 1})),
                progress(),
            ],
            Then::Hangs,
            vec![progress(), failure()],
            locked,
        ),
        case(
            "a result, then an error: only the error",
            vec![ToolEvent::result(json!({"n": 1})), failure()],
            Then::Hangs,
            vec![failure()],
            locked,
        ),
    ];
    let mut strict = case(
        "strict: an invalid result is terminal",
        vec![
            ToolEvent::result(json!({"n": "many"})),
            progress(),
            ToolEvent::result(json!({"n": 1})),
        ],
        Then::Hangs,
        vec![],
        (MetricOutcome::Error, Some("OUTPUT_INVALID")),
    );
    strict.mode = ValidateOutput::Strict;
    cases.push(strict);
    let mut lax = case(
        "lax: an invalid result is held like any other",
        vec![ToolEvent::result(json!({"n": "many"})), progress()],
        Then::Ends,
        vec![progress(), ToolEvent::result(json!({"n": "many"}))],
        ok,
    );
    lax.mode = ValidateOutput::Lax;
    cases.push(lax);

    for case in cases {
        let (registry, metrics, dropped) = scripted(case.mode, case.script, case.then);
        let got = all_events(registry.invoke("scripted", json!({}), ToolContext::new())).await;
        if case.mode == ValidateOutput::Strict {
            assert_eq!(got.len(), 1, "{}: {got:?}", case.name);
            let error = got[0].as_error().expect("an error");
            assert_eq!(error.code, ErrorCode::OutputInvalid, "{}", case.name);
            assert!(
                error.message.starts_with("Output validation failed"),
                "{}: {}",
                case.name,
                error.message
            );
            assert_eq!(error.issues()[0].path, "/n", "{}", case.name);
        } else {
            assert_eq!(got, case.expected, "{}", case.name);
        }
        let outcomes = got
            .iter()
            .filter(|e| matches!(e, ToolEvent::Result { .. } | ToolEvent::Error { .. }))
            .count();
        assert_eq!(outcomes, 1, "{}: exactly one outcome", case.name);
        assert!(
            dropped.load(Ordering::SeqCst),
            "{}: the handler is dropped when the call ends",
            case.name
        );
        let records = metrics.snapshot();
        assert_eq!(records.len(), 1, "{}", case.name);
        assert_eq!(
            (
                records[0].outcome,
                records[0].error_code.as_ref().map(|c| c.to_string())
            ),
            (case.metric.0, case.metric.1.map(str::to_owned)),
            "{}: the metric records the outcome seen",
            case.name
        );
    }
}

#[tokio::test]
async fn collect_tool_outcome_sees_what_the_stream_says() {
    for (script, expected) in [
        (
            vec![ToolEvent::result(json!({"n": 1})), failure()],
            Err(ErrorCode::custom("NOTE_LOCKED")),
        ),
        (
            vec![failure(), ToolEvent::result(json!({"n": 1}))],
            Err(ErrorCode::custom("NOTE_LOCKED")),
        ),
        (vec![], Err(ErrorCode::NoResult)),
        (
            vec![
                ToolEvent::result(json!({"n": 1})),
                ToolEvent::result(json!({"n": 2})),
            ],
            Ok(json!({"n": 2})),
        ),
    ] {
        let (registry, _, _) = scripted(ValidateOutput::Off, script.clone(), Then::Ends);
        let mut seen = Vec::new();
        let outcome = collect_tool_outcome(
            registry.invoke("scripted", json!({}), ToolContext::new()),
            |event| seen.push(event.clone()),
        )
        .await;
        assert_eq!(
            outcome.map(|o| o.data).map_err(|e| e.code),
            expected,
            "{script:?}"
        );
        assert_eq!(
            seen.iter()
                .filter(|e| matches!(e, ToolEvent::Result { .. } | ToolEvent::Error { .. }))
                .count(),
            1,
            "one outcome reaches on_event: {seen:?}"
        );
    }
}

// ------------------------------------------------------- abort wins the race

/// A tool that cancels its own call (the token fires while it runs) and
/// then settles as `settle` says.
fn cancels_itself(name: &str, settle: Result<i64, ToolError>) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Notices cancellation and returns anyway.")
        .raw_handler(move |_, ctx: ToolContext| {
            let settle = settle.clone();
            async move {
                ctx.cancellation().cancel();
                settle.map(|n| ToolOutput::new(json!(n)))
            }
        })
        .build()
}

#[tokio::test]
async fn a_handler_that_settles_after_its_token_fired_is_aborted() {
    let metrics = Arc::new(InMemoryMetrics::new());
    let registry = ToolRegistry::builder().metrics(metrics.clone()).build();
    registry
        .register_all([
            cancels_itself("returns.value", Ok(1)),
            cancels_itself(
                "returns.error",
                Err(ToolError::new(ErrorCode::custom("GAVE_UP"), "gave up")),
            ),
            ToolDefinition::builder("streams.value")
                .description("Notices cancellation, yields a result and ends.")
                .raw_stream_handler(|_, ctx: ToolContext| {
                    futures::stream::once(async move {
                        ctx.cancellation().cancel();
                        ToolEvent::result(json!(1))
                    })
                })
                .build(),
        ])
        .unwrap();
    for name in ["returns.value", "returns.error", "streams.value"] {
        let got = all_events(registry.invoke(name, json!({}), ToolContext::new())).await;
        assert_eq!(got, [ToolEvent::error(ToolError::aborted())], "{name}");
    }
    assert!(
        metrics
            .snapshot()
            .iter()
            .all(|r| r.outcome == MetricOutcome::Aborted),
        "{:?}",
        metrics.snapshot()
    );
}

// ------------------------------------------------ the metric is what was seen

#[tokio::test]
async fn a_stream_dropped_after_its_error_records_the_error() {
    let (registry, metrics, dropped) = scripted(
        ValidateOutput::Off,
        vec![progress(), failure()],
        Then::Hangs,
    );
    let mut events = registry.invoke("scripted", json!({}), ToolContext::new());
    assert_eq!(events.next().await, Some(progress()));
    assert_eq!(events.next().await, Some(failure()));
    // The consumer saw the error and stops reading.
    drop(events);
    assert!(dropped.load(Ordering::SeqCst));
    let records = metrics.snapshot();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].outcome, MetricOutcome::Error);
    assert_eq!(
        records[0].error_code,
        Some(ErrorCode::custom("NOTE_LOCKED"))
    );
}

#[tokio::test]
async fn a_stream_dropped_before_its_outcome_is_aborted() {
    let (registry, metrics, dropped) = scripted(
        ValidateOutput::Off,
        vec![progress(), ToolEvent::result(json!({"n": 1}))],
        Then::Hangs,
    );
    let mut events = registry.invoke("scripted", json!({}), ToolContext::new());
    assert_eq!(events.next().await, Some(progress()));
    drop(events);
    assert!(dropped.load(Ordering::SeqCst));
    let records = metrics.snapshot();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].outcome, MetricOutcome::Aborted);
}

/// A handler may yield `Value`s of any shape; the rule does not care.
#[tokio::test]
async fn a_plain_handler_still_ends_with_its_one_outcome() {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("plain")
                .description("Returns once.")
                .raw_handler(|_, _| async { Ok(ToolOutput::new(Value::Null)) })
                .build(),
        )
        .unwrap();
    let got = all_events(registry.invoke("plain", json!({}), ToolContext::new())).await;
    assert_eq!(got, [ToolEvent::result(Value::Null)]);
}
