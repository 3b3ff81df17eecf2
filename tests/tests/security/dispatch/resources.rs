//! Resource resolution: a declared resource reaches the policy and the
//! receipt (redacted); one that cannot be resolved is unresolved; every
//! declared required field is checked; without auth nothing is resolved.

use std::sync::Arc;

use gonk_tools::definition::AuthorizationResource;
use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

use super::authz;

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
            // The contract's reason; as for every unresolved resource, the
            // receipt lists no related resources (the wrong kind included).
            reason: "Required authorization resource could not be resolved",
            related: json!([]),
            resolver_calls: 1,
        },
        Unresolved {
            resolver: Some(TestResolver::new(|_| Ok(Some(ResourceRef::new("note"))))),
            reason: "Required authorization resource could not be resolved",
            related: json!([]),
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
    // The contract's reason; as in the seed, an unresolved resource's
    // receipt lists no related resources (not even the half-resolved one).
    let receipt = authz(&audit.snapshot()[1]).clone();
    assert_eq!(
        receipt.reason.as_deref(),
        Some("Required authorization resource could not be resolved")
    );
    assert_eq!(
        serde_json::to_value(&receipt.related_resources).unwrap(),
        json!([])
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
