//! Receipts: a successful call writes three with one base, optional
//! fields absent when unset, a fresh request id per root call, and every
//! receipt stamped with its own clock reading.

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

use super::authz;

#[tokio::test]
async fn a_successful_call_writes_three_receipts_with_one_base() {
    let clock = TestClock::new();
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(
        options_with_clock(&clock)
            .audit_sink(audit.clone())
            .approval_provider(ApproveAll),
    );
    let policy = TestPolicy::new(|_| {
        Ok(AuthorizationDecision::allow()
            .with_policy_id("p-1")
            .with_reason("ok"))
    });
    let p = alice_via_agent();
    let events = run(
        &f.registry,
        "notes.write",
        json!({"q": "secret-ish"}),
        auth(p.clone(), &policy),
    )
    .await;
    assert_eq!(events[0].kind(), "result");
    let receipts = audit.snapshot();
    assert_eq!(
        receipt_summary(&receipts),
        [
            s("authorization", "tool.discover", "allow"),
            s("authorization", "tool.invoke", "allow"),
            s("approval", "-", "approved")
        ]
    );
    let expected_base = ReceiptBase {
        principal_id: "user-1".into(),
        security_context_key: security_context_key(&p).into(),
        subject_issuer: "https://idp.example".into(),
        subject_id: "alice".into(),
        actor_issuer: Some("https://agents.example".into()),
        actor_subject: Some("agent-7".into()),
        actor_id: Some("act-1".into()),
        actor_session_id: Some("sess-9".into()),
        tenant_id: Some("acme".into()),
        workspace_id: Some("ws-1".into()),
    };
    for r in &receipts {
        assert_eq!(r.request_id(), "req-1");
        assert_eq!(r.base(), &expected_base);
        assert_eq!(r.timestamp(), t0());
        assert_eq!(r.tool(), "notes.write");
    }
    let invoke = authz(&receipts[1]);
    assert_eq!(invoke.policy_id.as_deref(), Some("p-1"));
    assert_eq!(invoke.reason.as_deref(), Some("ok"));
    let json = serde_json::to_string(&receipts).unwrap();
    assert!(!json.contains("secret-ish"), "no input in receipts");
    assert!(
        !json.contains("requiredRole") && !json.contains("capabilities"),
        "no metadata"
    );
}

#[tokio::test]
async fn a_receipt_without_delegation_or_tenant_has_no_such_fields() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = TestPolicy::allow_all();
    let plain = AuthenticatedPrincipal::new(
        "svc-1",
        PrincipalKind::Service,
        PrincipalIdentity::new("internal", "indexer", AuthMethod::ServiceToken),
    );
    run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(plain, &policy),
    )
    .await;
    let v = serde_json::to_value(&audit.snapshot()[0]).unwrap();
    assert_eq!(
        keys(&v),
        [
            "action",
            "kind",
            "outcome",
            "principalId",
            "requestId",
            "resource",
            "securityContextKey",
            "subjectId",
            "subjectIssuer",
            "timestamp",
            "toolName"
        ]
    );
}

#[tokio::test]
async fn each_root_call_gets_a_fresh_request_id_visible_to_the_handler() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    f.registry
        .register(
            ToolDefinition::builder("whoami")
                .description("Reports the auth the handler sees.")
                .approval(ApprovalTier::Read)
                .handler(|_: Value, ctx: ToolContext| async move {
                    Ok::<_, ToolError>(json!({
                        "requestId": ctx.request_id(),
                        "principal": ctx.auth().map(|a| a.principal().id.clone()),
                        "key": ctx.security_context_key(),
                    }))
                })
                .build(),
        )
        .unwrap();
    let policy = TestPolicy::allow_all();
    let first = run(&f.registry, "whoami", json!({}), auth(alice(), &policy)).await;
    let second = run(&f.registry, "whoami", json!({}), auth(alice(), &policy)).await;
    let unauth = run(&f.registry, "whoami", json!({}), ToolContext::new()).await;
    let data = |e: &[ToolEvent]| match &e[0] {
        ToolEvent::Result { data, .. } => data.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        data(&first),
        json!({"requestId": "req-1", "principal": "user-1", "key": security_context_key(&alice())})
    );
    assert_eq!(data(&second)["requestId"], "req-2");
    assert_eq!(
        data(&unauth),
        json!({"requestId": null, "principal": null, "key": null})
    );
    let ids: Vec<String> = audit
        .snapshot()
        .iter()
        .map(|r| r.request_id().to_owned())
        .collect();
    assert_eq!(ids, ["req-1", "req-1", "req-2", "req-2"]);
}

#[tokio::test]
async fn every_receipt_is_stamped_when_its_decision_is_made() {
    // The policy moves the clock by a minute on each question; at invoke it
    // also has to wait (yields once) before it answers. Each receipt reads
    // the clock itself, whether its gate waited or not.
    struct SlowInvoke(TestClock);
    impl AuthorizationPolicy for SlowInvoke {
        fn authorize<'a>(
            &'a self,
            request: &'a AuthorizationRequest<'a>,
        ) -> futures::future::BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
            self.0.advance(Duration::from_secs(60));
            let waits = request.action == AuthorizationAction::Invoke;
            Box::pin(async move {
                if waits {
                    tokio::task::yield_now().await;
                }
                Ok(AuthorizationDecision::allow())
            })
        }
    }
    let clock = TestClock::new();
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options_with_clock(&clock).audit_sink(audit.clone()));
    let ctx = ToolContext::new().with_auth(AuthContext::new(alice(), SlowInvoke(clock.clone())));
    let events = run(&f.registry, "notes.read", json!({"q": "x"}), ctx).await;
    assert_eq!(events[0].kind(), "result");
    let stamps: Vec<_> = audit.snapshot().iter().map(|r| r.timestamp()).collect();
    // Discover decided at once, a minute on (it shared the admission
    // reading, t0, before); invoke waited, two minutes on.
    assert_eq!(
        stamps,
        [
            t0() + Duration::from_secs(60),
            t0() + Duration::from_secs(120)
        ]
    );
}
