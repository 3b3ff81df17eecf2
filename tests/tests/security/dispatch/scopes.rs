//! Required OAuth scopes (step 3b, `docs/contract.md#scopes`): a token
//! without a scope the tool requires is refused before its input is looked
//! at, with a receipt and nothing run; composed calls are checked too; the
//! tool stays listed; `insufficient_scope` answers for HTTP surfaces and
//! never reveals a hidden tool's scopes; principals whose scopes are not
//! enforced pass; scope rules of the registry builder assign scopes by
//! policy.

use std::sync::Arc;

use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools::RegistryError;
use gonk_tools_tests::security::*;
use serde_json::Value;

use super::{authz, deny_discover_of, not_found};

/// A registry with `notes.create` (requires `notes:write`), `notes.find`
/// (requires `notes:read`) and `notes.tally` (requires nothing), each
/// counting its runs, receipts in `audit`.
struct Scoped {
    registry: ToolRegistry,
    runs: Counter,
    audit: Arc<InMemoryAuditSink>,
}

fn scoped() -> Scoped {
    scoped_with(ToolRegistry::builder())
}

fn scoped_with(builder: gonk_tools::registry::ToolRegistryBuilder) -> Scoped {
    let audit = Arc::new(InMemoryAuditSink::new());
    let registry = builder
        .security(options().audit_sink(audit.clone()))
        .build();
    let runs = Counter::default();
    let tool = |name: &str, scopes: &[&str]| {
        let r = runs.clone();
        ToolDefinition::builder(name)
            .description("A notes tool.")
            .approval(ApprovalTier::Read)
            .scopes(scopes.iter().copied())
            .handler(move |i: Query, _ctx| {
                r.hit();
                async move { Ok::<_, ToolError>(json!({"done": i.q})) }
            })
            .build()
    };
    registry
        .register_all([
            tool("notes.create", &["notes:write"]),
            tool("notes.find", &["notes:read"]),
            tool("notes.tally", &[]),
        ])
        .unwrap();
    Scoped {
        registry,
        runs,
        audit,
    }
}

fn token(scopes: &[&str]) -> AuthenticatedPrincipal {
    alice().with_scopes(scopes.iter().copied())
}

#[tokio::test]
async fn a_token_without_the_scope_is_refused_before_anything_runs() {
    let s = scoped();
    let policy = TestPolicy::allow_all();
    // Invalid input on purpose (`q` must not be empty): validation must
    // not run, and the input must reach no receipt.
    let events = run(
        &s.registry,
        "notes.create",
        json!({"q": "", "secret": "TOP-SECRET-TITLE"}),
        auth(token(&["notes:read"]), &policy),
    )
    .await;

    let error = error_of(&events);
    assert_eq!(error.code, ErrorCode::InsufficientScope);
    assert_eq!(
        error.message,
        "Insufficient scope: notes.create needs the OAuth scope notes:write, which this token \
         does not grant; authorize again asking for notes:write"
    );
    assert_eq!(
        error.details,
        Some(json!({"missingScopes": ["notes:write"], "requiredScopes": ["notes:write"]}))
    );
    assert_eq!(s.runs.get(), 0, "nothing ran");
    assert_eq!(policy.actions(), ["tool.discover"], "invoke was not asked");

    let receipts = s.audit.snapshot();
    assert_eq!(
        receipt_summary(&receipts),
        [
            s_("authorization", "tool.discover", "allow"),
            s_("authorization", "tool.invoke", "deny")
        ]
    );
    let refusal = authz(&receipts[1]);
    assert_eq!(
        refusal.reason.as_deref(),
        Some("Insufficient scope: missing notes:write")
    );
    assert_eq!(refusal.tool_name.as_ref(), "notes.create");
    assert_eq!(&*refusal.base.subject_id, "alice");
    assert!(refusal.related_resources.is_empty());
    let text = serde_json::to_string(&receipts).unwrap();
    assert!(
        !text.contains("TOP-SECRET-TITLE"),
        "no input in receipts: {text}"
    );
    // Redacted as every receipt: the tool's kind and name, no metadata.
    assert_eq!(
        serde_json::to_value(&refusal.resource).unwrap(),
        json!({"kind": "tool", "target": "notes.create"})
    );
}

fn s_(a: &str, b: &str, c: &str) -> (String, String, String) {
    s(a, b, c)
}

#[tokio::test]
async fn a_token_with_the_scope_runs_and_every_missing_scope_is_named() {
    let s = scoped();
    let policy = TestPolicy::allow_all();
    let ok = run(
        &s.registry,
        "notes.create",
        json!({"q": "plans"}),
        auth(token(&["notes:read", "notes:write"]), &policy),
    )
    .await;
    assert_eq!(
        wire(&ok),
        json!([{"type": "result", "data": {"done": "plans"}}])
    );
    assert_eq!(s.runs.get(), 1);

    // Two required, none granted: both named, in declaration order.
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("notes.move")
                .description("Move a note.")
                .scopes(["notes:write", "folders:write"])
                .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>(()) })
                .build(),
        )
        .unwrap();
    let events = run(
        &registry,
        "notes.move",
        json!({}),
        auth(token(&["notes:read"]), &policy),
    )
    .await;
    let error = error_of(&events);
    assert_eq!(error.code, ErrorCode::InsufficientScope);
    assert!(
        error
            .message
            .contains("needs the OAuth scopes notes:write folders:write"),
        "{}",
        error.message
    );
    assert_eq!(
        error.details.unwrap()["missingScopes"],
        json!(["notes:write", "folders:write"])
    );
}

/// Whose scopes are enforced: OAuth principals always (no scopes = none,
/// fail closed), any principal whose credential carries scopes; not a
/// principal of another method without scopes, nor the trusted path.
#[tokio::test]
async fn scopes_bind_oauth_tokens_and_scoped_credentials_only() {
    let principal = |method: AuthMethod, scopes: &[&str]| {
        AuthenticatedPrincipal::new(
            "p1",
            PrincipalKind::Service,
            PrincipalIdentity::new("issuer", "p1", method),
        )
        .with_scopes(scopes.iter().copied())
    };
    let cases: [(&str, Option<AuthenticatedPrincipal>, Option<&str>); 6] = [
        (
            "an OAuth token without scopes",
            Some(principal(AuthMethod::Oauth, &[])),
            Some("INSUFFICIENT_SCOPE"),
        ),
        (
            "an OAuth token with another scope",
            Some(principal(AuthMethod::Oauth, &["notes:read"])),
            Some("INSUFFICIENT_SCOPE"),
        ),
        (
            "a service token carrying other scopes",
            Some(principal(AuthMethod::ServiceToken, &["jobs:run"])),
            Some("INSUFFICIENT_SCOPE"),
        ),
        (
            "the static API key (no scopes)",
            Some(principal(AuthMethod::ApiKey, &[])),
            None,
        ),
        (
            "a local user (no scopes)",
            Some(principal(AuthMethod::Local, &[])),
            None,
        ),
        ("the trusted in-process path", None, None),
    ];
    for (name, principal, refused_with) in cases {
        let s = scoped();
        let policy = TestPolicy::allow_all();
        let ctx = match principal {
            Some(principal) => auth(principal, &policy),
            None => ToolContext::new(),
        };
        let events = run(&s.registry, "notes.create", json!({"q": "x"}), ctx).await;
        let outcome = events.last().unwrap();
        match refused_with {
            Some(code) => {
                assert_eq!(
                    outcome.as_error().map(|e| e.code.to_string()).as_deref(),
                    Some(code),
                    "{name}"
                );
                assert_eq!(s.runs.get(), 0, "{name}: nothing ran");
            }
            None => {
                assert!(outcome.as_error().is_none(), "{name}: {outcome:?}");
                assert_eq!(s.runs.get(), 1, "{name}");
            }
        }
        // A tool without scopes serves everyone.
        let tally = run(
            &s.registry,
            "notes.tally",
            json!({"q": "x"}),
            auth(token(&[]), &policy),
        )
        .await;
        assert!(tally.last().unwrap().as_error().is_none(), "{name}");
    }
}

#[tokio::test]
async fn a_tool_needing_a_scope_stays_listed() {
    let s = scoped();
    let policy = TestPolicy::allow_all();
    let ctx = auth(token(&["notes:read"]), &policy);
    let listed: Vec<String> = s
        .registry
        .list_discoverable(&ctx)
        .await
        .iter()
        .map(|d| d.name.clone())
        .collect();
    assert_eq!(listed, ["notes.create", "notes.find", "notes.tally"]);
    let no_scopes = auth(token(&[]), &policy);
    assert_eq!(s.registry.list_discoverable(&no_scopes).await.len(), 3);
}

#[tokio::test]
async fn insufficient_scope_names_what_is_missing_and_records_the_refusal() {
    let s = scoped();
    let policy = TestPolicy::allow_all();
    let reader = AuthContext::new(token(&["notes:read"]), policy.clone());
    assert_eq!(
        s.registry.insufficient_scope(&reader, "notes.create").await,
        Some(vec!["notes:write".to_owned()])
    );
    assert_eq!(
        receipt_summary(&s.audit.snapshot()),
        [
            s_("authorization", "tool.discover", "allow"),
            s_("authorization", "tool.invoke", "deny")
        ],
        "the 403 leaves the receipts a refused call leaves"
    );
    // Nothing missing: None, and no receipt at all.
    for tool in ["notes.find", "notes.tally"] {
        assert_eq!(s.registry.insufficient_scope(&reader, tool).await, None);
    }
    let api_key = AuthContext::new(
        AuthenticatedPrincipal::new(
            "k1",
            PrincipalKind::Service,
            PrincipalIdentity::new("notes-api-key", "k1", AuthMethod::ApiKey),
        ),
        policy.clone(),
    );
    assert_eq!(
        s.registry
            .insufficient_scope(&api_key, "notes.create")
            .await,
        None
    );
    assert_eq!(s.audit.snapshot().len(), 2);
    assert_eq!(s.runs.get(), 0);
}

/// Hidden ≡ missing: a hidden tool, an unknown name and an invalid
/// principal all give `None`, and dispatch answers a hidden scoped tool
/// exactly as a missing one — never `INSUFFICIENT_SCOPE`.
#[tokio::test]
async fn a_hidden_tool_never_reveals_its_scopes() {
    let s = scoped();
    let policy = deny_discover_of("notes.create");
    let reader = AuthContext::new(token(&["notes:read"]), policy.clone());
    assert_eq!(
        s.registry.insufficient_scope(&reader, "notes.create").await,
        None
    );
    assert_eq!(
        s.registry.insufficient_scope(&reader, "notes.nope").await,
        None
    );
    let mut invalid = token(&[]);
    invalid.identity.subject = String::new();
    let invalid = AuthContext::new(invalid, TestPolicy::allow_all());
    assert_eq!(
        s.registry
            .insufficient_scope(&invalid, "notes.create")
            .await,
        None
    );
    let hidden = run(
        &s.registry,
        "notes.create",
        json!({"q": "x"}),
        ToolContext::new().with_auth(reader),
    )
    .await;
    assert_eq!(wire(&hidden), not_found("notes.create"));
    let missing = run(
        &s.registry,
        "notes.nope",
        json!({"q": "x"}),
        auth(token(&["notes:read"]), &policy),
    )
    .await;
    assert_eq!(wire(&missing), not_found("notes.nope"));
    // The discover denies are the only receipts: no scope refusal.
    let actions: Vec<String> = s
        .audit
        .snapshot()
        .iter()
        .map(|r| authz(r).action.to_string())
        .collect();
    assert!(actions.iter().all(|a| a == "tool.discover"), "{actions:?}");
    assert_eq!(s.runs.get(), 0);
}

/// A composed call is checked with the root's token: a read tool cannot
/// reach a write tool for a token without the write scope.
#[tokio::test]
async fn a_composed_call_needs_the_scope_too() {
    let s = scoped();
    let parent_runs = Counter::default();
    let p = parent_runs.clone();
    s.registry
        .register(
            ToolDefinition::builder("notes.copy")
                .description("Copy a note (composes notes.create).")
                .approval(ApprovalTier::Read)
                .scopes(["notes:read"])
                .handler(move |_: NoInput, ctx: ToolContext| {
                    p.hit();
                    async move {
                        let child = collect_tool_outcome(
                            ctx.invoke("notes.create", json!({"q": "copy"})),
                            |_| {},
                        )
                        .await;
                        Ok::<_, ToolError>(json!({ "child": child.err().map(|e| e.code) }))
                    }
                })
                .build(),
        )
        .unwrap();
    let policy = TestPolicy::allow_all();
    let events = run(
        &s.registry,
        "notes.copy",
        json!({}),
        auth(token(&["notes:read"]), &policy),
    )
    .await;
    assert_eq!(
        wire(&events),
        json!([{"type": "result", "data": {"child": "INSUFFICIENT_SCOPE"}}])
    );
    assert_eq!(parent_runs.get(), 1);
    assert_eq!(s.runs.get(), 0, "the child did not run");
    let receipts = s.audit.snapshot();
    let last = authz(receipts.last().unwrap());
    assert_eq!(last.tool_name.as_ref(), "notes.create");
    assert_eq!(
        last.reason.as_deref(),
        Some("Insufficient scope: missing notes:write")
    );
    // The child's refusal shares the root's request id.
    assert_eq!(last.request_id, authz(&receipts[0]).request_id);
}

#[tokio::test]
async fn a_missing_mandatory_receipt_stops_the_refusal_with_audit_failed() {
    let sink = TestSink::failing_when(|r| {
        r.as_authorization()
            .is_some_and(|a| a.action == AuthorizationAction::Invoke)
    });
    let registry = ToolRegistry::builder()
        .security(options().audit_sink(sink.clone()).mandatory_audit(true))
        .build();
    registry
        .register(
            ToolDefinition::builder("notes.create")
                .description("Create a note.")
                .scopes(["notes:write"])
                .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>(()) })
                .build(),
        )
        .unwrap();
    let events = run(
        &registry,
        "notes.create",
        json!({}),
        auth(token(&[]), &TestPolicy::allow_all()),
    )
    .await;
    assert_eq!(error_of(&events).code, ErrorCode::AuthAuditFailed);
}

/// The registry builder's rules assign scopes by policy, on every way in:
/// one by one, a source catalog, a merge; declared scopes are kept and
/// none is repeated; dispatch enforces them.
#[tokio::test]
async fn scope_rules_assign_scopes_by_policy() {
    let is_write = |def: &ToolDefinition| {
        matches!(
            &def.approval,
            Some(gonk_tools::definition::Approval::Static(spec)) if spec.tier == ApprovalTier::Write
        )
    };
    let builder = ToolRegistry::builder()
        .scopes_for(is_write, ["notes:write"])
        .scopes_for(|def| def.name.starts_with("notes."), ["notes"]);
    let s = scoped_with(builder);
    let tool = |name: &str, tier: ApprovalTier, scopes: &[&str]| {
        ToolDefinition::builder(name)
            .description("A tool.")
            .approval(tier)
            .scopes(scopes.iter().copied())
            .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("ran") })
            .build()
    };
    let archive = tool("notes.archive", ApprovalTier::Write, &["notes:write"]);
    s.registry.register(archive.clone()).unwrap();
    s.registry
        .replace_source(
            "remote",
            [tool(
                "remote.delete",
                ApprovalTier::Write,
                &["remote:admin"],
            )],
        )
        .unwrap();
    let other = ToolRegistry::new();
    other
        .register(tool("peek", ApprovalTier::Read, &[]))
        .unwrap();
    let merged = s.registry.merge(&other).unwrap();

    let scopes = |name: &str| merged.get(name).unwrap().required_scopes().to_vec();
    assert_eq!(scopes("notes.archive"), ["notes:write", "notes"]);
    assert_eq!(scopes("remote.delete"), ["remote:admin", "notes:write"]);
    assert_eq!(scopes("notes.create"), ["notes:write", "notes"]);
    assert_eq!(scopes("notes.tally"), ["notes"]);
    assert!(scopes("peek").is_empty());
    // The caller's own definition is unchanged: the registry stores a copy.
    assert_eq!(archive.required_scopes(), ["notes:write"]);

    let policy = TestPolicy::allow_all();
    let refused = run(
        &s.registry,
        "remote.delete",
        json!({}),
        auth(token(&["remote:admin"]), &policy),
    )
    .await;
    assert_eq!(
        error_of(&refused).details.unwrap()["missingScopes"],
        json!(["notes:write"])
    );
    let ran = run(
        &s.registry,
        "notes.create",
        json!({"q": "plans"}),
        auth(token(&["notes:write", "notes"]), &policy),
    )
    .await;
    assert_eq!(
        wire(&ran),
        json!([{"type": "result", "data": {"done": "plans"}}])
    );
}

#[test]
fn a_scope_that_breaks_the_rule_refuses_the_registration() {
    let tool = |name: &str| {
        ToolDefinition::builder(name)
            .description("A tool.")
            .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>(()) })
    };
    for (scope, says) in [
        ("notes write", "whitespace"),
        ("", "empty"),
        ("notes\"write", "contains `\"`"),
        ("notés", "contains `é`"),
    ] {
        let error = ToolRegistry::new()
            .register(tool("t").scopes([scope]).build())
            .unwrap_err();
        let RegistryError::InvalidScope {
            name,
            scope: bad,
            reason,
        } = &error
        else {
            panic!("{scope:?}: {error:?}");
        };
        assert_eq!((name.as_str(), bad.as_str()), ("t", scope));
        assert!(reason.contains(says), "{scope:?}: {reason}");
    }
    // A rule's scope is checked on each tool it picks.
    let registry = ToolRegistry::builder()
        .scopes_for(|_| true, ["bad scope"])
        .build();
    let error = registry.register(tool("t").build()).unwrap_err();
    assert!(
        error.to_string().starts_with("Tool t requires an invalid OAuth scope: the OAuth scope `bad scope` contains whitespace"),
        "{error}"
    );
    assert!(registry.list().is_empty());
}

#[test]
fn the_macro_declares_scopes() {
    /// Create a note.
    #[tool(name = "notes.create", scopes("notes:write", "notes:admin"))]
    async fn notes_create(_input: NoInput) -> Value {
        Value::Null
    }
    assert_eq!(
        NotesCreate::definition().required_scopes(),
        ["notes:write", "notes:admin"]
    );
}
