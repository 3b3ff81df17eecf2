//! Definitions: every metadata field is settable through the builder and
//! reads back from the definition; the tracing logger emits structured
//! fields.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use gonk_tools::context::TracingLog;
use gonk_tools::definition::{
    Approval, AuthorizationResource, AuthorizationSpec, CapabilityStatus, CliHints, Cost, Latency,
    McpAnnotations, McpHints, PiHints,
};
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Rename {
    /// The note id.
    id: String,
    /// The new title.
    #[schemars(length(min = 1, max = 200))]
    title: String,
}

#[derive(Serialize, JsonSchema)]
struct Renamed {
    id: String,
    title: String,
}

#[test]
fn every_field_reads_back() {
    let degraded = Arc::new(AtomicBool::new(false));
    let probe = degraded.clone();
    let def = ToolDefinition::builder("notes.rename")
        .description("Rename a note.")
        .category("notes")
        .visibility(Visibility::Always)
        .validate_output(ValidateOutput::Strict)
        .capabilities(Capabilities {
            writes_fs: true,
            idempotent: true,
            ..Default::default()
        })
        .tags(["notes", "write"])
        .keywords(["title"])
        .related_to(["notes.get"])
        .cost(Cost::Low)
        .latency(Latency::Instant)
        .cli(CliHints {
            command: Some("rename".into()),
            positional: vec!["id".into(), "title".into()],
            aliases: vec!["mv".into()],
            examples: vec!["rename 1 Hello".into()],
        })
        .mcp(McpHints {
            mcp_name: Some("rename_note".into()),
            visibility: None,
            annotations: McpAnnotations {
                destructive: Some(false),
                ..Default::default()
            },
        })
        .pi(PiHints {
            pi_name: Some("rename".into()),
            requires_approval: Some(true),
            status_glyph: Some("✎".into()),
            ..Default::default()
        })
        .approval(ApprovalSpec {
            tier: ApprovalTier::Write,
            overridable: true,
            reason: Some("changes a title".into()),
        })
        .authorization(AuthorizationSpec {
            auth_level: Some("user".into()),
            required_role: Some("editor".into()),
            allowed_callers: vec!["notes.bulk".into()],
        })
        .authorization_resource(AuthorizationResource::new("note"))
        .requires(|| true)
        .capability_for(move || {
            if probe.load(Ordering::SeqCst) {
                CapabilityStatus::Degraded
            } else {
                CapabilityStatus::Available
            }
        })
        .degraded_description("Rename a note (read-only store: fails).")
        .output_schema_for::<Renamed>()
        .handler(|input: Rename, _| async move {
            Ok::<_, ToolError>(Renamed {
                id: input.id,
                title: input.title,
            })
        })
        .build();

    assert_eq!(def.name, "notes.rename");
    assert_eq!(def.category.as_deref(), Some("notes"));
    assert_eq!(def.visibility, Visibility::Always);
    assert_eq!(def.validate_output, ValidateOutput::Strict);
    assert!(def.capabilities.writes_fs && def.capabilities.idempotent && !def.capabilities.duplex);
    assert_eq!(def.tags, ["notes", "write"]);
    assert_eq!(def.keywords, ["title"]);
    assert_eq!(def.related_to, ["notes.get"]);
    assert_eq!(def.cost, Some(Cost::Low));
    assert_eq!(def.latency, Some(Latency::Instant));
    assert_eq!(def.hints.cli.positional, ["id", "title"]);
    assert_eq!(def.hints.mcp.mcp_name.as_deref(), Some("rename_note"));
    assert_eq!(def.hints.pi.status_glyph.as_deref(), Some("✎"));
    assert!(
        matches!(&def.approval, Some(Approval::Static(spec)) if spec.tier == ApprovalTier::Write && spec.overridable)
    );
    assert_eq!(
        def.authorization.as_ref().unwrap().required_role.as_deref(),
        Some("editor")
    );
    assert_eq!(
        def.authorization_resource.as_ref().unwrap().required_fields,
        ["target"]
    );
    assert!(def.requirements_met());
    assert_eq!(def.input_schema["properties"]["title"]["maxLength"], 200);
    assert_eq!(
        def.input_schema["properties"]["id"]["description"],
        "The note id."
    );
    assert_eq!(
        def.output_schema.as_ref().unwrap()["properties"]["id"]["type"],
        "string"
    );
    assert!(def.input_json_schema.is_none());

    assert_eq!(def.advertised_description(), "Rename a note.");
    degraded.store(true, Ordering::SeqCst);
    assert_eq!(
        def.advertised_description(),
        "Rename a note (read-only store: fails)."
    );
}

#[test]
fn metadata_serializes_in_its_wire_casing() {
    let caps = Capabilities {
        reads_fs: true,
        long_running: true,
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_value(caps).unwrap(),
        json!({"readsFs": true, "longRunning": true})
    );
    let spec = ApprovalSpec {
        tier: ApprovalTier::Exec,
        overridable: false,
        reason: None,
    };
    assert_eq!(
        serde_json::to_value(spec).unwrap(),
        json!({"tier": "exec", "override": false})
    );
    assert_eq!(
        serde_json::to_value(Visibility::OnDemand).unwrap(),
        json!("on-demand")
    );
    assert_eq!(Visibility::default(), Visibility::OnDemand);
    assert_eq!(ValidateOutput::default(), ValidateOutput::Off);
}

#[test]
fn dynamic_approval_sees_the_typed_input() {
    #[derive(Deserialize)]
    struct Input {
        force: bool,
    }
    let def = ToolDefinition::builder("rm")
        .description("Remove.")
        .approval_with(|input: &Input| {
            if input.force {
                ApprovalTier::Exec
            } else {
                ApprovalTier::Write
            }
        })
        .raw_handler(|_, _| async { Ok(ToolOutput::new(json!(null))) })
        .build();
    let Some(Approval::Dynamic(decide)) = &def.approval else {
        panic!("expected a dynamic approval");
    };
    assert_eq!(
        decide(&json!({"force": true})).unwrap().tier,
        ApprovalTier::Exec
    );
    assert_eq!(
        decide(&json!({"force": false})).unwrap().tier,
        ApprovalTier::Write
    );
    assert!(
        decide(&json!({"force": "yes"})).is_err(),
        "a bad input is an error, never a guess"
    );
}

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_tracing_logger_emits_tool_and_call_stack_fields() {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    let _guard = gonk_tools_tests::subscriber::set_scoped_default(subscriber);

    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("indexer")
                .description("Logs.")
                .raw_handler(|_, ctx: ToolContext| async move {
                    ctx.log().info("indexing 3 notes");
                    Ok(ToolOutput::new(json!(null)))
                })
                .build(),
        )
        .unwrap();
    let ctx = ToolContext::new().with_logger(TracingLog);
    collect_tool_outcome(registry.invoke("indexer", json!({}), ctx), |_| {})
        .await
        .unwrap();

    let logged = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(logged.contains("INFO"), "{logged}");
    assert!(logged.contains("indexing 3 notes"), "{logged}");
    assert!(
        logged.contains("tool=\"indexer\"") || logged.contains("tool=indexer"),
        "{logged}"
    );
    assert!(logged.contains("call_stack=indexer"), "{logged}");
}
