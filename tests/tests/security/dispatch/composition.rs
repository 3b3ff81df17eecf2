//! Composition: children inherit the principal and request id and are
//! authorized again; what a child is refused reaches the parent; a handler
//! cannot swap the captured principal.

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

use super::register_composition;

#[tokio::test]
async fn children_inherit_principal_and_request_id_and_are_reauthorized() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let provider = TestProvider::approve_all();
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_provider(provider.clone()),
    );
    let (parent_runs, child_runs) = register_composition(&f.registry, ApprovalTier::Write);
    let policy = TestPolicy::allow_all();
    let events = run(&f.registry, "parent", json!({}), auth(alice(), &policy)).await;
    assert_eq!(
        wire(&events),
        json!([{"type": "result", "data": {"requestId": "req-1", "principal": "user-1", "stack": ["parent", "child"]}}])
    );
    assert_eq!((parent_runs.get(), child_runs.get()), (1, 1));
    // The child skips discover; it is authorized at invoke with the longer stack.
    let seen = policy.seen();
    let actions: Vec<(String, Option<String>)> = seen
        .iter()
        .map(|r| {
            (
                r.action.clone(),
                r.resource.target.as_deref().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("tool.discover".into(), Some("parent".into())),
            ("tool.invoke".into(), Some("parent".into())),
            ("tool.invoke".into(), Some("child".into())),
        ]
    );
    assert_eq!(seen[2].call_stack, ["parent", "child"]);
    assert!(seen.iter().all(|r| r.principal_id == "user-1"));
    assert_eq!(provider.calls(), 2);
    let receipts = audit.snapshot();
    let tools: Vec<(&str, (String, String, String))> = receipts
        .iter()
        .map(|r| r.tool())
        .zip(receipt_summary(&receipts))
        .collect();
    assert_eq!(
        tools,
        [
            ("parent", s("authorization", "tool.discover", "allow")),
            ("parent", s("authorization", "tool.invoke", "allow")),
            ("parent", s("approval", "-", "approved")),
            ("child", s("authorization", "tool.invoke", "allow")),
            ("child", s("approval", "-", "approved")),
        ]
    );
    assert!(receipts.iter().all(|r| r.request_id() == "req-1"));
}

#[tokio::test]
async fn a_denied_child_reaches_the_parent_as_authorization_denied() {
    let f = fixture(options().approval_provider(ApproveAll));
    let (parent_runs, child_runs) = register_composition(&f.registry, ApprovalTier::Read);
    let policy = TestPolicy::new(|req| {
        Ok(match (&req.action, req.resource.target.as_deref()) {
            (AuthorizationAction::Invoke, Some("child")) => {
                AuthorizationDecision::deny("Child is off limits")
            }
            _ => AuthorizationDecision::allow(),
        })
    });
    let events = run(&f.registry, "parent", json!({}), auth(alice(), &policy)).await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTHORIZATION_DENIED", "message": "Child is off limits"}])
    );
    assert_eq!((parent_runs.get(), child_runs.get()), (1, 0));
    assert_eq!(
        metric_codes(&f.metrics.snapshot()),
        [
            metric("child", MetricOutcome::Error, Some("AUTHORIZATION_DENIED")),
            metric("parent", MetricOutcome::Error, Some("AUTHORIZATION_DENIED")),
        ]
    );
}

#[tokio::test]
async fn a_child_needing_approval_reaches_the_parent_as_approval_required() {
    let provider = TestProvider::new(|req| {
        Ok(if req.tool == "child" {
            ApprovalDecision::required("apr-child")
        } else {
            ApprovalDecision::approved()
        })
    });
    let f = fixture(options().approval_provider(provider));
    let (_, child_runs) = register_composition(&f.registry, ApprovalTier::Exec);
    let policy = TestPolicy::allow_all();
    let events = run(&f.registry, "parent", json!({}), auth(alice(), &policy)).await;
    let error = error_of(&events);
    assert_eq!(error.code, ErrorCode::ApprovalRequired);
    let details = error.details.unwrap();
    assert_eq!(details["toolName"], "child");
    assert_eq!(details["requestId"], "req-1");
    assert_eq!(details["approvalTier"], "exec");
    assert_eq!(child_runs.get(), 0);
}

#[tokio::test]
async fn a_child_after_the_principal_expired_is_denied_as_invalid() {
    let clock = TestClock::new();
    let f = fixture(options_with_clock(&clock).approval_provider(ApproveAll));
    let (_, child_runs) = register_composition(&f.registry, ApprovalTier::Read);
    // The parent's policy check moves the clock past the expiry.
    let moving = clock.clone();
    let policy = TestPolicy::new(move |req| {
        if req.action == AuthorizationAction::Invoke
            && req.resource.target.as_deref() == Some("parent")
        {
            moving.advance(Duration::from_secs(120));
        }
        Ok(AuthorizationDecision::allow())
    });
    let p = alice().with_expires_at(t0() + Duration::from_secs(60));
    let events = run(&f.registry, "parent", json!({}), auth(p, &policy)).await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTHORIZATION_DENIED", "message": "Invalid authenticated principal"}])
    );
    assert_eq!(child_runs.get(), 0);
}

#[tokio::test]
async fn a_handler_cannot_swap_the_captured_principal() {
    let f = fixture(options().approval_provider(ApproveAll));
    f.registry
        .register(
            ToolDefinition::builder("report")
                .description("Reports the principal.")
                .approval(ApprovalTier::Read)
                .handler(|_: Value, ctx: ToolContext| async move {
                    Ok::<_, ToolError>(json!(ctx.auth().map(|a| a.principal().id.clone())))
                })
                .build(),
        )
        .unwrap();
    let policy = TestPolicy::allow_all();
    let swapper_policy = policy.clone();
    f.registry
        .register(
            ToolDefinition::builder("swapper")
                .description("Tries to become someone else.")
                .approval(ApprovalTier::Read)
                .handler(move |_: Value, ctx: ToolContext| {
                    let mallory = AuthenticatedPrincipal::new(
                        "mallory",
                        PrincipalKind::Human,
                        PrincipalIdentity::new("evil", "mallory", AuthMethod::Local),
                    );
                    let ctx = ctx.with_auth(AuthContext::new(mallory, swapper_policy.clone()));
                    async move {
                        let out =
                            collect_tool_outcome(ctx.invoke("report", json!({})), |_| {}).await?;
                        Ok::<_, ToolError>(out.data)
                    }
                })
                .build(),
        )
        .unwrap();
    let events = run(&f.registry, "swapper", json!({}), auth(alice(), &policy)).await;
    assert_eq!(wire(&events), json!([{"type": "result", "data": "user-1"}]));
    assert!(policy.seen().iter().all(|r| r.principal_id == "user-1"));
}

#[tokio::test]
async fn an_invalid_principal_below_the_root_is_authorization_denied() {
    let f = fixture(options());
    let (_, child_runs) = register_composition(&f.registry, ApprovalTier::Read);
    let policy = TestPolicy::allow_all();
    let p = policy.clone();
    f.registry
        .register(
            ToolDefinition::builder("trusted.entry")
                .description("An unauthenticated entry that authenticates a child badly.")
                .approval(ApprovalTier::Read)
                .handler(move |_: Value, ctx: ToolContext| {
                    let mut bad = alice();
                    bad.id = String::new();
                    let ctx = ctx.with_auth(AuthContext::new(bad, p.clone()));
                    async move {
                        let out =
                            collect_tool_outcome(ctx.invoke("child", json!({})), |_| {}).await?;
                        Ok::<_, ToolError>(out.data)
                    }
                })
                .build(),
        )
        .unwrap();
    let events = run(&f.registry, "trusted.entry", json!({}), ToolContext::new()).await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTHORIZATION_DENIED", "message": "Invalid authenticated principal"}])
    );
    assert_eq!(child_runs.get(), 0);
    assert_eq!(policy.calls(), 0);
}

#[tokio::test]
async fn a_valid_principal_added_below_the_root_skips_discover() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let (_, child_runs) = register_composition(&f.registry, ApprovalTier::Read);
    let policy = TestPolicy::allow_all();
    let p = policy.clone();
    f.registry
        .register(
            ToolDefinition::builder("trusted.entry")
                .description("Authenticates its child.")
                .approval(ApprovalTier::Read)
                .handler(move |_: Value, ctx: ToolContext| {
                    let ctx = ctx.with_auth(AuthContext::new(alice(), p.clone()));
                    async move {
                        let out =
                            collect_tool_outcome(ctx.invoke("child", json!({})), |_| {}).await?;
                        Ok::<_, ToolError>(out.data)
                    }
                })
                .build(),
        )
        .unwrap();
    let events = run(&f.registry, "trusted.entry", json!({}), ToolContext::new()).await;
    assert_eq!(events[0].kind(), "result", "{events:?}");
    assert_eq!(child_runs.get(), 1);
    assert_eq!(policy.actions(), ["tool.invoke"]);
    assert_eq!(
        receipt_summary(&audit.snapshot()),
        [s("authorization", "tool.invoke", "allow")]
    );
}
