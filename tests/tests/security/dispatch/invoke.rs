//! Invoke authorization: what the policy is asked (metadata, input, call
//! stack) and what a deny answers; a streaming tool is authorized before
//! it streams.

use std::sync::Arc;

use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

use super::{authz, deny_invoke};

#[tokio::test]
async fn the_invoke_request_carries_metadata_input_and_call_stack() {
    let policy = TestPolicy::allow_all();
    call(
        options().approval_provider(ApproveAll),
        &policy,
        "notes.read",
        json!({"q": "x"}),
    )
    .await;
    let invoke = &policy.seen()[1];
    assert_eq!(invoke.action, "tool.invoke");
    assert_eq!(invoke.resource.target.as_deref(), Some("notes.read"));
    let meta = Value::Object((*invoke.resource.metadata).clone());
    assert_eq!(
        keys(&meta),
        ["approvalTier", "authorization", "capabilities"]
    );
    assert_eq!(meta["approvalTier"], "read");
    assert_eq!(meta["authorization"], json!({"requiredRole": "reader"}));
    assert_eq!(invoke.input, Some(json!({"q": "x"})));
    assert_eq!(invoke.call_stack, ["notes.read"]);
    assert!(invoke.related.is_empty());
}

/// An invoke the policy refuses: `AUTHORIZATION_DENIED` with its message,
/// and the deny receipt with the policy's reason and rule.
struct InvokeDeny {
    name: &'static str,
    tool: &'static str,
    policy: Arc<TestPolicy>,
    message: &'static str,
    reason: Option<&'static str>,
    policy_id: Option<&'static str>,
}

#[tokio::test]
async fn an_invoke_deny_is_authorization_denied() {
    let cases = [
        InvokeDeny {
            name: "with the policy's reason",
            tool: "notes.write",
            policy: deny_invoke(Some("Writers only")),
            message: "Writers only",
            reason: Some("Writers only"),
            policy_id: Some("writers-only"),
        },
        InvokeDeny {
            name: "without a reason",
            tool: "notes.read",
            policy: deny_invoke(None),
            message: "Authorization denied",
            reason: None,
            policy_id: None,
        },
        InvokeDeny {
            name: "a failing policy: a generic deny",
            tool: "notes.read",
            policy: TestPolicy::new(|req| match req.action {
                AuthorizationAction::Invoke => Err(PolicyError::new("opa unreachable at 10.0.0.9")),
                _ => Ok(AuthorizationDecision::allow()),
            }),
            message: "Authorization policy failed",
            reason: Some("Authorization policy failed"),
            policy_id: None,
        },
    ];
    for case in cases {
        let provider = TestProvider::approve_all();
        let ran = call(
            options().approval_provider(provider.clone()),
            &case.policy,
            case.tool,
            json!({"q": "x"}),
        )
        .await;
        assert_eq!(
            ran.wire(),
            refused("AUTHORIZATION_DENIED", case.message),
            "{}",
            case.name
        );
        assert_eq!(ran.f.handler.get(), 0, "{}", case.name);
        assert_eq!(
            provider.calls(),
            0,
            "{}: no approval after a deny",
            case.name
        );
        let receipts = ran.receipts();
        assert_eq!(
            receipt_summary(&receipts),
            [
                s("authorization", "tool.discover", "allow"),
                s("authorization", "tool.invoke", "deny")
            ],
            "{}",
            case.name
        );
        let receipt = authz(&receipts[1]);
        assert_eq!(
            (receipt.reason.as_deref(), receipt.policy_id.as_deref()),
            (case.reason, case.policy_id),
            "{}",
            case.name
        );
        assert_eq!(
            ran.metrics(),
            [metric(
                case.tool,
                MetricOutcome::Error,
                Some("AUTHORIZATION_DENIED")
            )],
            "{}",
            case.name
        );
    }
}

#[tokio::test]
async fn streaming_tools_are_gated_before_they_stream() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_provider(ApproveAll),
    );
    f.registry
        .register(
            ToolDefinition::builder("stream.count")
                .description("Streams progress then a result.")
                .approval(ApprovalTier::Write)
                .stream_handler(|_: Value, _ctx| async move {
                    futures::stream::iter([
                        ToolEvent::progress(50.0, Some("half".to_owned())),
                        ToolEvent::result(2),
                    ])
                })
                .build(),
        )
        .unwrap();
    let allow = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "stream.count",
        json!({}),
        auth(alice(), &allow),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "progress", "percent": 50.0, "message": "half"}, {"type": "result", "data": 2}])
    );
    let deny = deny_invoke(Some("no streams"));
    let events = run(&f.registry, "stream.count", json!({}), auth(alice(), &deny)).await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTHORIZATION_DENIED", "message": "no streams"}])
    );
}
