//! The projections of tools to OpenAI (strict), Anthropic and Gemini:
//! pinned by golden files for the golden schema types
//! (`tests/golden/schemas`), checked node by node against each provider's
//! published rules, and proved to accept exactly what dispatch accepts.
//!
//! Regenerate the golden files with `GONK_BLESS=1 cargo test -p
//! gonk-tools-tests --test providers projection::`, then review the diff.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gonk_tools::adapters::names::{SurfaceNameError, SurfaceNameRules};
use gonk_tools::adapters::providers::{
    Anthropic, CallError, Gemini, OpenAi, Provider, ProviderTools, ToolCall, ToolProjection,
};
use gonk_tools::definition::ToolDefinition;
use gonk_tools::prelude::*;
use gonk_tools::schema::CompiledSchema;
use gonk_tools_tests::golden;
use serde_json::Value;

const TYPES: [&str; 8] = [
    "Collections",
    "Command",
    "Constrained",
    "DataEnums",
    "Nested",
    "Optionals",
    "Tree",
    "UnitEnums",
];

fn golden_schema(name: &str) -> Value {
    let path = golden::path(&format!("schemas/{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

async fn echo(input: Value, _ctx: ToolContext) -> Result<ToolOutput<Value>, ToolError> {
    Ok(ToolOutput::new(input))
}

/// One tool per golden schema type, named `golden.<Type>`, that echoes its
/// (validated) input.
fn golden_registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    for name in TYPES {
        registry
            .register(
                ToolDefinition::builder(format!("golden.{name}"))
                    .description(format!("Takes a {name}."))
                    .approval(ApprovalTier::Read)
                    .input_json_schema(golden_schema(name))
                    .raw_handler(echo)
                    .build(),
            )
            .unwrap();
    }
    registry
}

fn projections<P: Provider>(provider: P) -> Vec<ToolProjection> {
    ProviderTools::new(golden_registry(), provider)
        .projections()
        .unwrap()
        .to_vec()
}

fn pinned(projection: &ToolProjection) -> Value {
    json!({"entry": projection.entry, "notes": projection.notes})
}

fn assert_function_name(name: &str) {
    assert!(
        (1..=64).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "`{name}` breaks ^[a-zA-Z0-9_-]{{1,64}}$"
    );
}

/// Every schema node under `schema` (properties, items, alternatives,
/// definitions), with its path.
fn nodes<'a>(schema: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    out.push((at.clone(), schema));
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            nodes(prop, format!("{at}/{name}"), out);
        }
    }
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        nodes(items, format!("{at}/*"), out);
    }
    for key in ["anyOf", "oneOf"] {
        for (i, alt) in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            nodes(alt, format!("{at}/{key}[{i}]"), out);
        }
    }
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        for (name, def) in defs {
            nodes(def, format!("#/$defs/{name}"), out);
        }
    }
}

fn types(node: &Value) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

/// OpenAI's strict rules (Structured Outputs, "Supported schemas"), from
/// the documentation rather than from the projection code: the root is an
/// object and not a union; every object closes with `additionalProperties:
/// false` and lists every property as required; only supported keywords.
fn assert_strict(tool: &str, schema: &Value) {
    const KEYWORDS: [&str; 21] = [
        "type",
        "description",
        "title",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    ];
    const FORMATS: [&str; 9] = [
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    assert_eq!(schema["type"], "object", "{tool}: root is an object");
    assert!(schema.get("anyOf").is_none(), "{tool}: root is not anyOf");
    let mut all = Vec::new();
    nodes(schema, String::new(), &mut all);
    for (at, node) in all {
        let map = node
            .as_object()
            .unwrap_or_else(|| panic!("{tool}{at}: a schema object"));
        for key in map.keys() {
            assert!(
                KEYWORDS.contains(&key.as_str()),
                "{tool}{at}: `{key}` is not in the strict subset"
            );
        }
        if let Some(format) = map.get("format") {
            assert!(
                FORMATS.contains(&format.as_str().unwrap()),
                "{tool}{at}: format {format}"
            );
        }
        if types(node).contains(&"object") || map.contains_key("properties") {
            assert_eq!(
                map.get("additionalProperties"),
                Some(&json!(false)),
                "{tool}{at}: closed"
            );
            let props: BTreeSet<&str> = map["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let required: BTreeSet<&str> = map["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            assert_eq!(props, required, "{tool}{at}: every property required");
        }
    }
}

/// Gemini's `Schema` (the OpenAPI subset): only its fields, upper-case
/// types, string enums, no `$ref`.
fn assert_gemini_schema(tool: &str, schema: &Value) {
    const FIELDS: [&str; 22] = [
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "anyOf",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "default",
        "example",
        "propertyOrdering",
    ];
    const TYPES: [&str; 7] = [
        "STRING", "INTEGER", "NUMBER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
    ];
    let mut all = Vec::new();
    nodes(schema, String::new(), &mut all);
    for (at, node) in all {
        let map = node.as_object().unwrap();
        for key in map.keys() {
            assert!(
                FIELDS.contains(&key.as_str()),
                "{tool}{at}: `{key}` is not a Gemini Schema field"
            );
        }
        assert!(
            map.contains_key("type") || map.contains_key("anyOf"),
            "{tool}{at}: typed"
        );
        if let Some(t) = map.get("type") {
            assert!(TYPES.contains(&t.as_str().unwrap()), "{tool}{at}: type {t}");
        }
        if let Some(values) = map.get("enum") {
            assert!(
                values.as_array().unwrap().iter().all(Value::is_string),
                "{tool}{at}: string enum"
            );
        }
        if let Some(required) = map.get("required") {
            for name in required.as_array().unwrap() {
                assert!(
                    map["properties"].get(name.as_str().unwrap()).is_some(),
                    "{tool}{at}: {name} declared"
                );
            }
        }
    }
}

#[test]
fn openai_projections_of_the_golden_types() {
    for projection in projections(OpenAi::chat_completions()) {
        let ty = projection.tool.strip_prefix("golden.").unwrap();
        golden::check(&format!("providers/openai/{ty}.json"), &pinned(&projection));
        assert_function_name(&projection.name);
        assert_eq!(projection.name, format!("golden_{ty}"));
        let function = &projection.entry["function"];
        assert_eq!(projection.entry["type"], "function");
        assert_eq!(function["name"], projection.name.as_str());
        let expected_strict = !matches!(ty, "Collections" | "DataEnums" | "Command");
        assert_eq!(
            function["strict"], expected_strict,
            "{ty}: {:?}",
            projection.notes
        );
        if expected_strict {
            assert_strict(ty, &function["parameters"]);
        } else {
            // Sent as dispatch enforces it, with the reason kept.
            assert_eq!(function["parameters"], golden_schema(ty));
            let why = match ty {
                "Collections" => "is a map",
                "DataEnums" => "prefixItems",
                _ => "a single object at the root",
            };
            assert!(
                projection
                    .notes
                    .iter()
                    .any(|n| n.starts_with("not strict") && n.contains(why)),
                "{ty}: {:?}",
                projection.notes
            );
        }
    }
}

#[test]
fn openai_responses_entries_are_flat() {
    let tools = ProviderTools::new(golden_registry(), OpenAi::responses())
        .tools()
        .unwrap();
    let chat = ProviderTools::new(golden_registry(), OpenAi::chat_completions())
        .tools()
        .unwrap();
    for (flat, nested) in tools.iter().zip(chat.iter()) {
        let mut expected = nested["function"].clone();
        expected["type"] = json!("function");
        assert_eq!(flat, &expected);
    }
}

#[test]
fn anthropic_projections_of_the_golden_types() {
    for projection in projections(Anthropic) {
        let ty = projection.tool.strip_prefix("golden.").unwrap();
        golden::check(
            &format!("providers/anthropic/{ty}.json"),
            &pinned(&projection),
        );
        assert_function_name(&projection.name);
        assert_eq!(projection.entry["name"], projection.name.as_str());
        // Anthropic takes JSON Schema: exactly what dispatch enforces.
        assert_eq!(projection.entry["input_schema"], golden_schema(ty));
        assert_eq!(projection.entry["input_schema"]["type"], "object");
        assert!(projection.notes.is_empty());
    }
}

#[test]
fn gemini_projections_of_the_golden_types() {
    for projection in projections(Gemini) {
        let ty = projection.tool.strip_prefix("golden.").unwrap();
        golden::check(&format!("providers/gemini/{ty}.json"), &pinned(&projection));
        assert_function_name(&projection.name);
        let entry = &projection.entry;
        match ty {
            "Tree" | "Collections" | "DataEnums" => {
                assert!(entry.get("parameters").is_none());
                assert_eq!(entry["parametersJsonSchema"], golden_schema(ty));
                let why = match ty {
                    "Tree" => "refers to itself",
                    "Collections" => "is a map",
                    _ => "prefixItems",
                };
                assert!(
                    projection.notes.iter().any(|n| n.contains(why)),
                    "{ty}: {:?}",
                    projection.notes
                );
            }
            _ => {
                assert!(entry.get("parametersJsonSchema").is_none());
                assert_gemini_schema(ty, &entry["parameters"]);
            }
        }
    }
}

/// Valid inputs of the strict types as a strict model writes them (every
/// field present, `null` for absent), and what dispatch must receive.
fn model_forms() -> Vec<(&'static str, Value, Value)> {
    vec![
        (
            "Optionals",
            json!({"text": null, "count": null, "tags": null, "author": null, "page_size": null}),
            json!({}),
        ),
        (
            "Optionals",
            json!({"text": "t", "count": 2, "tags": ["a"], "author": {"name": "n", "email": null}, "page_size": 5}),
            json!({"text": "t", "count": 2, "tags": ["a"], "author": {"name": "n"}, "page_size": 5}),
        ),
        (
            "Nested",
            json!({"title": "t", "author": {"name": "a", "email": null}, "commenters": [{"name": "b", "email": "e@x"}]}),
            json!({"title": "t", "author": {"name": "a"}, "commenters": [{"name": "b", "email": "e@x"}]}),
        ),
        (
            "Constrained",
            json!({"slug": "abc", "ratio": 0.5, "level": 3, "items": ["x"], "limit": null}),
            json!({"slug": "abc", "ratio": 0.5, "level": 3, "items": ["x"]}),
        ),
        (
            "UnitEnums",
            json!({"mode": "dry-run", "fallbacks": ["strict"], "override_mode": null}),
            json!({"mode": "dry-run", "fallbacks": ["strict"]}),
        ),
        (
            "Tree",
            json!({"value": 1, "children": [{"value": 2, "children": []}]}),
            json!({"value": 1, "children": [{"value": 2, "children": []}]}),
        ),
    ]
}

#[tokio::test]
async fn strict_projections_accept_what_dispatch_accepts() {
    let openai = ProviderTools::new(golden_registry(), OpenAi::chat_completions());
    let tools = openai.tools().unwrap();
    for (i, (ty, model_form, dispatched)) in model_forms().into_iter().enumerate() {
        let name = format!("golden_{ty}");
        let entry = tools
            .iter()
            .find(|t| t["function"]["name"] == name.as_str())
            .unwrap();
        let strict = CompiledSchema::compile(&entry["function"]["parameters"]).unwrap();
        assert!(
            strict.validate(&model_form).is_ok(),
            "{ty}: the strict schema accepts {model_form}"
        );
        let enforced = CompiledSchema::compile(&golden_schema(ty)).unwrap();
        assert!(
            enforced.validate(&dispatched).is_ok(),
            "{ty}: dispatch accepts {dispatched}"
        );
        let call = json!({
            "id": format!("call_{i}"), "type": "function",
            "function": {"name": name, "arguments": model_form.to_string()}
        });
        let message = openai.call(&call, ToolContext::new()).await.unwrap();
        assert_eq!(message["tool_call_id"], format!("call_{i}"));
        let echoed: Value = serde_json::from_str(message["content"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{ty}: {e}: {message}"));
        assert_eq!(
            echoed, dispatched,
            "{ty}: the handler got the input without the nulls"
        );
    }
}

/// A provider that counts projections, to see the cache work.
struct Counting(Arc<AtomicUsize>);

impl Provider for Counting {
    fn name_rules(&self) -> SurfaceNameRules {
        Anthropic.name_rules()
    }
    fn project(&self, def: &ToolDefinition, name: &str, description: &str) -> ToolProjection {
        self.0.fetch_add(1, Ordering::SeqCst);
        Anthropic.project(def, name, description)
    }
    fn read_call(&self, payload: &Value) -> Result<ToolCall, CallError> {
        Anthropic.read_call(payload)
    }
    fn result(&self, call: &ToolCall, outcome: &Result<ToolOutput<Value>, ToolError>) -> Value {
        Anthropic.result(call, outcome)
    }
    fn reply(&self, results: Vec<Value>) -> Vec<Value> {
        Anthropic.reply(results)
    }
}

#[test]
fn projections_are_computed_once_and_only_changes_are_recomputed() {
    let registry = golden_registry();
    let count = Arc::new(AtomicUsize::new(0));
    let tools = ProviderTools::new(registry.clone(), Counting(Arc::clone(&count)));
    let first = tools.tools().unwrap();
    assert_eq!(count.load(Ordering::SeqCst), TYPES.len());
    let again = tools.tools().unwrap();
    assert!(Arc::ptr_eq(&first, &again), "the cached list itself");
    assert_eq!(count.load(Ordering::SeqCst), TYPES.len());

    registry
        .register(
            ToolDefinition::builder("extra")
                .description("One more.")
                .approval(ApprovalTier::Read)
                .raw_handler(echo)
                .build(),
        )
        .unwrap();
    let changed = tools.tools().unwrap();
    assert_eq!(changed.len(), TYPES.len() + 1);
    assert_eq!(
        count.load(Ordering::SeqCst),
        TYPES.len() + 1,
        "only the new tool is projected"
    );

    // A degraded capability changes the advertised description: that tool is re-projected.
    let degraded = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let probe = Arc::clone(&degraded);
    registry
        .register(
            ToolDefinition::builder("flaky")
                .description("Works.")
                .degraded_description("Works partly.")
                .capability_for(move || {
                    if probe.load(Ordering::SeqCst) {
                        gonk_tools::definition::CapabilityStatus::Degraded
                    } else {
                        gonk_tools::definition::CapabilityStatus::Available
                    }
                })
                .approval(ApprovalTier::Read)
                .raw_handler(echo)
                .build(),
        )
        .unwrap();
    let before = tools.tools().unwrap();
    assert_eq!(before.last().unwrap()["description"], "Works.");
    degraded.store(true, Ordering::SeqCst);
    let after = tools.tools().unwrap();
    assert_eq!(after.last().unwrap()["description"], "Works partly.");
    assert_eq!(count.load(Ordering::SeqCst), TYPES.len() + 3);
}

#[test]
fn colliding_names_are_refused_with_both_tools_named() {
    let registry = golden_registry();
    registry
        .register(
            ToolDefinition::builder("golden_Tree")
                .description("Clashes with golden.Tree once the dot is gone.")
                .approval(ApprovalTier::Read)
                .raw_handler(echo)
                .build(),
        )
        .unwrap();
    let openai = ProviderTools::new(registry.clone(), OpenAi::chat_completions());
    let error = openai.tools().unwrap_err();
    assert!(matches!(error, SurfaceNameError::Collision { .. }));
    assert_eq!(
        error.to_string(),
        "tools `golden.Tree` and `golden_Tree` both map to the OpenAI name `golden_Tree`; rename one of them or leave one out (e.g. with ToolRegistry::filter), since a surface name must lead back to exactly one tool"
    );
    // Leaving one out resolves it.
    let filtered = ProviderTools::new(registry, Gemini).filter(|def| def.name != "golden_Tree");
    assert_eq!(filtered.tools().unwrap().len(), TYPES.len());
}

#[test]
fn duplex_tools_and_filtered_tools_are_not_offered() {
    let registry = golden_registry();
    registry
        .register(
            ToolDefinition::builder("talk")
                .description("Streams audio in.")
                .approval(ApprovalTier::Read)
                .capabilities(gonk_tools::definition::Capabilities {
                    duplex: true,
                    ..Default::default()
                })
                .raw_handler(echo)
                .build(),
        )
        .unwrap();
    let names: Vec<String> = ProviderTools::new(registry, Anthropic)
        .filter(|def| def.name != "golden.Tree")
        .projections()
        .unwrap()
        .iter()
        .map(|p| p.tool.clone())
        .collect();
    assert!(!names.contains(&"talk".to_owned()));
    assert!(!names.contains(&"golden.Tree".to_owned()));
    assert_eq!(names.len(), TYPES.len() - 1);
}

/// The notes tools, as each provider gets them: pinned, and checked against
/// the provider's rules like the golden types.
#[test]
fn notes_projections_for_every_provider() {
    let registry = || {
        notes::tools::registry(std::sync::Arc::new(notes::store::Store::new(Some(
            notes::store::MEMORY.into(),
        ))))
        .expect("the notes tools register")
    };
    let pin =
        |projections: &[ToolProjection]| Value::Array(projections.iter().map(pinned).collect());

    let openai = ProviderTools::new(registry(), OpenAi::chat_completions())
        .projections()
        .unwrap();
    golden::check("providers/openai/notes.json", &pin(&openai));
    for projection in openai.iter() {
        assert_function_name(&projection.name);
        assert_eq!(
            projection.entry["function"]["strict"], true,
            "{}: {:?}",
            projection.tool, projection.notes
        );
        assert_strict(
            &projection.tool,
            &projection.entry["function"]["parameters"],
        );
    }

    let anthropic = ProviderTools::new(registry(), Anthropic)
        .projections()
        .unwrap();
    golden::check("providers/anthropic/notes.json", &pin(&anthropic));
    let registry_now = registry();
    for projection in anthropic.iter() {
        let def = registry_now.get(&projection.tool).unwrap();
        assert_eq!(
            &projection.entry["input_schema"],
            def.effective_input_schema()
        );
    }

    let gemini = ProviderTools::new(registry(), Gemini)
        .projections()
        .unwrap();
    golden::check("providers/gemini/notes.json", &pin(&gemini));
    for projection in gemini.iter() {
        assert_function_name(&projection.name);
        assert!(
            projection.entry.get("parametersJsonSchema").is_none(),
            "{}: {:?}",
            projection.tool,
            projection.notes
        );
        assert_gemini_schema(&projection.tool, &projection.entry["parameters"]);
    }
    let names: Vec<&str> = gemini.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "notes_create",
            "notes_get",
            "notes_search",
            "notes_list",
            "notes_rename",
            "notes_archive",
            "notes_export",
            "notes_export_file",
            "notes_reindex",
            "jobs_status",
            "jobs_result",
            "jobs_cancel",
            "jobs_list",
        ]
    );
}
