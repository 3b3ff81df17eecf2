//! The wire shape of authenticated dispatch, pinned: what consumers in other
//! languages read (the receipts and error details of `docs/contract.md`) —
//! receipts, the details of `APPROVAL_REQUIRED` / `APPROVAL_DENIED`, metric
//! records, the requests a policy sees and the messages code matches on.

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::metrics::{MetricOutcome, MetricRecord};
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

const T0: &str = "2026-01-01T00:00:00.000Z";

/// The flat "who" fields of every receipt of `alice()` under `req-1`.
fn who() -> Value {
    json!({
        "requestId": "req-1",
        "principalId": "user-1",
        "securityContextKey": security_context_key(&alice()),
        "subjectIssuer": "https://idp.example",
        "subjectId": "alice",
        "tenantId": "acme",
        "workspaceId": "ws-1",
        "timestamp": T0,
    })
}

/// `who()` with `fields` added.
fn receipt(fields: Value) -> Value {
    let mut receipt = who();
    for (key, value) in fields.as_object().unwrap() {
        receipt[key] = value.clone();
    }
    receipt
}

/// Runs `tool` as alice under an allow-all policy; the events and receipts.
async fn authed(
    options: SecurityOptions,
    tool: &str,
    input: Value,
) -> (Vec<ToolEvent>, Vec<AuditReceipt>) {
    let ran = call(options, &TestPolicy::allow_all(), tool, input).await;
    let receipts = ran.receipts();
    (ran.events, receipts)
}

/// Runs `notes.write` (a write tool) with approvals from `provider`.
async fn write_with(
    provider: impl ApprovalProvider + 'static,
) -> (Vec<ToolEvent>, Vec<AuditReceipt>) {
    authed(
        options().approval_provider(provider),
        "notes.write",
        json!({"q": "x"}),
    )
    .await
}

fn required(id: Option<&str>, reason: Option<&str>) -> Arc<TestProvider> {
    let (id, reason) = (id.map(str::to_owned), reason.map(str::to_owned));
    TestProvider::new(move |_| {
        Ok(ApprovalDecision::Required {
            approval_request_id: id.clone(),
            reason: reason.clone(),
            expires_at: Some(t0() + Duration::from_secs(600)),
        })
    })
}

// --------------------------------------------------------------- receipts

#[tokio::test]
async fn receipts_have_the_contract_shape() {
    let (events, receipts) = write_with(ApproveAll).await;
    assert_eq!(events[0].kind(), "result");
    let receipts = serde_json::to_value(&receipts).unwrap();
    assert_eq!(
        receipts,
        json!([
            receipt(json!({
                "kind": "authorization",
                "action": "tool.discover",
                "resource": {"kind": "tool", "target": "notes.write"},
                "toolName": "notes.write",
                "outcome": "allow",
            })),
            receipt(json!({
                "kind": "authorization",
                "action": "tool.invoke",
                "resource": {"kind": "tool", "target": "notes.write"},
                "toolName": "notes.write",
                "outcome": "allow",
            })),
            receipt(json!({
                "kind": "approval",
                "toolName": "notes.write",
                "approvalTier": "write",
                "outcome": "approved",
                // The provider gave no reason.
                "reason": "approved",
            })),
        ])
    );
}

#[tokio::test]
async fn related_resources_appear_only_where_a_resolution_happened_and_receipts_round_trip() {
    let (_, receipts) = authed(
        options()
            .approval_provider(ApproveAll)
            .resource_resolver(TestResolver::notes()),
        "notes.edit",
        json!({"noteId": "n1", "text": "t"}),
    )
    .await;
    // They read back as they were written.
    let json = serde_json::to_string(&receipts).unwrap();
    let back: Vec<AuditReceipt> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, receipts);
    let receipts = serde_json::to_value(&receipts).unwrap();
    assert_eq!(receipts[0].get("relatedResources"), None, "discover");
    assert_eq!(
        receipts[1]["relatedResources"],
        json!([{"kind": "note", "target": "n1", "tenantId": "acme", "workspaceId": "ws-1"}]),
        "invoke, resolved"
    );
    assert_eq!(receipts[2].get("relatedResources"), None, "approval");

    let (_, receipts) = write_with(ApproveAll).await;
    let receipts = serde_json::to_value(&receipts).unwrap();
    assert_eq!(
        receipts[1].get("relatedResources"),
        None,
        "invoke of a tool that declares no resource"
    );
}

// ------------------------------------------------------ approval decisions

#[tokio::test]
async fn approval_required_details_have_the_contract_shape() {
    let (events, receipts) = authed(
        options()
            .approval_provider(required(Some("apr-77"), Some("Needs a human")))
            .resource_resolver(TestResolver::notes()),
        "notes.edit",
        json!({"noteId": "n1", "text": "draft"}),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{
            "type": "error",
            "code": "APPROVAL_REQUIRED",
            "message": "Approval required to run notes.edit",
            "details": {
                "toolName": "notes.edit",
                "approvalTier": "write",
                "requestId": "req-1",
                "approvalRequestId": "apr-77",
                "reason": "Needs a human",
                "resource": {"kind": "tool", "target": "notes.edit"},
                "relatedResources": [
                    {"kind": "note", "target": "n1", "tenantId": "acme", "workspaceId": "ws-1"}
                ],
                "expiresAt": "2026-01-01T00:10:00.000Z"
            }
        }])
    );
    assert_eq!(
        serde_json::to_value(&receipts[2]).unwrap(),
        receipt(json!({
            "kind": "approval",
            "approvalRequestId": "apr-77",
            "toolName": "notes.edit",
            "approvalTier": "write",
            "outcome": "required",
            "reason": "Needs a human",
        }))
    );
}

#[tokio::test]
async fn approval_required_details_without_a_reason_or_a_related_resource() {
    let provider = TestProvider::new(|_| Ok(ApprovalDecision::required("apr-1")));
    let (events, _) = write_with(provider).await;
    assert_eq!(
        error_of(&events).details,
        Some(json!({
            "toolName": "notes.write",
            "approvalTier": "write",
            "requestId": "req-1",
            "approvalRequestId": "apr-1",
            "reason": "Approval required",
            "resource": {"kind": "tool", "target": "notes.write"},
        }))
    );
}

#[tokio::test]
async fn a_required_decision_without_a_request_id_is_invalid_and_denies() {
    for id in [None, Some(""), Some("  ")] {
        let (events, receipts) = write_with(required(id, Some("Needs a human"))).await;
        assert_eq!(
            wire(&events),
            json!([{
                "type": "error",
                "code": "APPROVAL_DENIED",
                "message": "Approval provider returned an invalid decision"
            }]),
            "{id:?}"
        );
        assert_eq!(
            serde_json::to_value(&receipts[2]).unwrap(),
            receipt(json!({
                "kind": "approval",
                "toolName": "notes.write",
                "approvalTier": "write",
                "outcome": "denied",
                "reason": "Approval provider returned an invalid decision",
            })),
            "{id:?}"
        );
    }
}

#[tokio::test]
async fn approval_denied_details_carry_the_providers_request_id() {
    let provider = TestProvider::new(|_| {
        Ok(ApprovalDecision::denied("Rejected by the owner").with_approval_request_id("apr-9"))
    });
    let (events, receipts) = write_with(provider).await;
    assert_eq!(
        wire(&events),
        json!([{
            "type": "error",
            "code": "APPROVAL_DENIED",
            "message": "Rejected by the owner",
            "details": {"approvalRequestId": "apr-9"}
        }])
    );
    assert_eq!(
        serde_json::to_value(&receipts[2]).unwrap()["approvalRequestId"],
        "apr-9"
    );
    // Without one, no details.
    let provider = TestProvider::new(|_| Ok(ApprovalDecision::denied("No")));
    let (events, _) = write_with(provider).await;
    assert_eq!(error_of(&events).details, None);
}

// ------------------------------------------------- what the policy sees

#[tokio::test]
async fn the_discover_request_carries_the_call_stack_of_the_tool() {
    let f = fixture(options());
    let policy = TestPolicy::allow_all();
    run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    let seen = policy.seen();
    assert_eq!(seen[0].action, "tool.discover");
    assert_eq!(seen[0].call_stack, ["notes.read"]);
    // Listing asks the same question.
    let policy = TestPolicy::allow_all();
    f.registry.list_discoverable(&auth(alice(), &policy)).await;
    for request in policy.seen() {
        assert_eq!(
            request.call_stack,
            [request.resource.target.as_deref().unwrap().to_owned()]
        );
    }
}

#[tokio::test]
async fn the_tool_resource_omits_an_undeclared_authorization() {
    let f = fixture(options().approval_provider(ApproveAll));
    let policy = TestPolicy::allow_all();
    run(
        &f.registry,
        "notes.write",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    let seen = policy.seen();
    assert_eq!(
        Value::Object((*seen[0].resource.metadata).clone()),
        json!({"capabilities": {}})
    );
    assert_eq!(
        Value::Object((*seen[1].resource.metadata).clone()),
        json!({"capabilities": {}, "approvalTier": "write"})
    );
}

// --------------------------------------------------------------- metrics

#[test]
fn a_metric_record_serializes_its_duration_in_milliseconds() {
    let record = MetricRecord {
        tool: "notes.read".into(),
        duration: Duration::from_micros(1_500),
        outcome: MetricOutcome::Error,
        error_code: Some(ErrorCode::InvalidInput),
    };
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(
        json,
        json!({"tool": "notes.read", "durationMs": 1.5, "outcome": "error", "errorCode": "INVALID_INPUT"})
    );
    let back: MetricRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, record);
    let ok = MetricRecord {
        error_code: None,
        outcome: MetricOutcome::Ok,
        ..record
    };
    assert_eq!(
        serde_json::to_value(&ok).unwrap(),
        json!({"tool": "notes.read", "durationMs": 1.5, "outcome": "ok"})
    );
}

// --------------------------------------------------------------- messages

#[tokio::test]
async fn messages_start_with_the_contract_wording() {
    // A resource that cannot be resolved.
    let (events, _) = authed(
        options().resource_resolver(TestResolver::new(|_| Ok(None))),
        "notes.edit",
        json!({"noteId": "gone", "text": "t"}),
    )
    .await;
    let message = error_of(&events).message;
    assert!(
        message.starts_with("Required authorization resource could not be resolved"),
        "{message}"
    );

    // A mandatory receipt that cannot be written, by kind.
    for (fails, expected) in [
        ("authorization", "Mandatory authorization audit failed"),
        ("approval", "Mandatory approval audit failed"),
    ] {
        let sink = TestSink::failing_when(move |r| {
            serde_json::to_value(r).unwrap()["kind"] == fails
                && r.as_authorization()
                    .is_none_or(|a| a.action == AuthorizationAction::Invoke)
        });
        let f = fixture(
            options()
                .audit_sink(sink)
                .mandatory_audit(true)
                .approval_provider(ApproveAll),
        );
        let policy = TestPolicy::allow_all();
        let events = run(
            &f.registry,
            "notes.write",
            json!({"q": "x"}),
            auth(alice(), &policy),
        )
        .await;
        let error = error_of(&events);
        assert_eq!(error.code, ErrorCode::AuthAuditFailed, "{fails}");
        assert!(
            error.message.starts_with(expected),
            "{fails}: {}",
            error.message
        );
    }

    // Approval required.
    let (events, _) = write_with(required(Some("apr-1"), None)).await;
    assert!(error_of(&events).message.starts_with("Approval required"));
}
