//! A registry's advertised surface — every tool's name, descriptions,
//! input and output schemas, annotations, approval, required OAuth scopes,
//! visibility, surface hints and linked MCP App; every resource's URI (or
//! template), name, title, description, MIME type, `_meta` and completable
//! variables; every prompt's name, title,
//! description and arguments — as stable, sorted JSON; and the snapshot
//! check that keeps it from changing by accident.
//!
//! Pin the surface in a test; when it changes, the test fails with every
//! change listed and classified as **breaking** (a tool removed or
//! renamed, a new required input field, a narrowed input type or enum, an
//! output field removed, the approval tier raised, a required scope
//! added; a resource or template
//! removed, a template's variables or a resource's MIME type changed; a
//! prompt removed or renamed, a new required argument, an optional
//! argument made required, an argument removed, …) or **additive** (a new
//! tool, resource or prompt, a new optional field or argument, a widened
//! input, a new output field, a reworded description, …):
//!
//! ```no_run
//! # fn registry() -> gonk_tools::ToolRegistry { gonk_tools::ToolRegistry::new() }
//! #[test]
//! fn the_surface_is_pinned() {
//!     gonk_tools::assert_surface!(registry(), "tests/golden/surface.json");
//! }
//! ```
//!
//! Accept an intended change by running the test with `GONK_BLESS=1`
//! ([`UPDATE_VAR`]): the golden file is rewritten, and its diff is the
//! change to review. [`diff`] classifies two surfaces without any file.

mod diff;
mod schema_diff;
mod snapshot;

pub use diff::{diff, Change, Part, Severity, SurfaceDiff};
pub use snapshot::{assert_surface, check_surface, SnapshotError, SnapshotOutcome, UPDATE_VAR};

use serde_json::{json, Map, Value};

use crate::definition::{Approval, ApprovalTier, ToolDefinition};
use crate::prompt::PromptDefinition;
use crate::registry::ToolRegistry;
use crate::resource::ResourceDefinition;

/// The surface of `registry`: `{"tools": {NAME: {…}, …}}`, plus
/// `"resources": {URI: {…}}` and `"prompts": {NAME: {…}}` when it has any
/// (so a tools-only registry's snapshot is unchanged by them); entries
/// sorted by key and every object's keys sorted, so equal surfaces print
/// equally.
pub fn surface(registry: &ToolRegistry) -> Value {
    let tools: Map<String, Value> = registry
        .list()
        .iter()
        .map(|def| (def.name.clone(), tool_surface(def)))
        .collect();
    let mut surface = json!({ "tools": tools });
    let resources: Map<String, Value> = registry
        .resources()
        .iter()
        .map(|def| (def.uri().to_owned(), resource_surface(def)))
        .collect();
    if !resources.is_empty() {
        surface["resources"] = Value::Object(resources);
    }
    let prompts: Map<String, Value> = registry
        .prompts()
        .iter()
        .map(|def| (def.name().to_owned(), prompt_surface(def)))
        .collect();
    if !prompts.is_empty() {
        surface["prompts"] = Value::Object(prompts);
    }
    sorted(&surface)
}

/// One resource's (or template's) entry in the [`surface`], under its URI
/// as written: its name, the template's `variables` (empty for a fixed
/// URI), the `completable` ones, and title, description, MIME type,
/// size and listed `_meta` (an app resource's `ui`) when set.
pub fn resource_surface(def: &ResourceDefinition) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), json!(def.name()));
    let variables: Vec<String> = def
        .template()
        .map(|t| t.variables().map(str::to_owned).collect())
        .unwrap_or_default();
    entry.insert("variables".into(), json!(variables));
    let mut completable: Vec<&str> = def.completable().collect();
    completable.sort_unstable();
    if !completable.is_empty() {
        entry.insert("completable".into(), json!(completable));
    }
    for (key, value) in [
        ("title", def.title()),
        ("description", def.description()),
        ("mimeType", def.mime_type()),
    ] {
        if let Some(value) = value {
            entry.insert(key.into(), json!(value));
        }
    }
    if let Some(size) = def.size() {
        entry.insert("size".into(), json!(size));
    }
    if let Some(meta) = def.meta() {
        entry.insert("meta".into(), Value::Object(meta.clone()));
    }
    sorted(&Value::Object(entry))
}

/// One prompt's entry in the [`surface`], under its name: its `arguments`
/// by name (`required`, `description`), the `completable` ones, title and
/// description when set.
pub fn prompt_surface(def: &PromptDefinition) -> Value {
    let mut entry = Map::new();
    let arguments: Map<String, Value> = def
        .arguments()
        .iter()
        .map(|a| {
            let mut argument = json!({ "required": a.required });
            if let Some(description) = &a.description {
                argument["description"] = json!(description);
            }
            (a.name.clone(), argument)
        })
        .collect();
    entry.insert("arguments".into(), Value::Object(arguments));
    let mut completable: Vec<&str> = def.completable().collect();
    completable.sort_unstable();
    if !completable.is_empty() {
        entry.insert("completable".into(), json!(completable));
    }
    for (key, value) in [("title", def.title()), ("description", def.description())] {
        if let Some(value) = value {
            entry.insert(key.into(), json!(value));
        }
    }
    sorted(&Value::Object(entry))
}

/// One tool's entry in the [`surface`]; a tool that links an MCP App
/// shows it as `ui` (`resourceUri`, `visibility`).
pub fn tool_surface(def: &ToolDefinition) -> Value {
    let mut entry = Map::new();
    entry.insert("description".into(), json!(def.description));
    if let Some(degraded) = &def.degraded_description {
        entry.insert("degradedDescription".into(), json!(degraded));
    }
    if let Some(category) = &def.category {
        entry.insert("category".into(), json!(category));
    }
    entry.insert("visibility".into(), json!(def.visibility));
    entry.insert("approval".into(), approval(def.approval.as_ref()));
    entry.insert("capabilities".into(), json!(def.capabilities));
    entry.insert("annotations".into(), json!(def.hints.mcp.annotations));
    let mut hints = json!(def.hints);
    if let Some(mcp) = hints.get_mut("mcp").and_then(Value::as_object_mut) {
        mcp.remove("annotations");
    }
    entry.insert("hints".into(), hints);
    for (key, values) in [
        ("tags", &def.tags),
        ("keywords", &def.keywords),
        ("relatedTo", &def.related_to),
    ] {
        if !values.is_empty() {
            entry.insert(key.into(), json!(values));
        }
    }
    if !def.required_scopes().is_empty() {
        entry.insert("scopes".into(), json!(def.required_scopes()));
    }
    if let Some(cost) = def.cost {
        entry.insert("cost".into(), json!(cost));
    }
    if let Some(latency) = def.latency {
        entry.insert("latency".into(), json!(latency));
    }
    if let Some(ui) = def.ui() {
        entry.insert("ui".into(), json!(ui));
    }
    entry.insert("input".into(), def.effective_input_schema().clone());
    if let Some(output) = &def.output_schema {
        entry.insert("output".into(), output.clone());
    }
    sorted(&Value::Object(entry))
}

/// The approval as the surface shows it: the static tier (with override
/// and reason), `{"dynamic": true}`, or — undeclared — `exec`, which is
/// what dispatch resolves it to.
fn approval(approval: Option<&Approval>) -> Value {
    match approval {
        Some(Approval::Static(spec)) => json!(spec),
        Some(Approval::Dynamic(_)) => json!({"dynamic": true}),
        None => {
            json!({"tier": ApprovalTier::Exec, "override": false, "reason": "undeclared: resolves to exec"})
        }
    }
}

/// `value` with every object's keys in sorted order (whatever order the
/// JSON map type keeps).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use crate::app::{AppResource, UiVisibility, MIME_TYPE};
    use crate::definition::ToolDefinition;
    use crate::error::ToolError;
    use crate::registry::ToolRegistry;
    use crate::tool::NoInput;

    #[test]
    fn the_surface_shows_the_link_and_the_app_meta() {
        let registry = ToolRegistry::new();
        registry
            .register_resource(
                AppResource::html("ui://notes/board", "<p>")
                    .prefers_border(false)
                    .build(),
            )
            .unwrap();
        registry
            .register(
                ToolDefinition::builder("board.show")
                    .description("Show the board.")
                    .ui("ui://notes/board")
                    .handler(|_: NoInput, _ctx| async move { Ok::<_, ToolError>("3 notes") })
                    .build(),
            )
            .unwrap();
        let before = super::surface(&registry);
        assert_eq!(
            before["tools"]["board.show"]["ui"],
            serde_json::json!({"resourceUri": "ui://notes/board", "visibility": ["model", "app"]})
        );
        assert_eq!(
            before["resources"]["ui://notes/board"]["meta"],
            serde_json::json!({"ui": {"prefersBorder": false}})
        );
        assert_eq!(
            before["resources"]["ui://notes/board"]["mimeType"],
            MIME_TYPE
        );
        // Made app-only: a change the snapshot reports.
        let app_only = ToolDefinition::builder("board.show")
            .description("Show the board.")
            .ui("ui://notes/board")
            .ui_visibility([UiVisibility::App])
            .handler(|_: NoInput, _ctx| async move { Ok::<_, ToolError>("3 notes") })
            .build();
        registry.unregister("board.show");
        registry.register(app_only).unwrap();
        let after = super::surface(&registry);
        let diff = super::diff(&before, &after);
        assert!(
            diff.changes.iter().any(|c| c.path == "ui"),
            "{:?}",
            diff.changes
        );
    }
}
