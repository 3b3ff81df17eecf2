//! The discover gate, first: a tool the principal may not discover is
//! exactly a missing tool (same answer, same metric, nothing else run),
//! decided before input validation; a panicking policy fails closed, a
//! failing optional sink does not stop the call; listing hides the tool too.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

use super::{authz, deny_discover_of, not_found};

#[tokio::test]
async fn a_discover_deny_is_exactly_a_missing_tool() {
    let policy = deny_discover_of("notes.flag");
    // Invalid input on purpose: the validator must not run either.
    let hidden = call(
        options(),
        &policy,
        "notes.flag",
        json!({"dangerous": "nope"}),
    )
    .await;

    let missing_registry = ToolRegistry::builder()
        .metrics(hidden.f.metrics.clone())
        .build();
    let missing = run(
        &missing_registry,
        "notes.flag",
        json!({}),
        ToolContext::new(),
    )
    .await;

    assert_eq!(hidden.wire(), wire(&missing));
    assert_eq!(hidden.wire(), not_found("notes.flag"));
    let metrics = hidden.metrics();
    assert_eq!(metrics[0], metrics[1], "same metric for hidden and missing");
    assert_eq!(
        metrics[0],
        metric("notes.flag", MetricOutcome::Error, Some("TOOL_NOT_FOUND"))
    );
    assert_eq!(hidden.f.handler.get(), 0);
    assert_eq!(hidden.f.approval_fn_calls.get(), 0, "approval not resolved");
    assert_eq!(policy.actions(), ["tool.discover"]);
    // The deny is audited.
    let receipts = hidden.receipts();
    assert_eq!(
        receipt_summary(&receipts),
        [s("authorization", "tool.discover", "deny")]
    );
    assert_eq!(authz(&receipts[0]).reason.as_deref(), Some("hidden"));
    assert_eq!(authz(&receipts[0]).policy_id.as_deref(), Some("hide"));
}

/// A root call that must read exactly as a missing tool.
struct Hidden {
    name: &'static str,
    tool: &'static str,
    principal: AuthenticatedPrincipal,
    policy: Arc<TestPolicy>,
    sink: Option<Arc<TestSink>>,
    /// The receipts written, by `(kind, action, outcome)`, and the reason
    /// of the first.
    receipts: Vec<(String, String, String)>,
    reason: Option<&'static str>,
    policy_calls: usize,
}

#[tokio::test]
async fn what_the_root_may_not_see_reads_as_missing() {
    let mut no_subject = alice();
    no_subject.identity.subject = String::new();
    let cases = [
        Hidden {
            name: "a missing tool asks no policy and writes no receipt",
            tool: "nope",
            principal: alice(),
            policy: TestPolicy::allow_all(),
            sink: None,
            receipts: vec![],
            reason: None,
            policy_calls: 0,
        },
        Hidden {
            name: "an invalid principal: no receipt without a trustworthy principal",
            tool: "notes.read",
            principal: no_subject,
            policy: TestPolicy::allow_all(),
            sink: None,
            receipts: vec![],
            reason: None,
            policy_calls: 0,
        },
        Hidden {
            name: "an expired principal",
            tool: "notes.read",
            principal: alice().with_expires_at(t0()),
            policy: TestPolicy::allow_all(),
            sink: None,
            receipts: vec![],
            reason: None,
            policy_calls: 0,
        },
        Hidden {
            name: "a failing policy at discover",
            tool: "notes.read",
            principal: alice(),
            policy: TestPolicy::new(|_| Err(PolicyError::new("policy db down"))),
            sink: None,
            receipts: vec![s("authorization", "tool.discover", "deny")],
            reason: Some("Authorization policy failed"),
            policy_calls: 1,
        },
        Hidden {
            name: "at discover a deny beats an audit failure",
            tool: "notes.read",
            principal: alice(),
            policy: deny_discover_of("notes.read"),
            sink: Some(TestSink::always_failing()),
            receipts: vec![],
            reason: None,
            policy_calls: 1,
        },
    ];
    for case in cases {
        let mut options = options();
        if let Some(sink) = &case.sink {
            options = options.audit_sink(sink.clone()).mandatory_audit(true);
        }
        let ran = call_as(
            options,
            case.principal,
            &case.policy,
            case.tool,
            json!({"q": "x"}),
        )
        .await;
        assert_eq!(ran.wire(), not_found(case.tool), "{}", case.name);
        assert_eq!(ran.f.handler.get(), 0, "{}", case.name);
        assert_eq!(case.policy.calls(), case.policy_calls, "{}", case.name);
        assert_eq!(
            ran.metrics(),
            [metric(
                case.tool,
                MetricOutcome::Error,
                Some("TOOL_NOT_FOUND")
            )],
            "{}",
            case.name
        );
        match &case.sink {
            // The failing sink was asked once (the discover receipt).
            Some(sink) => assert_eq!(sink.failures.load(Ordering::SeqCst), 1, "{}", case.name),
            None => {
                let receipts = ran.receipts();
                assert_eq!(receipt_summary(&receipts), case.receipts, "{}", case.name);
                if let Some(reason) = case.reason {
                    assert_eq!(
                        authz(&receipts[0]).reason.as_deref(),
                        Some(reason),
                        "{}",
                        case.name
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn discover_runs_before_input_validation() {
    let policy = TestPolicy::allow_all();
    let ran = call(options(), &policy, "notes.read", json!({"q": ""})).await;
    let error = ran.error();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(error.issues()[0].path, "/q");
    assert_eq!(
        policy.actions(),
        ["tool.discover"],
        "no invoke for invalid input"
    );
    assert_eq!(
        ran.summary(),
        [s("authorization", "tool.discover", "allow")]
    );
    assert_eq!(ran.f.handler.get(), 0);
}

#[tokio::test]
async fn the_discover_request_names_the_tool_without_input_on_its_own_stack() {
    let policy = TestPolicy::allow_all();
    call(
        options().approval_provider(ApproveAll),
        &policy,
        "notes.read",
        json!({"q": "x"}),
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
async fn a_panicking_policy_fails_closed() {
    let policy = TestPolicy::new(|req| {
        if req.action == AuthorizationAction::Invoke {
            panic!("policy bug");
        }
        Ok(AuthorizationDecision::allow())
    });
    let ran = call(options(), &policy, "notes.read", json!({"q": "x"})).await;
    let error = ran.error();
    assert_eq!(error.code, ErrorCode::AuthorizationDenied);
    assert_eq!(error.message, "Authorization policy failed");
    assert_eq!(ran.f.handler.get(), 0);
    // The registry keeps serving.
    let events = run(
        &ran.f.registry,
        "notes.read",
        json!({"q": "x"}),
        ToolContext::new(),
    )
    .await;
    assert_eq!(events[0].kind(), "result");
}

#[tokio::test]
async fn a_failing_optional_sink_does_not_stop_the_call() {
    let sink = TestSink::always_failing();
    let policy = TestPolicy::allow_all();
    let ran = call(
        options()
            .audit_sink(sink.clone())
            .approval_provider(ApproveAll),
        &policy,
        "notes.write",
        json!({"q": "x"}),
    )
    .await;
    assert_eq!(
        ran.wire(),
        json!([{"type": "result", "data": {"written": "x"}}])
    );
    assert_eq!(
        sink.failures.load(Ordering::SeqCst),
        3,
        "discover, invoke, approval"
    );
    assert_eq!(ran.f.handler.get(), 1);
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
