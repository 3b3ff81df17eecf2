//! Handler forms: returns normalized to a result or an error, streamed
//! events passed through in order, a panic answered `INTERNAL` while the
//! registry keeps serving, output validation (off, lax, strict), and typed
//! calls through dispatch.

use futures::StreamExt;
use gonk_tools::definition::ValidateOutput;
use gonk_tools::prelude::*;

use super::{events, outcome, Empty};

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
