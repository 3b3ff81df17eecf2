//! Tool-surface snapshots: an unchanged surface passes; every breaking and
//! additive change kind is detected and classified; the report reads as a
//! diff; `GONK_BLESS=1` rewrites the golden file (proved in a child test
//! process that really has the variable set).

use gonk_tools::definition::{ApprovalSpec, McpHints};
use gonk_tools::prelude::*;
use gonk_tools::surface::{
    self, check_surface, Change, Part, Severity, SnapshotError, SnapshotOutcome,
};
use serde_json::Value;

/// The tools of a small app, as JSON so each test can change one thing.
struct Spec {
    search_input: Value,
    search_output: Value,
    search_approval: ApprovalSpec,
    search_description: String,
    search_mcp_name: Option<String>,
    extra_tool: Option<&'static str>,
    drop_get: bool,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            search_input: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                    "mode": {"type": "string", "enum": ["fast", "full"]}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            search_output: json!({
                "type": "object",
                "properties": {"titles": {"type": "array", "items": {"type": "string"}}, "total": {"type": "integer"}},
                "required": ["titles", "total"]
            }),
            search_approval: ApprovalTier::Read.into(),
            search_description: "Search notes.".into(),
            search_mcp_name: None,
            extra_tool: None,
            drop_get: false,
        }
    }
}

async fn echo(input: Value, _ctx: ToolContext) -> Result<ToolOutput<Value>, ToolError> {
    Ok(ToolOutput::new(input))
}

fn registry(edit: impl FnOnce(&mut Spec)) -> ToolRegistry {
    let mut spec = Spec::default();
    edit(&mut spec);
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("notes.search")
                .description(spec.search_description)
                .approval(spec.search_approval)
                .input_json_schema(spec.search_input)
                .output_schema(spec.search_output)
                .mcp(McpHints {
                    mcp_name: spec.search_mcp_name,
                    ..Default::default()
                })
                .raw_handler(echo)
                .build(),
        )
        .unwrap();
    // `notes.get`, and optionally the same tool under another name.
    let get_tools = [(!spec.drop_get).then_some("notes.get"), spec.extra_tool];
    for name in get_tools.into_iter().flatten() {
        registry
            .register(
                ToolDefinition::builder(name)
                    .description("Get a note.")
                    .approval(ApprovalTier::Read)
                    .input_json_schema(json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}))
                    .raw_handler(echo)
                    .build(),
            )
            .unwrap();
    }
    registry
}

/// The changes from the default surface to the edited one.
fn changes(edit: impl FnOnce(&mut Spec)) -> Vec<Change> {
    surface::diff(
        &surface::surface(&registry(|_| {})),
        &surface::surface(&registry(edit)),
    )
    .changes
}

/// `(severity, tool, part, path, what)` of each change, for comparing.
fn shown(changes: &[Change]) -> Vec<(Severity, &str, Part, &str, &str)> {
    changes
        .iter()
        .map(|c| {
            (
                c.severity,
                c.tool.as_str(),
                c.part,
                c.path.as_str(),
                c.what.as_str(),
            )
        })
        .collect()
}

use Part::{Approval, Input, Metadata, Output, Tool};
use Severity::{Additive, Breaking};

#[test]
fn an_unchanged_surface_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("surface.json");
    assert_eq!(
        check_surface(&registry(|_| {}), &path, true).unwrap(),
        SnapshotOutcome::Written
    );
    assert_eq!(
        check_surface(&registry(|_| {}), &path, false).unwrap(),
        SnapshotOutcome::Unchanged
    );
    assert_eq!(
        check_surface(&registry(|_| {}), &path, true).unwrap(),
        SnapshotOutcome::Unchanged,
        "nothing to rewrite"
    );
    // Stable and sorted: tools by name, keys in order.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.find("\"notes.get\"").unwrap() < text.find("\"notes.search\"").unwrap());
    assert_eq!(
        text,
        serde_json::to_string_pretty(&surface::surface(&registry(|_| {}))).unwrap() + "\n"
    );
}

#[test]
fn breaking_changes_are_classified() {
    assert_eq!(
        shown(&changes(|s| s.drop_get = true)),
        [(Breaking, "notes.get", Tool, "", "tool removed")]
    );
    assert_eq!(
        shown(&changes(|s| {
            s.drop_get = true;
            s.extra_tool = Some("notes.fetch");
        })),
        [(Breaking, "notes.get", Tool, "", "renamed to `notes.fetch`")]
    );
    assert_eq!(
        shown(&changes(|s| {
            s.search_input["properties"]["owner"] = json!({"type": "string"});
            s.search_input["required"] = json!(["query", "owner"]);
        })),
        [(
            Breaking,
            "notes.search",
            Input,
            "/owner",
            "new required field"
        )]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_input["required"] = json!(["query", "limit"])
        )),
        [(
            Breaking,
            "notes.search",
            Input,
            "/limit",
            "field became required"
        )]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_input["properties"]["limit"]["type"] = json!("string")
        )),
        [(
            Breaking,
            "notes.search",
            Input,
            "/limit",
            "type integer → string"
        )]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_input["properties"]["limit"]["maximum"] = json!(10)
        )),
        [(Breaking, "notes.search", Input, "/limit", "maximum 20 → 10")]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_input["properties"]["mode"]["enum"] = json!(["fast"])
        )),
        [(
            Breaking,
            "notes.search",
            Input,
            "/mode",
            "enum values removed: \"full\""
        )]
    );
    assert_eq!(
        shown(&changes(|s| {
            s.search_input["properties"]
                .as_object_mut()
                .unwrap()
                .remove("mode");
        })),
        [(Breaking, "notes.search", Input, "/mode", "field removed")],
        "the object refuses unknown fields, so callers sending it now fail"
    );
    assert_eq!(
        shown(&changes(|s| {
            s.search_output["properties"]
                .as_object_mut()
                .unwrap()
                .remove("total");
            s.search_output["required"] = json!(["titles"]);
        })),
        [(Breaking, "notes.search", Output, "/total", "field removed")]
    );
    assert_eq!(
        shown(&changes(|s| s.search_output["required"] = json!(["titles"]))),
        [(
            Breaking,
            "notes.search",
            Output,
            "/total",
            "field no longer guaranteed"
        )]
    );
    assert_eq!(
        shown(&changes(|s| s.search_approval = ApprovalTier::Write.into())),
        [(
            Breaking,
            "notes.search",
            Approval,
            "",
            "raised from read to write"
        )]
    );
    assert_eq!(
        shown(&changes(|s| s.search_mcp_name = Some("search".into()))),
        [(
            Breaking,
            "notes.search",
            Metadata,
            "hints.mcp.mcpName",
            "default → \"search\""
        )]
    );
}

#[test]
fn additive_changes_are_classified() {
    assert_eq!(
        shown(&changes(|s| s.extra_tool = Some("notes.fetch"))),
        [(Additive, "notes.fetch", Tool, "", "tool added")]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_input["properties"]["tag"] = json!({"type": "string"})
        )),
        [(
            Additive,
            "notes.search",
            Input,
            "/tag",
            "new optional field"
        )]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_input["properties"]["mode"]["enum"] = json!(["fast", "full", "fuzzy"])
        )),
        [(
            Additive,
            "notes.search",
            Input,
            "/mode",
            "enum values added: \"fuzzy\""
        )]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_input["properties"]["limit"]["maximum"] = json!(50)
        )),
        [(Additive, "notes.search", Input, "/limit", "maximum 20 → 50")]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_output["properties"]["next"] = json!({"type": "string"})
        )),
        [(
            Additive,
            "notes.search",
            Output,
            "/next",
            "new optional field"
        )]
    );
    assert_eq!(
        shown(&changes(|s| s.search_approval = ApprovalSpec {
            tier: ApprovalTier::Read,
            overridable: true,
            reason: None
        })),
        [(
            Additive,
            "notes.search",
            Approval,
            "",
            "{\"override\":false,\"tier\":\"read\"} → {\"override\":true,\"tier\":\"read\"}"
        )]
    );
    assert_eq!(
        shown(&changes(
            |s| s.search_description = "Search every note.".into()
        )),
        [(
            Additive,
            "notes.search",
            Metadata,
            "description",
            "reworded"
        )]
    );
    // Lowering the tier of a tool that was write.
    let before = surface::surface(&registry(|s| {
        s.search_approval = ApprovalTier::Write.into()
    }));
    let after = surface::surface(&registry(|_| {}));
    assert_eq!(
        shown(&surface::diff(&before, &after).changes),
        [(
            Additive,
            "notes.search",
            Approval,
            "",
            "lowered from write to read"
        )]
    );
}

#[test]
fn a_changed_surface_fails_with_a_readable_report() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("surface.json");
    check_surface(&registry(|_| {}), &path, true).unwrap();
    let changed = registry(|s| {
        s.drop_get = true;
        s.search_input["properties"]["tag"] = json!({"type": "string"});
        s.search_input["properties"]["limit"]["maximum"] = json!(10);
    });
    let error = check_surface(&changed, &path, false).unwrap_err();
    assert!(matches!(&error, SnapshotError::Changed { diff, .. } if diff.is_breaking()));
    assert_eq!(
        error.to_string(),
        format!(
            "the tool surface changed from {}: 2 breaking, 1 additive\n  \
             BREAKING  notes.get: tool removed\n  \
             BREAKING  notes.search input /limit: maximum 20 → 10\n  \
             additive  notes.search input /tag: new optional field\n\
             If this is intended, rerun with GONK_BLESS=1 to rewrite the file, and review its diff \
             — breaking changes need a new major version or a migration for callers",
            path.display()
        )
    );
    // The file is untouched until the change is accepted.
    assert_eq!(
        check_surface(&registry(|_| {}), &path, false).unwrap(),
        SnapshotOutcome::Unchanged
    );

    let missing = check_surface(&changed, dir.path().join("none.json"), false).unwrap_err();
    assert!(
        missing.to_string().starts_with("no surface snapshot at "),
        "{missing}"
    );
    assert!(missing
        .to_string()
        .ends_with("; run with GONK_BLESS=1 to create it"));
}

/// Run only as a child of `the_update_variable_rewrites_the_file`, with
/// `GONK_BLESS` set by the parent.
#[test]
#[ignore = "run by the_update_variable_rewrites_the_file"]
fn child_asserts_a_changed_surface() {
    let path = std::env::var("GONK_SURFACE_TEST_PATH").expect("set by the parent test");
    gonk_tools::surface::assert_surface(&registry(|s| s.drop_get = true), path);
}

#[test]
fn the_update_variable_rewrites_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("surface.json");
    check_surface(&registry(|_| {}), &path, true).unwrap();
    let run = |bless: Option<&str>| {
        let mut child =
            gonk_tools_tests::process::alone(module_path!(), "child_asserts_a_changed_surface");
        child
            .env("GONK_SURFACE_TEST_PATH", &path)
            .env_remove("GONK_BLESS");
        if let Some(value) = bless {
            child.env("GONK_BLESS", value);
        }
        child.output().unwrap()
    };
    let refused = run(None);
    assert!(
        !refused.status.success(),
        "without the variable the changed surface fails"
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("BREAKING  notes.get: tool removed"),
        "{stderr}"
    );
    assert!(
        !run(Some("0")).status.success(),
        "GONK_BLESS=0 does not update"
    );

    let blessed = run(Some("1"));
    assert!(
        blessed.status.success(),
        "{}",
        String::from_utf8_lossy(&blessed.stderr)
    );
    assert_eq!(
        check_surface(&registry(|s| s.drop_get = true), &path, false).unwrap(),
        SnapshotOutcome::Unchanged,
        "the file now holds the new surface"
    );
}

#[test]
fn the_surface_of_a_tool_shows_what_is_advertised() {
    let value = surface::surface(&registry(|_| {}));
    let search = &value["tools"]["notes.search"];
    assert_eq!(search["description"], "Search notes.");
    assert_eq!(
        search["approval"],
        json!({"tier": "read", "override": false})
    );
    assert_eq!(search["visibility"], "on-demand");
    assert_eq!(search["input"]["required"], json!(["query"]));
    assert_eq!(search["output"]["required"], json!(["titles", "total"]));
    assert_eq!(search["annotations"], json!({}));
    let keys: Vec<&String> = search.as_object().unwrap().keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

/// Required OAuth scopes are part of the surface: listed when a tool has
/// any; one added refuses tokens that were enough (breaking), one dropped
/// refuses nobody (additive).
#[test]
fn required_scopes_are_surface_and_adding_one_breaks() {
    let with = |scopes: &[&str]| {
        let registry = ToolRegistry::new();
        registry
            .register(
                ToolDefinition::builder("notes.create")
                    .description("Create a note.")
                    .approval(ApprovalTier::Write)
                    .scopes(scopes.iter().copied())
                    .raw_handler(echo)
                    .build(),
            )
            .unwrap();
        surface::surface(&registry)
    };
    assert!(with(&[])["tools"]["notes.create"].get("scopes").is_none());
    assert_eq!(
        with(&["notes:write"])["tools"]["notes.create"]["scopes"],
        json!(["notes:write"])
    );
    let added = surface::diff(
        &with(&["notes:write"]),
        &with(&["notes:write", "notes:admin"]),
    );
    assert_eq!(
        shown(&added.changes),
        [(
            Breaking,
            "notes.create",
            Metadata,
            "scopes",
            "requires scope notes:admin"
        )]
    );
    let dropped = surface::diff(&with(&["notes:write"]), &with(&[]));
    assert_eq!(
        shown(&dropped.changes),
        [(
            Additive,
            "notes.create",
            Metadata,
            "scopes",
            "no longer requires scope notes:write"
        )]
    );
}
