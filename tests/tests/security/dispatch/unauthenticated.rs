//! The unauthenticated path: no gate, no receipt, and a handler can tell
//! it apart from an authenticated call.

use std::sync::Arc;

use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

use super::register_composition;

#[tokio::test]
async fn the_unauthenticated_path_is_ungated_and_unaudited() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let provider = TestProvider::new(|_| Ok(ApprovalDecision::denied("no")));
    let resolver = TestResolver::new(|_| Ok(None));
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .mandatory_audit(true)
            .approval_provider(provider.clone())
            .resource_resolver(resolver.clone()),
    );
    let (parent_runs, child_runs) = register_composition(&f.registry, ApprovalTier::Exec);
    for (tool, input) in [
        ("notes.exec", json!({"q": "x"})),
        ("notes.write", json!({"q": "x"})),
        ("notes.edit", json!({"noteId": "n", "text": "t"})),
        ("notes.badflag", json!({"dangerous": true})),
        ("parent", json!({})),
    ] {
        let events = run(&f.registry, tool, input, ToolContext::new()).await;
        assert_eq!(events.len(), 1, "{tool}: {events:?}");
        assert_eq!(events[0].kind(), "result", "{tool}: {events:?}");
    }
    assert_eq!(f.handler.get(), 4);
    assert_eq!((parent_runs.get(), child_runs.get()), (1, 1));
    assert_eq!(provider.calls(), 0);
    assert_eq!(resolver.calls(), 0);
    assert_eq!(
        f.approval_fn_calls.get(),
        0,
        "approval is not resolved without auth"
    );
    assert!(audit.is_empty());
    assert!(f
        .metrics
        .snapshot()
        .iter()
        .all(|m| m.outcome == MetricOutcome::Ok));
}

#[tokio::test]
async fn the_unauthenticated_and_authenticated_results_are_distinguishable_to_the_handler() {
    let f = fixture(options().approval_provider(ApproveAll));
    f.registry
        .register(
            ToolDefinition::builder("probe")
                .description("Is this call authenticated?")
                .approval(ApprovalTier::Read)
                .handler(|_: Value, ctx: ToolContext| async move {
                    Ok::<_, ToolError>(json!([ctx.is_authenticated(), ctx.request_id().is_some()]))
                })
                .build(),
        )
        .unwrap();
    let policy = TestPolicy::allow_all();
    let authed = run(&f.registry, "probe", json!({}), auth(alice(), &policy)).await;
    let trusted = run(&f.registry, "probe", json!({}), ToolContext::new()).await;
    assert_eq!(
        wire(&authed),
        json!([{"type": "result", "data": [true, true]}])
    );
    assert_eq!(
        wire(&trusted),
        json!([{"type": "result", "data": [false, false]}])
    );
}
