//! Dispatch (unauthenticated path): look-up, cycles, schema enforcement,
//! handler forms, cancellation, panics, composition and output validation.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use gonk_tools::definition::ValidateOutput;
use gonk_tools::prelude::*;
use gonk_tools::scope::{InMemoryScopeStore, ScopeStore, ScopeTier};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

#[derive(Deserialize, JsonSchema)]
struct SearchNotes {
    /// Free-text query.
    #[schemars(length(min = 1))]
    query: String,
    #[schemars(range(min = 1, max = 20))]
    limit: Option<u32>,
}

async fn events(registry: &ToolRegistry, name: &str, input: serde_json::Value) -> Vec<ToolEvent> {
    registry
        .invoke(name, input, ToolContext::new())
        .collect()
        .await
}

async fn outcome(
    registry: &ToolRegistry,
    name: &str,
    input: serde_json::Value,
) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(registry.invoke(name, input, ToolContext::new()), |_| {}).await
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

/// Sets its flag when dropped: proves a handler's future was dropped.
struct DropGuard(Arc<AtomicBool>);
impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
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
async fn handler_returns_are_normalized() {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("plain")
                .description("d")
                .handler(|_: Empty, _| async { Ok::<_, ToolError>(7) })
                .build(),
            ToolDefinition::builder("display")
                .description("d")
                .handler_with_output(|_: Empty, _| async {
                    Ok::<_, ToolError>(ToolOutput::new(json!({"n": 1})).with_display("one note"))
                })
                .build(),
            ToolDefinition::builder("own.code")
                .description("d")
                .handler(|_: Empty, _| async {
                    Err::<(), _>(ToolError::new(
                        ErrorCode::custom("NOTE_LOCKED"),
                        "The note is locked",
                    ))
                })
                .build(),
            ToolDefinition::builder("io.error")
                .description("d")
                .handler(|_: Empty, _| async {
                    Err::<(), _>(std::io::Error::other("disk on fire"))
                })
                .build(),
        ])
        .unwrap();

    assert_eq!(
        events(&registry, "plain", json!({})).await,
        [ToolEvent::result(json!(7))]
    );
    assert_eq!(
        events(&registry, "display", json!({})).await,
        [ToolEvent::Result {
            data: json!({"n": 1}),
            display: Some(ToolDisplay::Text("one note".into()))
        }]
    );
    let err = outcome(&registry, "own.code", json!({})).await.unwrap_err();
    assert_eq!(err.code.as_str(), "NOTE_LOCKED");
    assert_eq!(err.message, "The note is locked");
    let err = outcome(&registry, "io.error", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Internal);
    assert_eq!(err.message, "disk on fire");
}

#[tokio::test]
async fn streamed_events_pass_through_in_order() {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("export")
                .description("Streams.")
                .stream_handler(|_: Empty, _| async {
                    futures::stream::iter(vec![
                        ToolEvent::log(LogLevel::Info, "starting"),
                        ToolEvent::progress(50.0, Some("half".to_owned())),
                        ToolEvent::data(json!({"chunk": 1})),
                        ToolEvent::result(vec!["a", "b"]),
                    ])
                })
                .build(),
        )
        .unwrap();
    let got = events(&registry, "export", json!({})).await;
    assert_eq!(
        got,
        [
            ToolEvent::log(LogLevel::Info, "starting"),
            ToolEvent::progress(50.0, Some("half".to_owned())),
            ToolEvent::data(json!({"chunk": 1})),
            ToolEvent::result(json!(["a", "b"])),
        ]
    );
}

#[tokio::test]
async fn cancellation_ends_with_aborted_and_drops_the_handler() {
    let dropped = Arc::new(AtomicBool::new(false));
    let started = Arc::new(tokio::sync::Notify::new());
    let registry = ToolRegistry::new();
    {
        let dropped = dropped.clone();
        let started = started.clone();
        registry
            .register(
                ToolDefinition::builder("slow")
                    .description("Never finishes by itself.")
                    .handler(move |_: Empty, _| {
                        let guard = DropGuard(dropped.clone());
                        let started = started.clone();
                        async move {
                            let _guard = guard;
                            started.notify_one();
                            futures::future::pending::<()>().await;
                            Ok::<_, ToolError>(())
                        }
                    })
                    .build(),
            )
            .unwrap();
    }
    let token = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation(token.clone());
    let mut stream = registry.invoke("slow", json!({}), ctx);
    let next = tokio::spawn(async move {
        let first = stream.next().await;
        let rest: Vec<_> = stream.collect().await;
        (first, rest)
    });
    started.notified().await;
    assert!(!dropped.load(Ordering::SeqCst));
    token.cancel();
    let (first, rest) = next.await.unwrap();
    assert_eq!(first, Some(ToolEvent::error(ToolError::aborted())));
    assert_eq!(ToolError::aborted().message, "Tool execution aborted");
    assert!(rest.is_empty());
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future must be dropped"
    );
}

#[tokio::test]
async fn cancellation_drops_a_streaming_handler() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = ToolRegistry::new();
    {
        let dropped = dropped.clone();
        registry
            .register(
                ToolDefinition::builder("ticker")
                    .description("Ticks forever.")
                    .stream_handler(move |_: Empty, _| {
                        let guard = DropGuard(dropped.clone());
                        async move {
                            futures::stream::unfold((0u32, guard), |(n, guard)| async move {
                                tokio::time::sleep(Duration::from_millis(1)).await;
                                Some((
                                    ToolEvent::<()>::progress(f64::from(n % 100), None),
                                    (n + 1, guard),
                                ))
                            })
                        }
                    })
                    .build(),
            )
            .unwrap();
    }
    let token = CancellationToken::new();
    let mut stream = registry.invoke(
        "ticker",
        json!({}),
        ToolContext::new().with_cancellation(token.clone()),
    );
    for _ in 0..3 {
        assert_eq!(stream.next().await.unwrap().kind(), "progress");
    }
    token.cancel();
    let mut last = None;
    while let Some(event) = stream.next().await {
        last = Some(event);
    }
    assert_eq!(last, Some(ToolEvent::error(ToolError::aborted())));
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn an_already_cancelled_call_is_aborted_without_running() {
    let ran = Arc::new(AtomicBool::new(false));
    let registry = ToolRegistry::new();
    {
        let ran = ran.clone();
        registry
            .register(
                ToolDefinition::builder("noop")
                    .description("d")
                    .handler(move |_: Empty, _| {
                        let ran = ran.clone();
                        async move {
                            ran.store(true, Ordering::SeqCst);
                            Ok::<_, ToolError>(())
                        }
                    })
                    .build(),
            )
            .unwrap();
    }
    let token = CancellationToken::new();
    token.cancel();
    let got: Vec<_> = registry
        .invoke(
            "noop",
            json!({}),
            ToolContext::new().with_cancellation(token),
        )
        .collect()
        .await;
    assert_eq!(got, [ToolEvent::error(ToolError::aborted())]);
    assert!(!ran.load(Ordering::SeqCst));
}

#[tokio::test]
async fn dropping_the_stream_drops_the_handler() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = ToolRegistry::new();
    {
        let dropped = dropped.clone();
        registry
            .register(
                ToolDefinition::builder("hang")
                    .description("d")
                    .handler(move |_: Empty, _| {
                        let guard = DropGuard(dropped.clone());
                        async move {
                            let _guard = guard;
                            futures::future::pending::<()>().await;
                            Ok::<_, ToolError>(())
                        }
                    })
                    .build(),
            )
            .unwrap();
    }
    let mut stream = registry.invoke("hang", json!({}), ToolContext::new());
    let polled = tokio::time::timeout(Duration::from_millis(20), stream.next()).await;
    assert!(polled.is_err(), "the handler never finishes");
    drop(stream);
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_panicking_handler_is_internal_and_the_registry_keeps_serving() {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("boom")
                .description("Panics.")
                .handler(|_: Empty, _| async {
                    if true {
                        panic!("secret panic text");
                    }
                    Ok::<_, ToolError>(())
                })
                .build(),
            ToolDefinition::builder("boom.early")
                .description("Panics before returning a future.")
                .handler(
                    |_: Empty, _| -> futures::future::Ready<Result<(), ToolError>> {
                        panic!("early")
                    },
                )
                .build(),
            ToolDefinition::builder("boom.stream")
                .description("Panics mid-stream.")
                .stream_handler(|_: Empty, _| async {
                    futures::stream::iter(0..3).map(|i| {
                        if i == 1 {
                            panic!("mid-stream");
                        }
                        ToolEvent::<()>::progress(f64::from(i), None)
                    })
                })
                .build(),
            ToolDefinition::builder("fine")
                .description("Works.")
                .handler(|_: Empty, _| async { Ok::<_, ToolError>("still here") })
                .build(),
        ])
        .unwrap();

    let err = outcome(&registry, "boom", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Internal);
    assert!(
        !err.message.contains("secret panic text"),
        "panic payloads are not shown to callers"
    );
    assert_eq!(
        outcome(&registry, "boom.early", json!({}))
            .await
            .unwrap_err()
            .code,
        ErrorCode::Internal
    );
    let streamed = events(&registry, "boom.stream", json!({})).await;
    assert_eq!(streamed.len(), 2);
    assert_eq!(streamed[0].kind(), "progress");
    assert_eq!(streamed[1].as_error().unwrap().code, ErrorCode::Internal);

    let ok = outcome(&registry, "fine", json!({})).await.unwrap();
    assert_eq!(ok.data, "still here");
}

fn hop(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Calls the next tool, if any.")
        .raw_handler(|input, ctx: ToolContext| async move {
            match input.get("next").and_then(|n| n.as_str()) {
                Some(next) => collect_tool_outcome(ctx.invoke(next, json!({})), |_| {}).await,
                None => Ok(ToolOutput::new(json!(ctx
                    .call_stack()
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()))),
            }
        })
        .build()
}

#[tokio::test]
async fn composition_reenters_dispatch_with_a_longer_call_stack() {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("outer")
                .description("d")
                .handler(|_: Empty, ctx: ToolContext| async move {
                    collect_tool_outcome(ctx.invoke("inner", json!({})), |_| {})
                        .await
                        .map(|o| o.data)
                })
                .build(),
        )
        .unwrap();
    registry.register(hop("inner")).unwrap();
    let out = outcome(&registry, "outer", json!({})).await.unwrap();
    assert_eq!(out.data, json!(["outer", "inner"]));
}

#[tokio::test]
async fn cycles_are_refused_with_the_chain() {
    let registry = ToolRegistry::new();
    let a = ToolDefinition::builder("a")
        .description("d")
        .raw_handler(|_, ctx: ToolContext| async move {
            collect_tool_outcome(ctx.invoke("b", json!({})), |_| {}).await
        })
        .build();
    let b = ToolDefinition::builder("b")
        .description("d")
        .raw_handler(|_, ctx: ToolContext| async move {
            collect_tool_outcome(ctx.invoke("a", json!({})), |_| {}).await
        })
        .build();
    registry.register_all([a, b]).unwrap();
    let err = outcome(&registry, "a", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Cycle);
    assert_eq!(err.message, "Cycle detected: a -> b -> a");

    registry.register(hop("self")).unwrap();
    let err = outcome(&registry, "self", json!({"next": "self"}))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Cycle detected: self -> self");
}

#[tokio::test]
async fn a_child_gets_scope_cwd_env_host_notify_but_not_the_duplex_input() {
    #[derive(Debug, PartialEq)]
    struct Host(&'static str);
    let seen: Arc<Mutex<Option<serde_json::Value>>> = Arc::default();
    let registry = ToolRegistry::new();
    let parent = ToolDefinition::builder("parent")
        .description("d")
        .capabilities(Capabilities {
            duplex: true,
            ..Default::default()
        })
        .raw_handler(|_, ctx: ToolContext| async move {
            assert!(ctx.has_input(), "the root call has its duplex input");
            ctx.scope()
                .unwrap()
                .set(ScopeTier::Session, "who", json!("parent"));
            collect_tool_outcome(ctx.invoke("child", json!({})), |_| {}).await
        })
        .build();
    let child = {
        let seen = seen.clone();
        ToolDefinition::builder("child")
            .description("d")
            .raw_handler(move |_, ctx: ToolContext| {
                let seen = seen.clone();
                async move {
                    ctx.progress(10.0, None);
                    let report = json!({
                        "has_input": ctx.has_input(),
                        "input_taken": ctx.take_input().is_some(),
                        "scope": ctx.scope().and_then(|s| s.get("who")),
                        "cwd": ctx.cwd(),
                        "env": ctx.env().get("GONK_TEST"),
                        "host": ctx.host::<Host>().map(|h| h.0),
                        "stack": ctx.call_stack().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                    });
                    *seen.lock().unwrap() = Some(report.clone());
                    Ok(ToolOutput::new(report))
                }
            })
            .build()
    };
    registry.register_all([parent, child]).unwrap();

    let notified = Arc::new(Mutex::new(Vec::new()));
    let scope: Arc<dyn ScopeStore> = Arc::new(InMemoryScopeStore::new());
    let ctx = ToolContext::new()
        .with_scope(scope.clone())
        .with_cwd("/tmp/gonk")
        .with_env([("GONK_TEST".to_owned(), "yes".to_owned())].into())
        .with_host(Host("the host"))
        .with_input(Box::pin(futures::stream::empty()))
        .with_notify({
            let notified = notified.clone();
            move |event: &ToolEvent| notified.lock().unwrap().push(event.clone())
        });
    let out = collect_tool_outcome(registry.invoke("parent", json!({}), ctx), |_| {})
        .await
        .unwrap();
    assert_eq!(
        out.data,
        json!({
            "has_input": false,
            "input_taken": false,
            "scope": "parent",
            "cwd": "/tmp/gonk",
            "env": "yes",
            "host": "the host",
            "stack": ["parent", "child"],
        })
    );
    assert_eq!(seen.lock().unwrap().as_ref(), Some(&out.data));
    assert_eq!(*notified.lock().unwrap(), [ToolEvent::progress(10.0, None)]);
    assert_eq!(scope.get("who"), Some(json!("parent")));
}

#[tokio::test]
async fn output_validation_off_lax_strict() {
    #[derive(Serialize, JsonSchema)]
    struct Count {
        n: u32,
    }
    let make = |name: &str, mode: ValidateOutput| {
        ToolDefinition::builder(name)
            .description("Claims to return a Count, returns garbage.")
            .output_schema_for::<Count>()
            .validate_output(mode)
            .raw_handler(|_, _| async { Ok(ToolOutput::new(json!({"n": "many"}))) })
            .build()
    };
    let registry = ToolRegistry::new();
    registry
        .register_all([
            make("off", ValidateOutput::Off),
            make("lax", ValidateOutput::Lax),
            make("strict", ValidateOutput::Strict),
            ToolDefinition::builder("good")
                .description("d")
                .output_schema_for::<Count>()
                .validate_output(ValidateOutput::Strict)
                .handler(|_: Empty, _| async { Ok::<_, ToolError>(Count { n: 3 }) })
                .build(),
        ])
        .unwrap();
    assert_eq!(
        outcome(&registry, "off", json!({})).await.unwrap().data,
        json!({"n": "many"})
    );
    assert_eq!(
        outcome(&registry, "lax", json!({})).await.unwrap().data,
        json!({"n": "many"})
    );
    let err = outcome(&registry, "strict", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::OutputInvalid);
    assert_eq!(
        err.issues()
            .iter()
            .map(|i| i.path.as_str())
            .collect::<Vec<_>>(),
        ["/n"]
    );
    assert_eq!(
        outcome(&registry, "good", json!({})).await.unwrap().data,
        json!({"n": 3})
    );
}

#[tokio::test]
async fn typed_call_goes_through_dispatch() {
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct AddInput {
        a: i64,
        b: i64,
    }
    struct Add;
    impl Tool for Add {
        const NAME: &'static str = "math.add";
        type Input = AddInput;
        type Output = i64;
    }
    impl StaticTool for Add {
        fn definition() -> ToolDefinition {
            ToolDefinition::builder(Self::NAME)
                .description("Adds.")
                .handler(|i: AddInput, _| async move { Ok::<_, ToolError>(i.a + i.b) })
                .build()
        }
    }
    let registry = ToolRegistry::new();
    registry.register(Add::definition()).unwrap();
    registry
        .register(
            ToolDefinition::builder("math.double")
                .description("Doubles via add.")
                .handler(|i: AddInput, ctx: ToolContext| async move {
                    ctx.call::<Add>(AddInput { a: i.a, b: i.a }).await
                })
                .build(),
        )
        .unwrap();
    let out = outcome(&registry, "math.double", json!({"a": 21, "b": 0}))
        .await
        .unwrap();
    assert_eq!(out.data, 42);

    // Outside dispatch there is no registry to call into: an error, not a panic.
    let err = ToolContext::new()
        .call::<Add>(AddInput { a: 1, b: 2 })
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Internal);
}

#[tokio::test]
async fn the_logger_names_the_tool_and_its_call_stack() {
    use gonk_tools::context::{LogRecord, LogSink};
    type Line = (String, String, Vec<String>);
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<Line>>>);
    impl LogSink for Capture {
        fn log(&self, record: &LogRecord<'_>) {
            self.0.lock().unwrap().push((
                record.message.to_owned(),
                record.tool.unwrap_or_default().to_owned(),
                record.call_stack.iter().map(|s| s.to_string()).collect(),
            ));
        }
    }
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("p")
                .description("d")
                .raw_handler(|_, ctx: ToolContext| async move {
                    ctx.log().info("in parent");
                    collect_tool_outcome(ctx.invoke("c", json!({})), |_| {}).await
                })
                .build(),
            ToolDefinition::builder("c")
                .description("d")
                .raw_handler(|_, ctx: ToolContext| async move {
                    ctx.log().warn("in child");
                    Ok(ToolOutput::new(json!(null)))
                })
                .build(),
        ])
        .unwrap();
    let capture = Capture::default();
    let ctx = ToolContext::new().with_logger(capture.clone());
    collect_tool_outcome(registry.invoke("p", json!({}), ctx), |_| {})
        .await
        .unwrap();
    assert_eq!(
        *capture.0.lock().unwrap(),
        [
            ("in parent".to_owned(), "p".to_owned(), vec!["p".to_owned()]),
            (
                "in child".to_owned(),
                "c".to_owned(),
                vec!["p".to_owned(), "c".to_owned()]
            ),
        ]
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
