//! Security, part 2: the gates of authenticated dispatch in DESIGN §4
//! order — discover, input validation, approval resolution, resource
//! resolution, invoke authorization, the approval gate — with their
//! receipts, metrics and call counts; composition; the unauthenticated
//! path. Families of cases that differ only in their setup are tables.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gonk_tools::definition::AuthorizationResource;
use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

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

/// A sink that fails the invoke authorization receipt only.
fn failing_invoke_receipts() -> Arc<TestSink> {
    TestSink::failing_when(|r| {
        r.as_authorization()
            .is_some_and(|a| a.action == AuthorizationAction::Invoke)
    })
}

fn not_found(tool: &str) -> Value {
    refused("TOOL_NOT_FOUND", &format!("No such tool: {tool}"))
}

// ---------------------------------------------------------------- discover

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

// ------------------------------------------------------ mandatory audit

/// A mandatory receipt that cannot be written stops the call.
struct AuditFailure {
    name: &'static str,
    /// `None`: mandatory audit without any sink.
    sink: Option<Arc<TestSink>>,
    options: fn(SecurityOptions) -> SecurityOptions,
    policy: Arc<TestPolicy>,
    tool: &'static str,
    input: Value,
    message: &'static str,
    /// What the sink stored before the failure.
    stored: Vec<(String, String, String)>,
    policy_actions: Vec<&'static str>,
}

#[tokio::test]
async fn a_mandatory_receipt_that_cannot_be_written_stops_the_call() {
    let cases = [
        AuditFailure {
            name: "at discover, an allow whose receipt fails",
            sink: Some(TestSink::always_failing()),
            options: |o| o,
            policy: TestPolicy::allow_all(),
            tool: "notes.read",
            input: json!({"q": "x"}),
            message: "Mandatory authorization audit failed",
            stored: vec![],
            policy_actions: vec!["tool.discover"],
        },
        AuditFailure {
            name: "mandatory audit without a sink",
            sink: None,
            options: |o| o,
            policy: TestPolicy::allow_all(),
            tool: "notes.read",
            input: json!({"q": "x"}),
            message: "Mandatory authorization audit failed",
            stored: vec![],
            policy_actions: vec!["tool.discover"],
        },
        AuditFailure {
            name: "an unresolved resource whose deny receipt fails",
            sink: Some(failing_invoke_receipts()),
            options: |o| o.resource_resolver(TestResolver::new(|_| Ok(None))),
            policy: TestPolicy::allow_all(),
            tool: "notes.edit",
            input: json!({"noteId": "n", "text": "t"}),
            message: "Mandatory authorization audit failed",
            stored: vec![s("authorization", "tool.discover", "allow")],
            policy_actions: vec!["tool.discover"],
        },
        AuditFailure {
            name: "at invoke an audit failure beats a deny",
            sink: Some(failing_invoke_receipts()),
            options: |o| o,
            policy: deny_invoke(Some("no")),
            tool: "notes.read",
            input: json!({"q": "x"}),
            message: "Mandatory authorization audit failed",
            stored: vec![s("authorization", "tool.discover", "allow")],
            policy_actions: vec!["tool.discover", "tool.invoke"],
        },
        AuditFailure {
            name: "an approval receipt that cannot be written",
            sink: Some(TestSink::failing_when(|r| r.as_approval().is_some())),
            options: |o| {
                o.approval_provider(TestProvider::new(|_| {
                    Ok(ApprovalDecision::required("apr-1"))
                }))
            },
            policy: TestPolicy::allow_all(),
            tool: "notes.write",
            input: json!({"q": "x"}),
            message: "Mandatory approval audit failed",
            stored: vec![
                s("authorization", "tool.discover", "allow"),
                s("authorization", "tool.invoke", "allow"),
            ],
            policy_actions: vec!["tool.discover", "tool.invoke"],
        },
    ];
    for case in cases {
        let mut options = (case.options)(options().mandatory_audit(true));
        if let Some(sink) = &case.sink {
            options = options.audit_sink(sink.clone());
        }
        let f = fixture(options);
        let events = run(
            &f.registry,
            case.tool,
            case.input,
            auth(alice(), &case.policy),
        )
        .await;
        assert_eq!(
            wire(&events),
            refused("AUTH_AUDIT_FAILED", case.message),
            "{}",
            case.name
        );
        assert_eq!(f.handler.get(), 0, "{}", case.name);
        assert_eq!(case.policy.actions(), case.policy_actions, "{}", case.name);
        assert_eq!(
            metric_codes(&f.metrics.snapshot()),
            [metric(
                case.tool,
                MetricOutcome::Error,
                Some("AUTH_AUDIT_FAILED")
            )],
            "{}",
            case.name
        );
        if let Some(sink) = &case.sink {
            assert_eq!(
                receipt_summary(&sink.stored()),
                case.stored,
                "{}",
                case.name
            );
        }
    }
}

// ------------------------------------------------------ approval resolution

#[tokio::test]
async fn a_missing_or_failing_approval_declaration_resolves_to_exec() {
    for (tool, input, fn_calls) in [
        ("notes.exec", json!({"q": "x"}), 0),
        ("notes.badflag", json!({"dangerous": false}), 1),
    ] {
        let provider = TestProvider::approve_all();
        let policy = TestPolicy::allow_all();
        let ran = call(
            options().approval_provider(provider.clone()),
            &policy,
            tool,
            input,
        )
        .await;
        assert_eq!(ran.events[0].kind(), "result", "{tool}");
        assert_eq!(ran.f.approval_fn_calls.get(), fn_calls, "{tool}");
        assert_eq!(
            provider.seen()[0].approval,
            ApprovalSpec {
                tier: ApprovalTier::Exec,
                overridable: false,
                reason: Some("Missing or invalid approval declaration".into())
            },
            "{tool}"
        );
        assert_eq!(
            policy.seen()[1].resource.metadata["approvalTier"],
            "exec",
            "{tool}"
        );
    }
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
    let resolver = TestResolver::notes();
    let policy = TestPolicy::allow_all();
    let input = json!({"noteId": "n1", "text": "hello"});
    let ran = call(
        options()
            .resource_resolver(resolver.clone())
            .approval_provider(ApproveAll),
        &policy,
        "notes.edit",
        input.clone(),
    )
    .await;
    assert_eq!(
        ran.wire(),
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
    let receipt = authz(&ran.receipts()[1]).clone();
    assert_eq!(
        serde_json::to_value(&receipt.related_resources).unwrap(),
        json!([{"kind": "note", "target": "n1", "tenantId": "acme", "workspaceId": "ws-1"}])
    );
    assert_eq!(
        serde_json::to_value(&receipt.resource).unwrap(),
        json!({"kind": "tool", "target": "notes.edit"})
    );
}

/// A declared resource that cannot be resolved: `AUTH_RESOURCE_UNRESOLVED`,
/// a deny receipt with the reason, and the policy is not asked to invoke.
struct Unresolved {
    /// `None`: no resolver configured.
    resolver: Option<Arc<TestResolver>>,
    reason: &'static str,
    /// The redacted related resources of the deny receipt.
    related: Value,
    resolver_calls: usize,
}

#[tokio::test]
async fn a_resource_that_cannot_be_resolved_is_unresolved() {
    let cases = [
        Unresolved {
            resolver: Some(TestResolver::new(|_| Ok(None))),
            reason: "Resource not found",
            related: json!([]),
            resolver_calls: 1,
        },
        Unresolved {
            resolver: Some(TestResolver::new(|_| {
                Ok(Some(ResourceRef::new("folder").with_target("f1")))
            })),
            reason: "Resolved resource has kind folder, expected note",
            related: json!([{"kind": "folder", "target": "f1"}]),
            resolver_calls: 1,
        },
        Unresolved {
            resolver: Some(TestResolver::new(|_| Ok(Some(ResourceRef::new("note"))))),
            reason: "Resolved resource lacks required field target",
            related: json!([{"kind": "note"}]),
            resolver_calls: 1,
        },
        Unresolved {
            resolver: Some(TestResolver::new(|_| {
                Err(SecurityError::new("notes db timeout"))
            })),
            reason: "Resource resolver failed",
            related: json!([]),
            resolver_calls: 1,
        },
        Unresolved {
            resolver: None,
            reason: "Resource resolver not configured",
            related: json!([]),
            resolver_calls: 0,
        },
    ];
    for case in cases {
        let mut options = options().approval_provider(ApproveAll);
        if let Some(resolver) = &case.resolver {
            options = options.resource_resolver(resolver.clone());
        }
        let policy = TestPolicy::allow_all();
        let ran = call(
            options,
            &policy,
            "notes.edit",
            json!({"noteId": "n1", "text": "t"}),
        )
        .await;
        assert_eq!(
            ran.wire(),
            refused(
                "AUTH_RESOURCE_UNRESOLVED",
                "Required authorization resource could not be resolved"
            ),
            "{}",
            case.reason
        );
        assert_eq!(
            policy.actions(),
            ["tool.discover"],
            "{}: no invoke policy call",
            case.reason
        );
        assert_eq!(ran.f.handler.get(), 0, "{}", case.reason);
        let receipts = ran.receipts();
        assert_eq!(
            receipt_summary(&receipts),
            [
                s("authorization", "tool.discover", "allow"),
                s("authorization", "tool.invoke", "deny")
            ],
            "{}",
            case.reason
        );
        assert_eq!(authz(&receipts[1]).reason.as_deref(), Some(case.reason));
        assert_eq!(
            serde_json::to_value(&authz(&receipts[1]).related_resources).unwrap(),
            case.related,
            "{}",
            case.reason
        );
        assert_eq!(
            ran.metrics(),
            [metric(
                "notes.edit",
                MetricOutcome::Error,
                Some("AUTH_RESOURCE_UNRESOLVED")
            )],
            "{}",
            case.reason
        );
        let calls = case.resolver.as_ref().map_or(0, |r| r.calls());
        assert_eq!(calls, case.resolver_calls, "{}", case.reason);
    }
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

// ----------------------------------------------------------- approval gate

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
    // The details' exact shape is pinned in security_wire.rs.
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
        [metric(
            "notes.read",
            MetricOutcome::Aborted,
            Some("ABORTED")
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
