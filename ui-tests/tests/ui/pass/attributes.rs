//! Every attribute.
use gonk_tools::definition::{ApprovalSpec, ApprovalTier, CapabilityStatus, Cost, Latency};
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Edit {
    pub path: String,
    pub force: bool,
}

fn approval_for(input: &Edit) -> ApprovalSpec {
    if input.force { ApprovalTier::Exec.into() } else { ApprovalTier::Write.into() }
}

fn available() -> bool { true }

fn probe() -> CapabilityStatus { CapabilityStatus::Degraded }

/// Edit a file.
#[tool(
    name = "fs.edit",
    category = "files",
    visibility = "always",
    approval = approval_for,
    capabilities(reads_fs, writes_fs, network = false, long_running, idempotent, duplex = false),
    tags = ["fs", "edit"],
    keywords = ["change"],
    related_to = ["fs.read"],
    cost = "moderate",
    latency = "seconds",
    cli(command = "edit", positional = ["path"], aliases = ["e"], examples = ["edit a.txt"]),
    mcp(name = "edit_file", visibility = "on-demand", read_only = false, destructive, idempotent, open_world),
    pi(name = "edit", visibility = "always", requires_approval, status_glyph = "E"),
    authorization(auth_level = "user", required_role = "editor", allowed_callers = ["fs.batch"]),
    authorization_resource(kind = "file", required_fields = ["target", "owner"]),
    validate_output = "strict",
    requires = available,
    capability_for = probe,
    degraded_description = "Edit a file (read-only mode).",
    input_json_schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "force": {"type": "boolean"}}, "required": ["path", "force"]}),
)]
async fn fs_edit(input: Edit) -> String { input.path }

/// Approval as an object.
#[tool(approval(tier = "write", override, reason = "edits"), authorization_resource = "note")]
async fn spec_approval() {}

/// Described by the attribute, not by this comment.
#[tool(description = "From the attribute.")]
async fn described() {}

/// Slow work, detached by default.
#[tool(detached, timeout = "10m")]
async fn slow_work() {}

/// Needs two OAuth scopes (a trailing comma is fine).
#[tool(scopes("files:read", "files:write",))]
async fn scoped() {}

fn main() {
    assert_eq!(Scoped::definition().required_scopes(), ["files:read", "files:write"]);
    assert!(Described::definition().required_scopes().is_empty());
    let slow = SlowWork::definition();
    assert!(slow.detached);
    assert_eq!(slow.input_schema["properties"]["wait"]["type"], "boolean");
    assert_eq!(slow.input_schema["properties"]["sync"]["type"], "boolean");
    let def = FsEdit::definition();
    assert_eq!(def.name, "fs.edit");
    assert_eq!(def.category.as_deref(), Some("files"));
    assert_eq!(def.visibility, Visibility::Always);
    assert!(def.capabilities.writes_fs && def.capabilities.long_running && !def.capabilities.network);
    assert_eq!(def.tags, ["fs", "edit"]);
    assert_eq!(def.keywords, ["change"]);
    assert_eq!(def.related_to, ["fs.read"]);
    assert_eq!(def.cost, Some(Cost::Moderate));
    assert_eq!(def.latency, Some(Latency::Seconds));
    assert_eq!(def.hints.cli.command.as_deref(), Some("edit"));
    assert_eq!(def.hints.cli.positional, ["path"]);
    assert_eq!(def.hints.mcp.mcp_name.as_deref(), Some("edit_file"));
    assert_eq!(def.hints.mcp.annotations.read_only, Some(false));
    assert_eq!(def.hints.mcp.annotations.destructive, Some(true));
    assert_eq!(def.hints.pi.requires_approval, Some(true));
    assert_eq!(def.hints.pi.status_glyph.as_deref(), Some("E"));
    let auth = def.authorization.as_ref().unwrap();
    assert_eq!(auth.required_role.as_deref(), Some("editor"));
    assert_eq!(def.authorization_resource.as_ref().unwrap().required_fields, ["target", "owner"]);
    assert_eq!(def.validate_output, ValidateOutput::Strict);
    assert!(def.requirements_met());
    assert_eq!(def.advertised_description(), "Edit a file (read-only mode).");
    assert!(def.input_json_schema.is_some());
    match &def.approval {
        Some(gonk_tools::definition::Approval::Dynamic(f)) => {
            assert_eq!(f(&json!({"path": "a", "force": true})).unwrap().tier, ApprovalTier::Exec);
        }
        other => panic!("{other:?}"),
    }
    let def = SpecApproval::definition();
    match &def.approval {
        Some(gonk_tools::definition::Approval::Static(spec)) => {
            assert!(spec.overridable);
            assert_eq!(spec.reason.as_deref(), Some("edits"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(def.authorization_resource.as_ref().unwrap().kind, "note");
    assert_eq!(Described::definition().description, "From the attribute.");
}
