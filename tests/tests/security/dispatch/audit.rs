//! Mandatory audit: a mandatory receipt that cannot be written stops the
//! call, at whichever gate it was due.

use std::sync::Arc;

use gonk_tools::metrics::MetricOutcome;
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

use super::{deny_invoke, failing_invoke_receipts};

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
