//! The approval gate, last: skipped for a read tool without a provider and
//! in bypass mode; `APPROVAL_REQUIRED` and `APPROVAL_DENIED` with redacted
//! details; an approval recorded before the handler runs.

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;

use super::appr;

#[tokio::test]
async fn a_read_tool_without_a_provider_skips_the_approval_gate() {
    let policy = TestPolicy::allow_all();
    let ran = call(options(), &policy, "notes.read", json!({"q": "x"})).await;
    assert_eq!(
        ran.wire(),
        json!([{"type": "result", "data": {"hits": ["x"]}}])
    );
    assert_eq!(
        ran.summary(),
        [
            s("authorization", "tool.discover", "allow"),
            s("authorization", "tool.invoke", "allow")
        ]
    );
}

/// An approval gate that denies: `APPROVAL_DENIED` with the message, and
/// an approval receipt (denied, no grant) recording it as the reason.
struct ApprovalDenial {
    name: &'static str,
    tool: &'static str,
    provider: Option<Arc<TestProvider>>,
    message: &'static str,
    tier: ApprovalTier,
}

#[tokio::test]
async fn an_approval_gate_that_denies_is_approval_denied() {
    let cases = [
        ApprovalDenial {
            name: "write without a provider",
            tool: "notes.write",
            provider: None,
            message: "Approval provider not configured",
            tier: ApprovalTier::Write,
        },
        ApprovalDenial {
            name: "exec without a provider",
            tool: "notes.exec",
            provider: None,
            message: "Approval provider not configured",
            tier: ApprovalTier::Exec,
        },
        ApprovalDenial {
            name: "a configured provider is consulted for read tools",
            tool: "notes.read",
            provider: Some(TestProvider::new(|_| {
                Ok(ApprovalDecision::denied("Reads are paused"))
            })),
            message: "Reads are paused",
            tier: ApprovalTier::Read,
        },
        ApprovalDenial {
            name: "a failing provider: a generic message",
            tool: "notes.write",
            provider: Some(TestProvider::new(|_| {
                Err(SecurityError::new("consent service 503"))
            })),
            message: "Approval provider failed",
            tier: ApprovalTier::Write,
        },
    ];
    for case in cases {
        let mut options = options();
        if let Some(provider) = &case.provider {
            options = options.approval_provider(provider.clone());
        }
        let policy = TestPolicy::allow_all();
        let ran = call(options, &policy, case.tool, json!({"q": "x"})).await;
        assert_eq!(
            ran.wire(),
            refused("APPROVAL_DENIED", case.message),
            "{}",
            case.name
        );
        assert_eq!(ran.f.handler.get(), 0, "{}", case.name);
        let receipts = ran.receipts();
        assert_eq!(
            receipt_summary(&receipts)[2],
            s("approval", "-", "denied"),
            "{}",
            case.name
        );
        let r = appr(&receipts[2]);
        assert_eq!(r.reason.as_deref(), Some(case.message), "{}", case.name);
        assert_eq!(r.approval_tier, case.tier, "{}", case.name);
        assert_eq!(
            (r.grant_id.clone(), r.grant_scope),
            (None, None),
            "{}",
            case.name
        );
        if let Some(provider) = &case.provider {
            assert_eq!(provider.calls(), 1, "{}", case.name);
            assert_eq!(provider.seen()[0].approval.tier, case.tier, "{}", case.name);
        }
    }
}

#[tokio::test]
async fn bypass_mode_skips_the_approval_gate_even_with_a_provider() {
    let provider = TestProvider::new(|_| Ok(ApprovalDecision::denied("never")));
    let policy = TestPolicy::allow_all();
    let ran = call(
        options()
            .approval_mode(ApprovalMode::Bypass)
            .approval_provider(provider.clone()),
        &policy,
        "notes.exec",
        json!({"q": "x"}),
    )
    .await;
    assert_eq!(
        ran.wire(),
        json!([{"type": "result", "data": {"ran": "x"}}])
    );
    assert_eq!(provider.calls(), 0);
    assert_eq!(ran.receipts().len(), 2, "authorization receipts only");
}

#[tokio::test]
async fn approval_required_is_a_completed_non_executing_error_with_redacted_details() {
    let provider = TestProvider::new(|_| {
        Ok(ApprovalDecision::Required {
            approval_request_id: Some("apr-77".into()),
            reason: Some("Needs a human".into()),
            expires_at: Some(t0() + Duration::from_secs(600)),
        })
    });
    let policy = TestPolicy::allow_all();
    let ran = call(
        options()
            .approval_provider(provider.clone())
            .resource_resolver(TestResolver::notes()),
        &policy,
        "notes.edit",
        json!({"noteId": "n1", "text": "draft"}),
    )
    .await;
    // The details' exact shape is pinned in security/wire.rs.
    let error = ran.error();
    assert_eq!(error.code, ErrorCode::ApprovalRequired);
    let details = error.details.expect("details");
    assert_eq!(details["approvalRequestId"], "apr-77");
    assert_eq!(
        details["relatedResources"],
        json!([{"kind": "note", "target": "n1", "tenantId": "acme", "workspaceId": "ws-1"}]),
        "redacted: no scope, no metadata"
    );
    assert_eq!(ran.f.handler.get(), 0);
    assert_eq!(
        ran.metrics(),
        [metric(
            "notes.edit",
            MetricOutcome::Error,
            Some("APPROVAL_REQUIRED")
        )]
    );
    let receipts = ran.receipts();
    assert_eq!(
        receipt_summary(&receipts)[2],
        s("approval", "-", "required")
    );
    let r = appr(&receipts[2]);
    assert_eq!(r.approval_request_id.as_deref(), Some("apr-77"));
    assert_eq!(r.approval_tier, ApprovalTier::Write);
    assert_eq!(r.reason.as_deref(), Some("Needs a human"));
    assert_eq!((r.grant_id.clone(), r.grant_scope), (None, None));
}

#[tokio::test]
async fn an_approval_is_recorded_and_the_handler_runs() {
    for (decision, grant_id, grant_scope) in [
        (
            ApprovalDecision::approved_by("grant-5", GrantScope::Persistent),
            Some(json!("grant-5")),
            Some(json!("persistent")),
        ),
        // Without a grant: no grant fields.
        (ApprovalDecision::approved(), None, None),
    ] {
        let provider = TestProvider::new(move |_| Ok(decision.clone()));
        let policy = TestPolicy::allow_all();
        let ran = call(
            options().approval_provider(provider),
            &policy,
            "notes.write",
            json!({"q": "x"}),
        )
        .await;
        assert_eq!(
            ran.wire(),
            json!([{"type": "result", "data": {"written": "x"}}])
        );
        assert_eq!(ran.f.handler.get(), 1);
        let receipt = serde_json::to_value(&ran.receipts()[2]).unwrap();
        assert_eq!(receipt["outcome"], "approved");
        assert_eq!(receipt.get("grantId"), grant_id.as_ref());
        assert_eq!(receipt.get("grantScope"), grant_scope.as_ref());
        assert!(receipt.get("approvalRequestId").is_none());
    }
}

#[tokio::test]
async fn the_approval_request_carries_keys_request_id_resources_and_input() {
    let provider = TestProvider::approve_all();
    let policy = TestPolicy::allow_all();
    let p = alice_via_agent();
    call_as(
        options()
            .approval_provider(provider.clone())
            .resource_resolver(TestResolver::notes()),
        p.clone(),
        &policy,
        "notes.edit",
        json!({"noteId": "n1", "text": "t"}),
    )
    .await;
    let seen = &provider.seen()[0];
    assert_eq!(seen.principal_id, "user-1");
    assert_eq!(seen.request_id, "req-1");
    assert_eq!(seen.security_context_key, security_context_key(&p));
    assert_eq!(seen.persistent_grant_key, persistent_grant_key(&p));
    assert_eq!(seen.tool, "notes.edit");
    assert_eq!(seen.resources.len(), 2);
    assert_eq!(seen.resources[1].target.as_deref(), Some("n1"));
    assert_eq!(seen.input, json!({"noteId": "n1", "text": "t"}));
    assert_eq!(seen.call_stack, ["notes.edit"]);
}
