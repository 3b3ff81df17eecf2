//! Approval resolution: a tool's approval tier, resolved from the validated
//! input; a missing or failing declaration resolves to `exec`.

use gonk_tools::prelude::*;
use gonk_tools_tests::security::*;

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
