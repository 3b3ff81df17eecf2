//! Cancellation: a cancelled call ends `ABORTED` and its handler (plain or
//! streaming) is dropped; an already cancelled call never runs; dropping
//! the stream drops the handler.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use gonk_tools::prelude::*;
use tokio_util::sync::CancellationToken;

use super::Empty;

/// Sets its flag when dropped: proves a handler's future was dropped.
struct DropGuard(Arc<AtomicBool>);
impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
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
