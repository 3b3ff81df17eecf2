//! Cancellation during the gates: a call cancelled while a gate hangs ends
//! `ABORTED` without running the handler.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;

#[tokio::test]
async fn cancellation_interrupts_a_hanging_gate() {
    struct Hanging(AtomicUsize);
    impl AuthorizationPolicy for Hanging {
        fn authorize<'a>(
            &'a self,
            _request: &'a AuthorizationRequest<'a>,
        ) -> futures::future::BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(futures::future::pending())
        }
    }
    let f = fixture(options());
    let policy = Arc::new(Hanging(AtomicUsize::new(0)));
    let token = tokio_util::sync::CancellationToken::new();
    let ctx = ToolContext::new()
        .with_cancellation(token.clone())
        .with_auth(AuthContext::new(alice(), policy.clone()));
    let call = tokio::spawn({
        let registry = f.registry.clone();
        async move { run(&registry, "notes.read", json!({"q": "x"}), ctx).await }
    });
    while policy.0.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }
    token.cancel();
    let events = call.await.unwrap();
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "ABORTED", "message": "Tool execution aborted"}])
    );
    assert_eq!(
        metric_codes(&f.metrics.snapshot()),
        [metric(
            "notes.read",
            MetricOutcome::Aborted,
            Some("ABORTED")
        )]
    );
    assert_eq!(f.handler.get(), 0);
}
