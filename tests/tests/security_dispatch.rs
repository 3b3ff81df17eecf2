//! Security, part 2: the gates of authenticated dispatch in DESIGN §4
//! order — discover, input validation, approval resolution, resource
//! resolution, invoke authorization, the approval gate — with their
//! receipts, metrics and call counts; composition; the unauthenticated
//! path.

mod security_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gonk_tools::definition::AuthorizationResource;
use gonk_tools::metrics::{MetricOutcome, MetricRecord};
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use security_support::*;
use serde_json::Value;

fn metric_codes(records: &[MetricRecord]) -> Vec<(String, MetricOutcome, Option<String>)> {
    records
        .iter()
        .map(|r| {
            (
                r.tool.clone(),
                r.outcome,
                r.error_code.as_ref().map(|c| c.to_string()),
            )
        })
        .collect()
}

fn authz(r: &AuditReceipt) -> &AuthorizationReceipt {
    r.as_authorization().expect("an authorization receipt")
}

fn appr(r: &AuditReceipt) -> &ApprovalReceipt {
    r.as_approval().expect("an approval receipt")
}

fn deny_discover_of(tool: &'static str) -> Arc<TestPolicy> {
    TestPolicy::new(move |req| {
        Ok(
            if req.action == AuthorizationAction::Discover
                && req.resource.target.as_deref() == Some(tool)
            {
                AuthorizationDecision::deny("hidden").with_policy_id("hide")
            } else {
                AuthorizationDecision::allow()
            },
        )
    })
}

fn deny_invoke(reason: Option<&'static str>) -> Arc<TestPolicy> {
    TestPolicy::new(move |req| {
        Ok(match (&req.action, reason) {
            (AuthorizationAction::Invoke, Some(reason)) => {
                AuthorizationDecision::deny(reason).with_policy_id("writers-only")
            }
            (AuthorizationAction::Invoke, None) => AuthorizationDecision {
                outcome: AuthorizationOutcome::Deny,
                reason: None,
                policy_id: None,
            },
            _ => AuthorizationDecision::allow(),
        })
    })
}

// ---------------------------------------------------------------- discover

#[tokio::test]
async fn a_discover_deny_is_exactly_a_missing_tool() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = deny_discover_of("notes.flag");
    // Invalid input on purpose: the validator must not run either.
    let hidden = run(
        &f.registry,
        "notes.flag",
        json!({"dangerous": "nope"}),
        auth(alice(), &policy),
    )
    .await;

    let missing_registry = ToolRegistry::builder().metrics(f.metrics.clone()).build();
    let missing = run(
        &missing_registry,
        "notes.flag",
        json!({}),
        ToolContext::new(),
    )
    .await;

    assert_eq!(wire(&hidden), wire(&missing));
    assert_eq!(
        wire(&hidden),
        json!([{"type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: notes.flag"}])
    );
    let metrics = metric_codes(&f.metrics.snapshot());
    assert_eq!(metrics[0], metrics[1], "same metric for hidden and missing");
    assert_eq!(
        metrics[0],
        (
            "notes.flag".into(),
            MetricOutcome::Error,
            Some("TOOL_NOT_FOUND".into())
        )
    );
    assert_eq!(f.handler.get(), 0);
    assert_eq!(f.approval_fn_calls.get(), 0, "approval not resolved");
    assert_eq!(policy.actions(), ["tool.discover"]);
    // The deny is audited.
    let receipts = audit.snapshot();
    assert_eq!(
        receipt_summary(&receipts),
        [s("authorization", "tool.discover", "deny")]
    );
    assert_eq!(authz(&receipts[0]).reason.as_deref(), Some("hidden"));
    assert_eq!(authz(&receipts[0]).policy_id.as_deref(), Some("hide"));
}

#[tokio::test]
async fn discover_runs_before_input_validation() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": ""}),
        auth(alice(), &policy),
    )
    .await;
    let error = error_of(&events);
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(error.issues()[0].path, "/q");
    assert_eq!(
        policy.actions(),
        ["tool.discover"],
        "no invoke for invalid input"
    );
    assert_eq!(
        receipt_summary(&audit.snapshot()),
        [s("authorization", "tool.discover", "allow")]
    );
    assert_eq!(f.handler.get(), 0);
}

#[tokio::test]
async fn the_discover_request_names_the_tool_without_input_on_its_own_stack() {
    let f = fixture(options().approval_provider(ApproveAll));
    let policy = TestPolicy::allow_all();
    run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    let discover = &policy.seen()[0];
    assert_eq!(discover.action, "tool.discover");
    assert_eq!(discover.principal_id, "user-1");
    assert_eq!(&*discover.resource.kind, "tool");
    assert_eq!(discover.resource.target.as_deref(), Some("notes.read"));
    let meta = Value::Object((*discover.resource.metadata).clone());
    assert_eq!(keys(&meta), ["authorization", "capabilities"]);
    assert_eq!(meta["authorization"], json!({"requiredRole": "reader"}));
    assert_eq!(meta["capabilities"], json!({"readsFs": true}));
    assert!(discover.related.is_empty());
    assert_eq!(discover.input, None);
    assert_eq!(discover.call_stack, ["notes.read"]);
}

#[tokio::test]
async fn a_missing_tool_with_auth_asks_no_policy_and_writes_no_receipt() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = TestPolicy::allow_all();
    let events = run(&f.registry, "nope", json!({}), auth(alice(), &policy)).await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: nope"}])
    );
    assert_eq!(policy.calls(), 0);
    assert!(audit.is_empty());
}

#[tokio::test]
async fn an_invalid_principal_at_the_root_is_not_found() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = TestPolicy::allow_all();
    let mut bad = alice();
    bad.identity.subject = String::new();
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(bad, &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: notes.read"}])
    );
    assert_eq!(policy.calls(), 0);
    assert!(
        audit.is_empty(),
        "no receipt without a trustworthy principal"
    );
    assert_eq!(f.handler.get(), 0);
    assert_eq!(
        metric_codes(&f.metrics.snapshot()),
        [(
            "notes.read".into(),
            MetricOutcome::Error,
            Some("TOOL_NOT_FOUND".into())
        )]
    );
}

#[tokio::test]
async fn an_expired_principal_at_the_root_is_not_found() {
    let f = fixture(options());
    let policy = TestPolicy::allow_all();
    let expired = alice().with_expires_at(t0());
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(expired, &policy),
    )
    .await;
    assert_eq!(error_of(&events).code, ErrorCode::ToolNotFound);
    assert_eq!(policy.calls(), 0);
}

#[tokio::test]
async fn a_failing_policy_at_discover_reads_as_not_found() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = TestPolicy::new(|_| Err(PolicyError::new("policy db down")));
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: notes.read"}])
    );
    let receipts = audit.snapshot();
    assert_eq!(
        receipt_summary(&receipts),
        [s("authorization", "tool.discover", "deny")]
    );
    assert_eq!(
        authz(&receipts[0]).reason.as_deref(),
        Some("Authorization policy failed")
    );
    assert_eq!(f.handler.get(), 0);
}

#[tokio::test]
async fn a_panicking_policy_fails_closed() {
    let f = fixture(options());
    let policy = TestPolicy::new(|req| {
        if req.action == AuthorizationAction::Invoke {
            panic!("policy bug");
        }
        Ok(AuthorizationDecision::allow())
    });
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    let error = error_of(&events);
    assert_eq!(error.code, ErrorCode::AuthorizationDenied);
    assert_eq!(error.message, "Authorization policy failed");
    assert_eq!(f.handler.get(), 0);
    // The registry keeps serving.
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        ToolContext::new(),
    )
    .await;
    assert_eq!(events[0].kind(), "result");
}

#[tokio::test]
async fn at_discover_a_deny_beats_an_audit_failure() {
    let sink = TestSink::always_failing();
    let f = fixture(options().audit_sink(sink.clone()).mandatory_audit(true));
    let policy = deny_discover_of("notes.read");
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: notes.read"}])
    );
    assert_eq!(sink.failures.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn at_discover_an_allow_with_a_failed_mandatory_receipt_stops_the_call() {
    let sink = TestSink::always_failing();
    let f = fixture(options().audit_sink(sink.clone()).mandatory_audit(true));
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTH_AUDIT_FAILED", "message": "Mandatory authorization audit failed"}])
    );
    assert_eq!(policy.actions(), ["tool.discover"]);
    assert_eq!(f.handler.get(), 0);
    assert_eq!(
        metric_codes(&f.metrics.snapshot()),
        [(
            "notes.read".into(),
            MetricOutcome::Error,
            Some("AUTH_AUDIT_FAILED".into())
        )]
    );
}

#[tokio::test]
async fn mandatory_audit_without_a_sink_fails_closed() {
    let f = fixture(options().mandatory_audit(true));
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&events).code, ErrorCode::AuthAuditFailed);
    assert_eq!(f.handler.get(), 0);
}

#[tokio::test]
async fn a_failing_optional_sink_does_not_stop_the_call() {
    let sink = TestSink::always_failing();
    let f = fixture(
        options()
            .audit_sink(sink.clone())
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
    assert_eq!(
        wire(&events),
        json!([{"type": "result", "data": {"written": "x"}}])
    );
    assert_eq!(
        sink.failures.load(Ordering::SeqCst),
        3,
        "discover, invoke, approval"
    );
    assert_eq!(f.handler.get(), 1);
}

// ------------------------------------------------------ approval resolution

#[tokio::test]
async fn a_missing_approval_declaration_resolves_to_exec() {
    let provider = TestProvider::approve_all();
    let f = fixture(options().approval_provider(provider.clone()));
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.exec",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(events[0].kind(), "result");
    let seen = &provider.seen()[0];
    assert_eq!(
        seen.approval,
        ApprovalSpec {
            tier: ApprovalTier::Exec,
            overridable: false,
            reason: Some("Missing or invalid approval declaration".into())
        }
    );
    assert_eq!(policy.seen()[1].resource.metadata["approvalTier"], "exec");
}

#[tokio::test]
async fn a_failing_approval_fn_resolves_to_exec() {
    let provider = TestProvider::approve_all();
    let f = fixture(options().approval_provider(provider.clone()));
    let policy = TestPolicy::allow_all();
    run(
        &f.registry,
        "notes.badflag",
        json!({"dangerous": false}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(f.approval_fn_calls.get(), 1);
    let seen = &provider.seen()[0];
    assert_eq!(seen.approval.tier, ApprovalTier::Exec);
    assert!(!seen.approval.overridable);
    assert_eq!(
        seen.approval.reason.as_deref(),
        Some("Missing or invalid approval declaration")
    );
}

#[tokio::test]
async fn approval_is_resolved_from_the_validated_input() {
    // No provider: read runs, exec is denied — the tier decides.
    let f = fixture(options());
    let policy = TestPolicy::allow_all();
    let calm = run(
        &f.registry,
        "notes.flag",
        json!({"dangerous": false}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(wire(&calm), json!([{"type": "result", "data": "flagged"}]));
    let risky = run(
        &f.registry,
        "notes.flag",
        json!({"dangerous": true}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&risky).code, ErrorCode::ApprovalDenied);
    // An input the schema rejects never reaches the approval fn.
    let invalid = run(
        &f.registry,
        "notes.flag",
        json!({"dangerous": 3}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&invalid).code, ErrorCode::InvalidInput);
    assert_eq!(f.approval_fn_calls.get(), 2);
    assert_eq!(f.handler.get(), 1);
}

// ---------------------------------------------------- resource resolution

#[tokio::test]
async fn a_resolved_resource_reaches_the_policy_and_the_receipt_redacted() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let resolver = TestResolver::notes();
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .resource_resolver(resolver.clone())
            .approval_provider(ApproveAll),
    );
    let policy = TestPolicy::allow_all();
    let input = json!({"noteId": "n1", "text": "hello"});
    let events = run(
        &f.registry,
        "notes.edit",
        input.clone(),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "result", "data": {"edited": "n1", "len": 5}}])
    );
    assert_eq!(resolver.calls(), 1);
    assert_eq!(resolver.seen_inputs.lock().unwrap()[0], input);
    let invoke = &policy.seen()[1];
    assert_eq!(invoke.related.len(), 1);
    assert_eq!(
        invoke.related[0].metadata["owner"], "alice",
        "the policy sees metadata"
    );
    let receipt = authz(&audit.snapshot()[1]).clone();
    assert_eq!(
        serde_json::to_value(&receipt.related_resources).unwrap(),
        json!([{"kind": "note", "target": "n1", "tenantId": "acme", "workspaceId": "ws-1"}])
    );
    assert_eq!(
        serde_json::to_value(&receipt.resource).unwrap(),
        json!({"kind": "tool", "target": "notes.edit"})
    );
}

async fn unresolved_case(
    resolver: Option<Arc<TestResolver>>,
    input: Value,
    expected_reason: &str,
) -> (Vec<AuditReceipt>, Arc<TestPolicy>, Fixture) {
    let audit = Arc::new(InMemoryAuditSink::new());
    let mut options = options()
        .audit_sink(audit.clone())
        .approval_provider(ApproveAll);
    if let Some(resolver) = resolver {
        options = options.resource_resolver(resolver);
    }
    let f = fixture(options);
    let policy = TestPolicy::allow_all();
    let events = run(&f.registry, "notes.edit", input, auth(alice(), &policy)).await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTH_RESOURCE_UNRESOLVED",
                "message": "Required authorization resource could not be resolved"}])
    );
    assert_eq!(policy.actions(), ["tool.discover"], "no invoke policy call");
    assert_eq!(f.handler.get(), 0);
    let receipts = audit.snapshot();
    assert_eq!(
        receipt_summary(&receipts),
        [
            s("authorization", "tool.discover", "allow"),
            s("authorization", "tool.invoke", "deny")
        ]
    );
    assert_eq!(authz(&receipts[1]).reason.as_deref(), Some(expected_reason));
    assert_eq!(
        metric_codes(&f.metrics.snapshot())[0].2.as_deref(),
        Some("AUTH_RESOURCE_UNRESOLVED")
    );
    (receipts, policy, f)
}

#[tokio::test]
async fn a_resource_that_does_not_exist_is_unresolved() {
    let resolver = TestResolver::new(|_| Ok(None));
    let (receipts, _, _) = unresolved_case(
        Some(resolver.clone()),
        json!({"noteId": "gone", "text": "t"}),
        "Resource not found",
    )
    .await;
    assert!(authz(&receipts[1]).related_resources.is_empty());
    assert_eq!(resolver.calls(), 1);
}

#[tokio::test]
async fn a_resource_of_another_kind_is_unresolved() {
    let resolver = TestResolver::new(|_| Ok(Some(ResourceRef::new("folder").with_target("f1"))));
    let (receipts, _, _) = unresolved_case(
        Some(resolver),
        json!({"noteId": "n1", "text": "t"}),
        "Resolved resource has kind folder, expected note",
    )
    .await;
    assert_eq!(
        serde_json::to_value(&authz(&receipts[1]).related_resources).unwrap(),
        json!([{"kind": "folder", "target": "f1"}])
    );
}

#[tokio::test]
async fn a_resource_without_its_required_field_is_unresolved() {
    let resolver = TestResolver::new(|_| Ok(Some(ResourceRef::new("note"))));
    unresolved_case(
        Some(resolver),
        json!({"noteId": "n1", "text": "t"}),
        "Resolved resource lacks required field target",
    )
    .await;
}

#[tokio::test]
async fn declared_required_fields_are_all_checked() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let resolver = TestResolver::new(|_| Ok(Some(ResourceRef::new("note").with_target("n1"))));
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .resource_resolver(resolver),
    );
    f.registry
        .register(
            ToolDefinition::builder("notes.tenanted")
                .description("Needs the tenant resolved.")
                .approval(ApprovalTier::Read)
                .authorization_resource(AuthorizationResource {
                    kind: "note".into(),
                    required_fields: vec!["target".into(), "tenantId".into()],
                })
                .handler(|_: Value, _| async { Ok::<_, ToolError>(1) })
                .build(),
        )
        .unwrap();
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.tenanted",
        json!({}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&events).code, ErrorCode::AuthResourceUnresolved);
    assert_eq!(
        authz(&audit.snapshot()[1]).reason.as_deref(),
        Some("Resolved resource lacks required field tenantId")
    );
}

#[tokio::test]
async fn a_failing_resolver_is_unresolved() {
    let resolver = TestResolver::new(|_| Err(SecurityError::new("notes db timeout")));
    unresolved_case(
        Some(resolver),
        json!({"noteId": "n1", "text": "t"}),
        "Resource resolver failed",
    )
    .await;
}

#[tokio::test]
async fn no_resolver_means_unresolved() {
    unresolved_case(
        None,
        json!({"noteId": "n1", "text": "t"}),
        "Resource resolver not configured",
    )
    .await;
}

#[tokio::test]
async fn an_unresolved_resource_with_a_failed_mandatory_receipt_is_an_audit_failure() {
    let sink = TestSink::failing_when(|r| {
        r.as_authorization()
            .is_some_and(|a| a.action == AuthorizationAction::Invoke)
    });
    let f = fixture(
        options()
            .audit_sink(sink.clone())
            .mandatory_audit(true)
            .resource_resolver(TestResolver::new(|_| Ok(None))),
    );
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.edit",
        json!({"noteId": "n", "text": "t"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&events).code, ErrorCode::AuthAuditFailed);
}

#[tokio::test]
async fn without_auth_a_declared_resource_is_not_resolved() {
    let resolver = TestResolver::new(|_| Ok(None));
    let f = fixture(options().resource_resolver(resolver.clone()));
    let events = run(
        &f.registry,
        "notes.edit",
        json!({"noteId": "n1", "text": "t"}),
        ToolContext::new(),
    )
    .await;
    assert_eq!(events[0].kind(), "result");
    assert_eq!(resolver.calls(), 0);
}

// ------------------------------------------------------ invoke authorization

#[tokio::test]
async fn the_invoke_request_carries_metadata_input_and_call_stack() {
    let f = fixture(options().approval_provider(ApproveAll));
    let policy = TestPolicy::allow_all();
    run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
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

#[tokio::test]
async fn an_invoke_deny_is_authorization_denied_with_the_policy_reason() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let provider = TestProvider::approve_all();
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_provider(provider.clone()),
    );
    let policy = deny_invoke(Some("Writers only"));
    let events = run(
        &f.registry,
        "notes.write",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTHORIZATION_DENIED", "message": "Writers only"}])
    );
    assert_eq!(f.handler.get(), 0);
    assert_eq!(provider.calls(), 0, "no approval after a deny");
    let receipts = audit.snapshot();
    assert_eq!(
        receipt_summary(&receipts),
        [
            s("authorization", "tool.discover", "allow"),
            s("authorization", "tool.invoke", "deny")
        ]
    );
    assert_eq!(
        authz(&receipts[1]).policy_id.as_deref(),
        Some("writers-only")
    );
    assert_eq!(authz(&receipts[1]).reason.as_deref(), Some("Writers only"));
    assert_eq!(
        metric_codes(&f.metrics.snapshot()),
        [(
            "notes.write".into(),
            MetricOutcome::Error,
            Some("AUTHORIZATION_DENIED".into())
        )]
    );
}

#[tokio::test]
async fn a_deny_without_a_reason_says_authorization_denied() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = deny_invoke(None);
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    let error = error_of(&events);
    assert_eq!(
        (error.code, error.message.as_str()),
        (ErrorCode::AuthorizationDenied, "Authorization denied")
    );
    assert_eq!(error.details, None);
    let receipt = authz(&audit.snapshot()[1]).clone();
    assert_eq!((receipt.reason, receipt.policy_id), (None, None));
}

#[tokio::test]
async fn a_failing_policy_at_invoke_is_a_generic_deny() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = TestPolicy::new(|req| match req.action {
        AuthorizationAction::Invoke => Err(PolicyError::new("opa unreachable at 10.0.0.9")),
        _ => Ok(AuthorizationDecision::allow()),
    });
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTHORIZATION_DENIED", "message": "Authorization policy failed"}])
    );
    assert_eq!(
        authz(&audit.snapshot()[1]).reason.as_deref(),
        Some("Authorization policy failed")
    );
}

#[tokio::test]
async fn at_invoke_an_audit_failure_beats_a_deny() {
    let sink = TestSink::failing_when(|r| {
        r.as_authorization()
            .is_some_and(|a| a.action == AuthorizationAction::Invoke)
    });
    let f = fixture(options().audit_sink(sink.clone()).mandatory_audit(true));
    let policy = deny_invoke(Some("no"));
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "AUTH_AUDIT_FAILED", "message": "Mandatory authorization audit failed"}])
    );
    assert_eq!(
        receipt_summary(&sink.stored()),
        [s("authorization", "tool.discover", "allow")]
    );
}

// ----------------------------------------------------------- approval gate

#[tokio::test]
async fn a_read_tool_without_a_provider_skips_the_approval_gate() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "result", "data": {"hits": ["x"]}}])
    );
    assert_eq!(
        receipt_summary(&audit.snapshot()),
        [
            s("authorization", "tool.discover", "allow"),
            s("authorization", "tool.invoke", "allow")
        ]
    );
}

#[tokio::test]
async fn write_and_exec_without_a_provider_are_denied() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = TestPolicy::allow_all();
    for tool in ["notes.write", "notes.exec"] {
        audit.clear();
        let events = run(&f.registry, tool, json!({"q": "x"}), auth(alice(), &policy)).await;
        assert_eq!(
            wire(&events),
            json!([{"type": "error", "code": "APPROVAL_DENIED", "message": "Approval provider not configured"}])
        );
        let receipts = audit.snapshot();
        assert_eq!(receipt_summary(&receipts)[2], s("approval", "-", "denied"));
        let r = appr(&receipts[2]);
        assert_eq!(
            r.reason.as_deref(),
            Some("Approval provider not configured")
        );
        assert_eq!((r.grant_id.clone(), r.grant_scope), (None, None));
    }
    assert_eq!(appr(&audit.snapshot()[2]).approval_tier, ApprovalTier::Exec);
    assert_eq!(f.handler.get(), 0);
}

#[tokio::test]
async fn a_configured_provider_is_consulted_for_read_tools() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let provider = TestProvider::new(|_| Ok(ApprovalDecision::denied("Reads are paused")));
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_provider(provider.clone()),
    );
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.read",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "APPROVAL_DENIED", "message": "Reads are paused"}])
    );
    assert_eq!(provider.calls(), 1);
    assert_eq!(provider.seen()[0].approval.tier, ApprovalTier::Read);
    let receipts = audit.snapshot();
    assert_eq!(appr(&receipts[2]).outcome, ApprovalOutcome::Denied);
    assert_eq!(
        appr(&receipts[2]).reason.as_deref(),
        Some("Reads are paused")
    );
    assert_eq!(f.handler.get(), 0);
}

#[tokio::test]
async fn bypass_mode_skips_the_approval_gate_even_with_a_provider() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let provider = TestProvider::new(|_| Ok(ApprovalDecision::denied("never")));
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_mode(ApprovalMode::Bypass)
            .approval_provider(provider.clone()),
    );
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.exec",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "result", "data": {"ran": "x"}}])
    );
    assert_eq!(provider.calls(), 0);
    assert_eq!(audit.len(), 2, "authorization receipts only");
}

#[tokio::test]
async fn a_failing_provider_denies_with_a_generic_message() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let provider = TestProvider::new(|_| Err(SecurityError::new("consent service 503")));
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_provider(provider.clone()),
    );
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.write",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "error", "code": "APPROVAL_DENIED", "message": "Approval provider failed"}])
    );
    assert_eq!(
        appr(&audit.snapshot()[2]).reason.as_deref(),
        Some("Approval provider failed")
    );
    assert_eq!(f.handler.get(), 0);
}

#[tokio::test]
async fn approval_required_is_a_completed_non_executing_error_with_redacted_details() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let provider = TestProvider::new(|_| {
        Ok(ApprovalDecision::Required {
            approval_request_id: Some("apr-77".into()),
            reason: Some("Needs a human".into()),
            expires_at: Some(t0() + Duration::from_secs(600)),
        })
    });
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_provider(provider.clone())
            .resource_resolver(TestResolver::notes()),
    );
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.edit",
        json!({"noteId": "n1", "text": "draft"}),
        auth(alice(), &policy),
    )
    .await;
    // The details' exact shape is pinned in security_wire.rs.
    let error = error_of(&events);
    assert_eq!(error.code, ErrorCode::ApprovalRequired);
    let details = error.details.expect("details");
    assert_eq!(details["approvalRequestId"], "apr-77");
    assert_eq!(
        details["relatedResources"],
        json!([{"kind": "note", "target": "n1", "tenantId": "acme", "workspaceId": "ws-1"}]),
        "redacted: no scope, no metadata"
    );
    assert_eq!(f.handler.get(), 0);
    assert_eq!(
        metric_codes(&f.metrics.snapshot()),
        [(
            "notes.edit".into(),
            MetricOutcome::Error,
            Some("APPROVAL_REQUIRED".into())
        )]
    );
    let receipts = audit.snapshot();
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
async fn an_approved_grant_is_recorded_and_the_handler_runs() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let provider = TestProvider::new(|_| {
        Ok(ApprovalDecision::approved_by(
            "grant-5",
            GrantScope::Persistent,
        ))
    });
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_provider(provider),
    );
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.write",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "result", "data": {"written": "x"}}])
    );
    assert_eq!(f.handler.get(), 1);
    let receipt = serde_json::to_value(&audit.snapshot()[2]).unwrap();
    assert_eq!(receipt["outcome"], "approved");
    assert_eq!(receipt["grantId"], "grant-5");
    assert_eq!(receipt["grantScope"], "persistent");
    assert!(receipt.get("approvalRequestId").is_none());
}

#[tokio::test]
async fn an_approval_without_a_grant_has_no_grant_fields() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_provider(ApproveAll),
    );
    let policy = TestPolicy::allow_all();
    run(
        &f.registry,
        "notes.write",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    let receipt = serde_json::to_value(&audit.snapshot()[2]).unwrap();
    assert_eq!(receipt["outcome"], "approved");
    assert!(receipt.get("grantId").is_none() && receipt.get("grantScope").is_none());
}

#[tokio::test]
async fn the_approval_request_carries_keys_request_id_resources_and_input() {
    let provider = TestProvider::approve_all();
    let f = fixture(
        options()
            .approval_provider(provider.clone())
            .resource_resolver(TestResolver::notes()),
    );
    let policy = TestPolicy::allow_all();
    let p = alice_via_agent();
    run(
        &f.registry,
        "notes.edit",
        json!({"noteId": "n1", "text": "t"}),
        auth(p.clone(), &policy),
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

#[tokio::test]
async fn an_approval_receipt_that_cannot_be_written_is_an_audit_failure() {
    let sink = TestSink::failing_when(|r| r.as_approval().is_some());
    let f = fixture(
        options()
            .audit_sink(sink.clone())
            .mandatory_audit(true)
            .approval_provider(TestProvider::new(|_| {
                Ok(ApprovalDecision::required("apr-1"))
            })),
    );
    let policy = TestPolicy::allow_all();
    let events = run(
        &f.registry,
        "notes.write",
        json!({"q": "x"}),
        auth(alice(), &policy),
    )
    .await;
    assert_eq!(error_of(&events).code, ErrorCode::AuthAuditFailed);
    assert_eq!(f.handler.get(), 0);
}

// ---------------------------------------------------------------- receipts

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

// ------------------------------------------------------------- composition

/// `parent` calls `child` via ctx.invoke and reports the child's outcome.
fn register_composition(
    registry: &ToolRegistry,
    child_approval: ApprovalTier,
) -> (Counter, Counter) {
    let parent_runs = Counter::default();
    let child_runs = Counter::default();
    let c = child_runs.clone();
    registry
        .register(
            ToolDefinition::builder("child")
                .description("The child.")
                .approval(child_approval)
                .handler(move |_: Value, ctx: ToolContext| {
                    c.hit();
                    async move {
                        Ok::<_, ToolError>(json!({
                            "requestId": ctx.request_id(),
                            "principal": ctx.auth().map(|a| a.principal().id.clone()),
                            "stack": ctx.call_stack().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                        }))
                    }
                })
                .build(),
        )
        .unwrap();
    let p = parent_runs.clone();
    registry
        .register(
            ToolDefinition::builder("parent")
                .description("The parent.")
                .approval(ApprovalTier::Read)
                .handler(move |_: Value, ctx: ToolContext| {
                    p.hit();
                    async move {
                        let out =
                            collect_tool_outcome(ctx.invoke("child", json!({})), |_| {}).await?;
                        Ok::<_, ToolError>(out.data)
                    }
                })
                .build(),
        )
        .unwrap();
    (parent_runs, child_runs)
}

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
            (
                "child".into(),
                MetricOutcome::Error,
                Some("AUTHORIZATION_DENIED".into())
            ),
            (
                "parent".into(),
                MetricOutcome::Error,
                Some("AUTHORIZATION_DENIED".into())
            ),
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

// ------------------------------------------------------ unauthenticated path

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

// ------------------------------------------------------------------ misc

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
        [(
            "notes.read".into(),
            MetricOutcome::Aborted,
            Some("ABORTED".into())
        )]
    );
    assert_eq!(f.handler.get(), 0);
}

#[tokio::test]
async fn list_discoverable_hides_what_discover_denies() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(options().audit_sink(audit.clone()));
    let policy = deny_discover_of("notes.exec");
    let names = |defs: Vec<ToolDefinition>| defs.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
    let visible = names(f.registry.list_discoverable(&auth(alice(), &policy)).await);
    assert!(!visible.contains(&"notes.exec".to_owned()));
    assert_eq!(visible.len(), f.registry.list().len() - 1);
    assert_eq!(
        audit.len(),
        f.registry.list().len(),
        "one discover receipt per tool"
    );
    assert!(audit.snapshot().iter().all(|r| r.request_id() == "req-1"));
    // Without auth: everything. With an invalid principal: nothing.
    assert_eq!(
        f.registry
            .list_discoverable(&ToolContext::new())
            .await
            .len(),
        f.registry.list().len()
    );
    let mut bad = alice();
    bad.id.clear();
    assert!(f
        .registry
        .list_discoverable(&auth(bad, &policy))
        .await
        .is_empty());
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

#[tokio::test]
async fn a_gate_that_waits_gets_its_own_timestamp() {
    // The policy moves the clock by a minute on each question; at invoke it
    // also has to wait (yields once) before it answers.
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
    // Discover decided without waiting: the admission reading. Invoke
    // waited: read again after its answer (two minutes on).
    assert_eq!(stamps, [t0(), t0() + Duration::from_secs(120)]);
}
