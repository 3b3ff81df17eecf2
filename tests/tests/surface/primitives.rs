//! Resources and prompts on the surface: their entries, and the
//! classification of their changes — a resource or template removed, a
//! template's variables changed, a MIME type changed, a prompt removed,
//! a required argument added, an optional one made required, an argument
//! removed: breaking; a resource, prompt or optional argument added, a
//! required argument made optional, a reworded description: additive. A
//! tools-only registry's surface has no `resources` or `prompts` key.

// The argument structs are read only for their schemas.
#![allow(dead_code)]

use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;
use gonk_tools::prompt::PromptDefinition;
use gonk_tools::resource::ResourceDefinition;
use gonk_tools::surface::{self, Part, Severity};
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
struct Id {
    id: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Slug {
    slug: String,
}

/// `summarize`'s arguments as first published.
#[derive(Deserialize, JsonSchema)]
struct SummarizeV1 {
    /// The note.
    id: u64,
    /// How.
    style: Option<String>,
}

/// A new optional argument.
#[derive(Deserialize, JsonSchema)]
struct SummarizeOptionalAdded {
    /// The note.
    id: u64,
    /// How.
    style: Option<String>,
    /// In which language.
    language: Option<String>,
}

/// A new required argument.
#[derive(Deserialize, JsonSchema)]
struct SummarizeRequiredAdded {
    /// The note.
    id: u64,
    /// How.
    style: Option<String>,
    /// In which language.
    language: String,
}

/// `style` made required.
#[derive(Deserialize, JsonSchema)]
struct SummarizeStyleRequired {
    /// The note.
    id: u64,
    /// How.
    style: String,
}

/// `style` removed.
#[derive(Deserialize, JsonSchema)]
struct SummarizeNoStyle {
    /// The note.
    id: u64,
}

/// `id` made optional.
#[derive(Deserialize, JsonSchema)]
struct SummarizeIdOptional {
    /// The note.
    id: Option<u64>,
    /// How.
    style: Option<String>,
}

fn note(template: &str, mime: &str) -> ResourceDefinition {
    let builder = ResourceDefinition::builder(template)
        .name("note")
        .description("A note.")
        .mime_type(mime);
    if template.contains("{slug}") {
        builder
            .handler(|v: Slug, _| async move { Ok::<_, ToolError>(v.slug) })
            .build()
    } else {
        builder
            .handler(|v: Id, _| async move { Ok::<_, ToolError>(v.id.to_string()) })
            .complete("id", |_: CompletionRequest, _| async move {
                Ok::<_, ToolError>(vec!["1", "2"])
            })
            .build()
    }
}

fn recent() -> ResourceDefinition {
    ResourceDefinition::builder("notes://recent")
        .name("recent")
        .handler(|_: NoInput, _| async move { Ok::<_, ToolError>("[]") })
        .build()
}

fn prompt<A: serde::de::DeserializeOwned + JsonSchema + Send + 'static>(
    name: &str,
    description: &str,
) -> PromptDefinition {
    PromptDefinition::builder(name)
        .description(description)
        .handler(|_: A, _| async move { Ok::<_, ToolError>("Summarize.".to_owned()) })
        .build()
}

/// The surface of a registry with these resources and prompts.
fn surface_of(resources: Vec<ResourceDefinition>, prompts: Vec<PromptDefinition>) -> Value {
    let registry = ToolRegistry::new();
    for r in resources {
        registry.register_resource(r).unwrap();
    }
    for p in prompts {
        registry.register_prompt(p).unwrap();
    }
    surface::surface(&registry)
}

fn v1() -> Value {
    surface_of(
        vec![note("notes://{id}", "text/markdown"), recent()],
        vec![prompt::<SummarizeV1>("summarize", "Summarize a note.")],
    )
}

/// The single change between v1 and `new`: (severity, part, key, path, what).
fn only_change(new: Value) -> (Severity, Part, String, String, String) {
    let diff = surface::diff(&v1(), &new);
    assert_eq!(diff.changes.len(), 1, "exactly one change: {diff}");
    let c = &diff.changes[0];
    (
        c.severity,
        c.part,
        c.tool.clone(),
        c.path.clone(),
        c.what.clone(),
    )
}

#[test]
fn resources_and_prompts_are_on_the_surface() {
    let surface = v1();
    assert_eq!(
        surface["resources"]["notes://{id}"],
        json!({
            "name": "note",
            "description": "A note.",
            "mimeType": "text/markdown",
            "variables": ["id"],
            "completable": ["id"],
        })
    );
    assert_eq!(
        surface["resources"]["notes://recent"],
        json!({"name": "recent", "variables": []})
    );
    assert_eq!(
        surface["prompts"]["summarize"],
        json!({
            "description": "Summarize a note.",
            "arguments": {
                "id": {"required": true, "description": "The note."},
                "style": {"required": false, "description": "How."},
            },
        })
    );
    assert!(surface::diff(&v1(), &v1()).is_empty());
}

#[test]
fn a_tools_only_surface_has_no_resources_or_prompts_key() {
    let surface = surface::surface(&ToolRegistry::new());
    assert_eq!(surface, json!({"tools": {}}));
}

#[test]
fn removing_a_resource_is_breaking_and_adding_one_additive() {
    let removed = surface_of(
        vec![note("notes://{id}", "text/markdown")],
        vec![prompt::<SummarizeV1>("summarize", "Summarize a note.")],
    );
    assert_eq!(
        only_change(removed.clone()),
        (
            Severity::Breaking,
            Part::Resource,
            "notes://recent".into(),
            String::new(),
            "resource removed".into()
        )
    );
    let diff = surface::diff(&removed, &v1());
    assert_eq!(diff.changes.len(), 1, "{diff}");
    assert_eq!(diff.changes[0].severity, Severity::Additive);
    assert_eq!(diff.changes[0].what, "resource added");
    assert_eq!(
        diff.changes[0].to_string(),
        "additive  resource notes://recent: resource added"
    );
}

#[test]
fn changing_a_templates_variables_is_breaking() {
    let changed = surface_of(
        vec![note("notes://{slug}", "text/markdown"), recent()],
        vec![prompt::<SummarizeV1>("summarize", "Summarize a note.")],
    );
    let (severity, part, key, _, what) = only_change(changed);
    assert_eq!((severity, part), (Severity::Breaking, Part::Resource));
    assert_eq!(key, "notes://{id}");
    assert_eq!(
        what,
        "URI changed to `notes://{slug}` (variables id → slug)"
    );
}

#[test]
fn changing_a_resources_mime_type_is_breaking_and_its_description_additive() {
    let changed = surface_of(
        vec![note("notes://{id}", "application/json"), recent()],
        vec![prompt::<SummarizeV1>("summarize", "Summarize a note.")],
    );
    let (severity, part, _, path, _) = only_change(changed);
    assert_eq!(
        (severity, part, path.as_str()),
        (Severity::Breaking, Part::Resource, "mimeType")
    );
    let reworded = surface_of(
        vec![note("notes://{id}", "text/markdown"), recent()],
        vec![prompt::<SummarizeV1>("summarize", "Sum up a note.")],
    );
    let (severity, part, key, path, what) = only_change(reworded);
    assert_eq!(
        (severity, part, key.as_str(), path.as_str(), what.as_str()),
        (
            Severity::Additive,
            Part::Prompt,
            "summarize",
            "description",
            "reworded"
        )
    );
}

fn with_prompt(p: PromptDefinition) -> Value {
    surface_of(
        vec![note("notes://{id}", "text/markdown"), recent()],
        vec![p],
    )
}

#[test]
fn prompt_argument_changes_are_classified() {
    let cases: Vec<(PromptDefinition, Severity, &str, &str)> = vec![
        (
            prompt::<SummarizeRequiredAdded>("summarize", "Summarize a note."),
            Severity::Breaking,
            "arguments/language",
            "new required argument",
        ),
        (
            prompt::<SummarizeOptionalAdded>("summarize", "Summarize a note."),
            Severity::Additive,
            "arguments/language",
            "new optional argument",
        ),
        (
            prompt::<SummarizeStyleRequired>("summarize", "Summarize a note."),
            Severity::Breaking,
            "arguments/style",
            "became required",
        ),
        (
            prompt::<SummarizeIdOptional>("summarize", "Summarize a note."),
            Severity::Additive,
            "arguments/id",
            "became optional",
        ),
        (
            prompt::<SummarizeNoStyle>("summarize", "Summarize a note."),
            Severity::Breaking,
            "arguments/style",
            "argument removed",
        ),
    ];
    for (p, severity, path, what) in cases {
        let (got_severity, part, key, got_path, got_what) = only_change(with_prompt(p));
        assert_eq!(
            (
                got_severity,
                part,
                key.as_str(),
                got_path.as_str(),
                got_what.as_str()
            ),
            (severity, Part::Prompt, "summarize", path, what)
        );
    }
}

#[test]
fn removing_or_renaming_a_prompt_is_breaking_and_adding_one_additive() {
    let removed = surface_of(
        vec![note("notes://{id}", "text/markdown"), recent()],
        vec![],
    );
    assert_eq!(
        only_change(removed).4,
        "prompt removed",
        "a removed prompt is reported"
    );
    let renamed = with_prompt(prompt::<SummarizeV1>("digest", "Summarize a note."));
    let (severity, part, key, _, what) = only_change(renamed);
    assert_eq!(
        (severity, part, key.as_str(), what.as_str()),
        (
            Severity::Breaking,
            Part::Prompt,
            "summarize",
            "renamed to `digest`"
        )
    );
    let added = surface_of(
        vec![note("notes://{id}", "text/markdown"), recent()],
        vec![
            prompt::<SummarizeV1>("summarize", "Summarize a note."),
            prompt::<SummarizeNoStyle>("outline", "Outline a note."),
        ],
    );
    let diff = surface::diff(&v1(), &added);
    assert!(!diff.is_breaking(), "{diff}");
    assert_eq!(diff.changes.len(), 1, "{diff}");
    assert_eq!(
        diff.changes[0].to_string(),
        "additive  prompt outline: prompt added"
    );
}

#[test]
fn a_golden_file_catches_a_breaking_prompt_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("surface.json");
    let registry = |p: PromptDefinition| {
        let registry = ToolRegistry::new();
        registry.register_resource(recent()).unwrap();
        registry.register_prompt(p).unwrap();
        registry
    };
    surface::check_surface(
        &registry(prompt::<SummarizeV1>("summarize", "Summarize a note.")),
        &path,
        true,
    )
    .unwrap();
    let error = surface::check_surface(
        &registry(prompt::<SummarizeStyleRequired>(
            "summarize",
            "Summarize a note.",
        )),
        &path,
        false,
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("BREAKING  prompt summarize arguments/style: became required"),
        "{message}"
    );
    assert!(
        message.contains("breaking changes need a new major version"),
        "{message}"
    );
}
