//! Principal validation, the security context keys (golden vectors),
//! approval resolution, wire forms of actions and receipts, and the
//! registry's security options (carried into derived registries).

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;

fn base() -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        "u1",
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
    )
}

#[test]
fn a_complete_principal_is_valid() {
    let p = alice_via_agent()
        .with_roles(["editor"])
        .with_scopes(["notes:write"])
        .with_linked_identity(PrincipalIdentity::new(
            "github",
            "alice-gh",
            AuthMethod::Oauth,
        ))
        .with_attribute("plan", json!("pro"))
        .with_expires_at(t0() + Duration::from_secs(60));
    assert_eq!(p.validate(), Ok(()));
    assert_eq!(p.validate_at(t0()), Ok(()));
    assert!(p.has_role("editor") && !p.has_role("admin"));
    assert!(p.has_scope("notes:write"));
}

#[test]
fn empty_id_issuer_or_subject_is_invalid() {
    let mut p = base();
    p.id = String::new();
    assert_eq!(p.validate(), Err(PrincipalError::EmptyField("id")));
    let mut p = base();
    p.identity.issuer = "  ".into();
    assert_eq!(
        p.validate(),
        Err(PrincipalError::EmptyField("identity.issuer"))
    );
    let mut p = base();
    p.identity.subject = String::new();
    assert_eq!(
        p.validate(),
        Err(PrincipalError::EmptyField("identity.subject"))
    );
    let p = base().with_delegation(Delegation::new(
        ActorKind::Agent,
        PrincipalIdentity::new("agents", "", AuthMethod::ServiceToken),
    ));
    assert_eq!(
        p.validate(),
        Err(PrincipalError::EmptyField("delegation.actor.subject"))
    );
}

#[test]
fn a_custom_method_needs_a_name() {
    let mut p = base();
    p.identity.method = AuthMethod::Custom(String::new());
    assert_eq!(
        p.validate(),
        Err(PrincipalError::UnnamedCustomMethod("identity.method"))
    );
    p.identity.method = AuthMethod::Custom("passkey".into());
    assert_eq!(p.validate(), Ok(()));
    // `custom:` parses (so validation can report it); unknown names do not.
    assert_eq!(
        "custom:".parse::<AuthMethod>(),
        Ok(AuthMethod::Custom(String::new()))
    );
    assert!("password".parse::<AuthMethod>().is_err());
}

#[test]
fn an_actor_session_id_when_present_must_not_be_empty() {
    let delegation = Delegation::new(
        ActorKind::Agent,
        PrincipalIdentity::new("agents", "a7", AuthMethod::ServiceToken),
    );
    assert_eq!(
        base().with_delegation(delegation.clone()).validate(),
        Ok(())
    );
    assert_eq!(
        base()
            .with_delegation(delegation.with_actor_session_id(""))
            .validate(),
        Err(PrincipalError::EmptyField("delegation.actorSessionId"))
    );
}

#[test]
fn an_expired_principal_fails_validate_at() {
    let p = base().with_expires_at(t0());
    assert_eq!(p.validate(), Ok(()), "structure alone is fine");
    assert_eq!(p.validate_at(t0()), Err(PrincipalError::Expired));
    assert_eq!(p.validate_at(t0() - Duration::from_secs(1)), Ok(()));
}

#[test]
fn auth_methods_have_their_wire_names() {
    let all = [
        (AuthMethod::Session, "session"),
        (AuthMethod::Oauth, "oauth"),
        (AuthMethod::ServiceToken, "service-token"),
        (AuthMethod::ApiKey, "api-key"),
        (AuthMethod::Mtls, "mtls"),
        (AuthMethod::Tailnet, "tailnet"),
        (AuthMethod::TransportAccount, "transport-account"),
        (AuthMethod::Local, "local"),
        (AuthMethod::Custom("passkey".into()), "custom:passkey"),
    ];
    for (method, wire) in all {
        assert_eq!(serde_json::to_value(&method).unwrap(), json!(wire));
        assert_eq!(
            serde_json::from_value::<AuthMethod>(json!(wire)).unwrap(),
            method
        );
    }
}

#[test]
fn a_principal_round_trips_through_camel_case_json() {
    let p = alice_via_agent()
        .with_expires_at(t0())
        .with_attribute("plan", json!("pro"));
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(
        keys(&v),
        [
            "attributes",
            "delegation",
            "expiresAt",
            "id",
            "identity",
            "kind",
            "tenantId",
            "workspaceId"
        ]
    );
    assert_eq!(v["expiresAt"], "2026-01-01T00:00:00.000Z");
    assert_eq!(v["delegation"]["actorKind"], "agent");
    assert_eq!(v["delegation"]["actorSessionId"], "sess-9");
    assert_eq!(v["identity"]["method"], "oauth");
    let back: AuthenticatedPrincipal = serde_json::from_value(v).unwrap();
    assert_eq!(back, p);
}

// Golden vectors computed independently (Python hashlib/base64/json):
// key = prefix ":v1:" + base64url_nopad(sha256("gonk-auth:" prefix ":v1\0" + canonical JSON)).
#[test]
fn keys_match_the_golden_vectors() {
    let plain = AuthenticatedPrincipal::new(
        "any-id",
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
    );
    assert_eq!(
        security_context_key(&plain),
        "gsk:v1:lvQENEVTK-38lljoj1QrVzVA35Bxjpb_VdwsJwXQJmI"
    );
    assert_eq!(
        persistent_grant_key(&plain),
        "gpg:v1:BEcVWCzsbeeEB44zJLbvoDwWPgOMYP1E9q_CZ6Q5vlg"
    );

    let delegated = alice_via_agent();
    assert_eq!(
        security_context_key(&delegated),
        "gsk:v1:M68acqbk9gILNNvLsQTzpZ7WBPbq9igexfjQBoM3W8g"
    );
    assert_eq!(
        persistent_grant_key(&delegated),
        "gpg:v1:vjahbY7KphLNVG5N8oGmn6HoWilubiDdm9SKLow5H4c"
    );

    let local = AuthenticatedPrincipal::new(
        "l",
        PrincipalKind::Local,
        PrincipalIdentity::new("local", "Zoë \"z\"", AuthMethod::Local),
    )
    .with_tenant("té")
    .with_delegation(Delegation::new(
        ActorKind::Service,
        PrincipalIdentity::new("svc", "cron", AuthMethod::ServiceToken),
    ));
    assert_eq!(
        security_context_key(&local),
        "gsk:v1:asl_Y4dts5mD_PaBt7823D_y6BdHP_5VAPOsuYcfc1k"
    );
    assert_eq!(
        persistent_grant_key(&local),
        "gpg:v1:Q0UQ1bjMA02jH480Ellvo8u31eGUTF1x3KQqv5g26wI"
    );
}

#[test]
fn the_actor_session_changes_the_gsk_key_but_not_the_gpg_key() {
    let mut other_session = alice_via_agent();
    other_session.delegation.as_mut().unwrap().actor_session_id = Some("sess-10".into());
    assert_eq!(
        security_context_key(&other_session),
        "gsk:v1:A6BCiIUeBvDVN2B0ax_7nShedEhJwOKPow0jfiZSvYU"
    );
    assert_eq!(
        persistent_grant_key(&other_session),
        persistent_grant_key(&alice_via_agent())
    );
}

#[test]
fn keys_cover_subject_kind_tenant_workspace_and_nothing_else() {
    let p = alice();
    let key = security_context_key(&p);
    // Not part of the key: id, method, roles, scopes, attributes, expiry, linked identities.
    let mut same = p.clone();
    same.id = "other-id".into();
    same.identity.method = AuthMethod::ApiKey;
    same.roles = vec!["admin".into()];
    same.scopes = vec!["all".into()];
    same.attributes.insert("x".into(), json!(1));
    same.expires_at = Some(t0());
    same.linked_identities
        .push(PrincipalIdentity::new("gh", "a", AuthMethod::Oauth));
    assert_eq!(security_context_key(&same), key);
    // Part of it: each of these changes it.
    let variants = [
        p.clone().with_tenant("globex"),
        p.clone().with_workspace("ws-2"),
        {
            let mut v = p.clone();
            v.kind = PrincipalKind::Service;
            v
        },
        {
            let mut v = p.clone();
            v.identity.issuer = "https://other.example".into();
            v
        },
        {
            let mut v = p.clone();
            v.tenant_id = None;
            v
        },
    ];
    for v in variants {
        assert_ne!(security_context_key(&v), key, "{v:?}");
        assert_ne!(persistent_grant_key(&v), persistent_grant_key(&p));
    }
}

#[test]
fn actions_have_their_wire_forms() {
    assert_eq!(AuthorizationAction::Discover.to_string(), "tool.discover");
    assert_eq!(AuthorizationAction::Invoke.to_string(), "tool.invoke");
    let app = AuthorizationAction::Application("export".into());
    assert_eq!(
        serde_json::to_value(&app).unwrap(),
        json!("application:export")
    );
    assert_eq!(AuthorizationAction::parse("application:export"), Some(app));
    assert_eq!(AuthorizationAction::parse("application:"), None);
    assert_eq!(AuthorizationAction::parse("tool.delete"), None);
}

#[test]
fn approval_resolution_falls_back_to_exec() {
    use gonk_tools::definition::Approval;
    let fallback = ApprovalSpec {
        tier: ApprovalTier::Exec,
        overridable: false,
        reason: Some("Missing or invalid approval declaration".into()),
    };
    assert_eq!(resolve_approval(None, &json!({})), fallback);
    let failing = Approval::Dynamic(Arc::new(|_| Err("no".into())));
    assert_eq!(resolve_approval(Some(&failing), &json!({})), fallback);
    let panicking = Approval::Dynamic(Arc::new(|_| panic!("approval fn exploded")));
    assert_eq!(resolve_approval(Some(&panicking), &json!({})), fallback);
    let by_input = Approval::Dynamic(Arc::new(|input| {
        Ok(ApprovalTier::parse(input["tier"].as_str().unwrap_or(""))
            .ok_or("bad tier")?
            .into())
    }));
    assert_eq!(
        resolve_approval(Some(&by_input), &json!({"tier": "write"})).tier,
        ApprovalTier::Write
    );
    let fixed: Approval = ApprovalSpec {
        tier: ApprovalTier::Read,
        overridable: true,
        reason: Some("listing".into()),
    }
    .into();
    let spec = resolve_approval(Some(&fixed), &json!(null));
    assert_eq!((spec.tier, spec.overridable), (ApprovalTier::Read, true));
}

#[test]
fn redaction_keeps_kind_target_tenant_workspace_only() {
    let r = ResourceRef::new("note")
        .with_target("n1")
        .with_scope("notes")
        .with_tenant("acme")
        .with_workspace("ws-1")
        .with_metadata("secret", json!("s3cr3t"));
    let v = serde_json::to_value(r.redacted()).unwrap();
    assert_eq!(
        v,
        json!({"kind": "note", "target": "n1", "tenantId": "acme", "workspaceId": "ws-1"})
    );
    let bare = serde_json::to_value(ResourceRef::new("note").redacted()).unwrap();
    assert_eq!(bare, json!({"kind": "note"}));
}

#[test]
fn security_options_default_to_enforce_without_components() {
    let options = SecurityOptions::new();
    assert_eq!(options.mode(), ApprovalMode::Enforce);
    assert!(!options.has_approval_provider());
    assert!(!options.has_resource_resolver());
    assert!(!options.has_audit_sink());
    assert!(!options.is_mandatory_audit());
    let a = options.next_request_id();
    let b = options.next_request_id();
    assert!(a.starts_with("req-") && a != b, "{a} {b}");
    let registry = ToolRegistry::new();
    assert_eq!(registry.security().mode(), ApprovalMode::Enforce);
}

#[tokio::test]
async fn merge_extract_and_filter_keep_the_security_options() {
    let audit = Arc::new(InMemoryAuditSink::new());
    let f = fixture(
        options()
            .audit_sink(audit.clone())
            .approval_mode(ApprovalMode::Bypass)
            .mandatory_audit(true),
    );
    let other = ToolRegistry::new();
    other
        .register(
            ToolDefinition::builder("other.tool")
                .description("Another.")
                .approval(ApprovalTier::Read)
                .handler(|_: serde_json::Value, _| async { Ok::<_, ToolError>(1) })
                .build(),
        )
        .unwrap();
    let derived = [
        f.registry.merge(&other).unwrap(),
        f.registry.extract(["notes.exec"]).unwrap(),
        f.registry.filter(|d| d.name == "notes.exec"),
    ];
    for (i, registry) in derived.iter().enumerate() {
        assert!(registry.security().is_mandatory_audit());
        assert_eq!(registry.security().mode(), ApprovalMode::Bypass);
        audit.clear();
        let policy = TestPolicy::allow_all();
        // Bypass: the exec tool runs without a provider; receipts go to the same sink.
        let events = run(
            registry,
            "notes.exec",
            json!({"q": "x"}),
            auth(alice(), &policy),
        )
        .await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind(), "result", "registry {i}: {events:?}");
        assert_eq!(
            receipt_summary(&audit.snapshot()),
            [
                s("authorization", "tool.discover", "allow"),
                s("authorization", "tool.invoke", "allow")
            ]
        );
        // The request id comes from the shared generator: it keeps counting.
        assert_eq!(audit.snapshot()[0].request_id(), format!("req-{}", i + 1));
    }
}

#[test]
fn receipts_serialize_flat_with_a_kind_tag() {
    let base = Arc::new(ReceiptBase::new(&alice_via_agent(), "gsk:v1:x"));
    let receipt = AuditReceipt::Approval(ApprovalReceipt {
        request_id: "req-1".into(),
        base: base.clone(),
        timestamp: t0(),
        approval_request_id: Some("apr-1".into()),
        tool_name: "notes.write".into(),
        approval_tier: ApprovalTier::Write,
        outcome: ApprovalOutcome::Required,
        reason: Some("Needs a human".into()),
        grant_id: None,
        grant_scope: None,
        consent: None,
    });
    let v = serde_json::to_value(&receipt).unwrap();
    assert_eq!(
        keys(&v),
        [
            "actorId",
            "actorIssuer",
            "actorSessionId",
            "actorSubject",
            "approvalRequestId",
            "approvalTier",
            "kind",
            "outcome",
            "principalId",
            "reason",
            "requestId",
            "securityContextKey",
            "subjectId",
            "subjectIssuer",
            "tenantId",
            "timestamp",
            "toolName",
            "workspaceId"
        ]
    );
    assert_eq!(v["kind"], "approval");
    assert_eq!(v["timestamp"], "2026-01-01T00:00:00.000Z");
    assert_eq!(v["actorSubject"], "agent-7");
    let back: AuditReceipt = serde_json::from_value(v).unwrap();
    assert_eq!(back, receipt);
}
