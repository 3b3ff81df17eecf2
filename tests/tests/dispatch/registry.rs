//! Registry: registration rules, source catalogs, look-up and composition
//! of registries, driven through the public API only.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use gonk_tools::prelude::*;
use gonk_tools::registry::RegisterOptions;
use gonk_tools::RegistryError;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

fn tool(name: &str) -> ToolDefinition {
    let reply = name.to_owned();
    ToolDefinition::builder(name)
        .description(format!("The {name} tool."))
        .handler(move |_: Empty, _| {
            let reply = reply.clone();
            async move { Ok::<_, ToolError>(reply) }
        })
        .build()
}

fn tagged(name: &str, tag: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("tagged")
        .tags([tag])
        .category(tag)
        .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
        .build()
}

#[test]
fn register_get_has_list_in_insertion_order() {
    let registry = ToolRegistry::new();
    registry.register(tool("zeta")).unwrap();
    registry.register(tool("alpha")).unwrap();
    registry.register(tool("mid")).unwrap();
    assert!(registry.has("alpha"));
    assert!(!registry.has("beta"));
    assert_eq!(registry.get("zeta").unwrap().description, "The zeta tool.");
    assert!(registry.get("nope").is_none());
    assert_eq!(registry.names(), ["zeta", "alpha", "mid"]);
}

#[test]
fn duplicate_is_an_error_unless_overwrite_is_asked() {
    let registry = ToolRegistry::new();
    registry.register(tool("x")).unwrap();
    let err = registry.register(tool("x")).unwrap_err();
    assert_eq!(err, RegistryError::Duplicate("x".into()));
    assert_eq!(err.to_string(), "Tool already registered: x");

    let replacement = ToolDefinition::builder("x")
        .description("replaced")
        .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
        .build();
    registry
        .register_with([replacement], RegisterOptions { overwrite: true })
        .unwrap();
    assert_eq!(registry.get("x").unwrap().description, "replaced");
    assert_eq!(registry.names(), ["x"]);
}

#[test]
fn requires_false_skips_the_tool_silently() {
    let registry = ToolRegistry::new();
    let gated = ToolDefinition::builder("speak")
        .description("Speak text.")
        .requires(|| false)
        .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
        .build();
    assert_eq!(registry.register(gated), Ok(()));
    assert!(!registry.has("speak"));
    assert!(registry.list().is_empty());

    let open = ToolDefinition::builder("speak")
        .description("Speak text.")
        .requires(|| true)
        .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
        .build();
    registry.register(open).unwrap();
    assert!(registry.has("speak"));
}

#[tokio::test]
async fn a_skipped_tool_is_not_invokable() {
    let registry = ToolRegistry::new();
    let gated = ToolDefinition::builder("speak")
        .description("Speak text.")
        .requires(|| false)
        .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
        .build();
    registry.register(gated).unwrap();
    let err = collect_tool_outcome(
        registry.invoke("speak", json!({}), ToolContext::new()),
        |_| {},
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::ToolNotFound);
}

#[test]
fn names_are_validated() {
    let registry = ToolRegistry::new();
    let long = format!("a{}", "b".repeat(128));
    for bad in [
        "",
        "1abc",
        "_x",
        "has space",
        "slash/name",
        "ümlaut",
        long.as_str(),
    ] {
        let err = registry.register(tool(bad)).unwrap_err();
        assert!(
            matches!(err, RegistryError::InvalidName { ref name, .. } if name == bad),
            "{bad:?} gave {err:?}"
        );
        assert!(err.to_string().starts_with("Invalid tool name: "), "{err}");
    }
    let max = format!("a{}", "b".repeat(127));
    for good in ["a", "notes.search", "A-b_c.9", max.as_str()] {
        registry.register(tool(good)).unwrap();
    }
}

#[test]
fn missing_description_handler_or_state_is_refused() {
    let registry = ToolRegistry::new();
    let undocumented = ToolDefinition::builder("quiet")
        .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
        .build();
    assert_eq!(
        registry.register(undocumented).unwrap_err(),
        RegistryError::MissingDescription("quiet".into())
    );

    let no_handler = ToolDefinition::builder("hollow").description("d").build();
    let err = registry.register(no_handler).unwrap_err();
    assert_eq!(err, RegistryError::MissingHandler("hollow".into()));
    assert!(err.to_string().contains(".handler("), "{err}");

    struct Db;
    let needs_db = ToolDefinition::builder("query")
        .description("d")
        .requires_state::<Db>()
        .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
        .build();
    let err = registry.register(needs_db.clone()).unwrap_err();
    assert!(matches!(err, RegistryError::MissingState { ref name, .. } if name == "query"));
    assert!(err.to_string().contains("Db"), "{err}");
    registry.insert_state(Db);
    registry.register(needs_db).unwrap();
}

#[test]
fn invalid_schema_override_is_refused() {
    let registry = ToolRegistry::new();
    let def = ToolDefinition::builder("bad.schema")
        .description("d")
        .input_json_schema(json!({"type": 12}))
        .raw_handler(|_, _| async { Ok(ToolOutput::new(json!(null))) })
        .build();
    let err = registry.register(def).unwrap_err();
    assert!(
        matches!(err, RegistryError::InvalidSchema { .. }),
        "{err:?}"
    );
}

#[test]
fn invalid_hand_written_output_schema_is_refused() {
    let registry = ToolRegistry::new();
    let def = ToolDefinition::builder("bad.output")
        .description("d")
        .output_schema(json!({"type": 12}))
        .raw_handler(|_, _| async { Ok(ToolOutput::new(json!(null))) })
        .build();
    let err = registry.register(def).unwrap_err();
    assert!(
        matches!(err, RegistryError::InvalidSchema { .. }),
        "{err:?}"
    );
}

#[test]
fn register_all_is_all_or_nothing() {
    let registry = ToolRegistry::new();
    registry.register(tool("taken")).unwrap();
    let err = registry
        .register_all([tool("fresh1"), tool("taken"), tool("fresh2")])
        .unwrap_err();
    assert_eq!(err, RegistryError::Duplicate("taken".into()));
    assert_eq!(registry.names(), ["taken"]);

    let err = registry.register_all([tool("a1"), tool("a1")]).unwrap_err();
    assert_eq!(err, RegistryError::Duplicate("a1".into()));
    assert_eq!(registry.names(), ["taken"]);

    registry.register_all([tool("b1"), tool("b2")]).unwrap();
    assert_eq!(registry.names(), ["taken", "b1", "b2"]);
}

#[test]
fn register_another_registry() {
    let other = ToolRegistry::new();
    other.register(tool("o1")).unwrap();
    other.replace_source("remote", [tool("o2")]).unwrap();
    let registry = ToolRegistry::new();
    registry.register(tool("mine")).unwrap();
    registry.register_registry(&other).unwrap();
    assert_eq!(registry.names(), ["mine", "o1", "o2"]);
    assert_eq!(
        registry.register_registry(&other).unwrap_err(),
        RegistryError::Duplicate("o1".into())
    );
}

#[test]
fn source_catalogs_list_after_local_tools_and_replace_whole() {
    let registry = ToolRegistry::new();
    registry.register(tool("local")).unwrap();
    registry
        .replace_source("remote", [tool("r.one"), tool("r.two")])
        .unwrap();
    assert_eq!(registry.names(), ["local", "r.one", "r.two"]);
    assert_eq!(registry.sources(), ["remote"]);

    registry
        .replace_source("remote", [tool("r.three")])
        .unwrap();
    assert_eq!(registry.names(), ["local", "r.three"]);
    assert!(!registry.has("r.one"));

    registry.replace_source("remote", []).unwrap();
    assert_eq!(registry.names(), ["local"]);
    assert!(registry.sources().is_empty());
}

#[test]
fn source_and_local_names_cannot_collide() {
    let registry = ToolRegistry::new();
    registry.register(tool("x")).unwrap();
    let err = registry
        .replace_source("a", [tool("y"), tool("x")])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Source catalog a conflicts with registered tool: x"
    );
    assert!(!registry.has("y"), "a failed swap must not add anything");

    registry.replace_source("a", [tool("y")]).unwrap();
    let err = registry.register(tool("y")).unwrap_err();
    assert!(
        matches!(err, RegistryError::OwnedBySource { ref name, ref source_id } if name == "y" && source_id == "a")
    );
    let err = registry
        .register_with([tool("y")], RegisterOptions { overwrite: true })
        .unwrap_err();
    assert!(
        matches!(err, RegistryError::OwnedBySource { .. }),
        "overwrite must not take a source's name"
    );

    // Another source owns it: the error names both sources.
    let err = registry.replace_source("b", [tool("y")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Source catalog b conflicts with source a: y"
    );
}

#[test]
fn a_failed_swap_keeps_the_old_catalog() {
    let registry = ToolRegistry::new();
    registry
        .replace_source("s", [tool("s.a"), tool("s.b")])
        .unwrap();
    let err = registry
        .replace_source("s", [tool("s.c"), tool("bad name")])
        .unwrap_err();
    assert!(matches!(err, RegistryError::InvalidName { .. }));
    assert_eq!(registry.names(), ["s.a", "s.b"]);
    let err = registry
        .replace_source("s", [tool("s.c"), tool("s.c")])
        .unwrap_err();
    assert_eq!(
        err,
        RegistryError::DuplicateInSource {
            source_id: "s".into(),
            name: "s.c".into()
        }
    );
    assert_eq!(registry.names(), ["s.a", "s.b"]);
}

#[test]
fn replace_source_is_atomic_for_concurrent_readers() {
    let registry = ToolRegistry::new();
    let a: Vec<String> = (0..40).map(|i| format!("a{i}")).collect();
    let b: Vec<String> = (0..40).map(|i| format!("b{i}")).collect();
    registry
        .replace_source("s", a.iter().map(|n| tool(n)))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let registry = registry.clone();
        let stop = Arc::clone(&stop);
        let (a, b) = (a.clone(), b.clone());
        thread::spawn(move || {
            let mut seen = [0usize; 2];
            while !stop.load(Ordering::Relaxed) {
                let names = registry.names();
                if names == a {
                    seen[0] += 1;
                } else if names == b {
                    seen[1] += 1;
                } else {
                    panic!("reader saw a mixed catalog: {names:?}");
                }
            }
            seen
        })
    };
    let defs_a: Vec<ToolDefinition> = a.iter().map(|n| tool(n)).collect();
    let defs_b: Vec<ToolDefinition> = b.iter().map(|n| tool(n)).collect();
    for round in 0..400 {
        let next = if round % 2 == 0 { &defs_b } else { &defs_a };
        registry.replace_source("s", next.iter().cloned()).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let seen = reader.join().expect("reader thread saw a torn catalog");
    assert!(seen[0] + seen[1] > 0, "reader never ran");
}

#[test]
fn merge_extract_filter() {
    let left = ToolRegistry::new();
    left.register(tagged("l.read", "read")).unwrap();
    left.register(tagged("l.write", "write")).unwrap();
    let right = ToolRegistry::new();
    right.register(tagged("r.read", "read")).unwrap();
    right.replace_source("ext", [tool("ext.tool")]).unwrap();

    let merged = left.merge(&right).unwrap();
    assert_eq!(merged.names(), ["l.read", "l.write", "r.read", "ext.tool"]);
    assert_eq!(merged.sources(), ["ext"]);
    // The originals are untouched.
    assert_eq!(left.names(), ["l.read", "l.write"]);
    assert_eq!(
        merged.merge(&left).unwrap_err(),
        RegistryError::Duplicate("l.read".into())
    );

    let extracted = merged.extract(["r.read", "l.read"]).unwrap();
    assert_eq!(extracted.names(), ["r.read", "l.read"]);
    assert_eq!(
        merged.extract(["l.read", "ghost"]).unwrap_err(),
        RegistryError::NotFound("ghost".into())
    );

    let reads = merged.filter(|d| d.tags.iter().any(|t| t == "read"));
    assert_eq!(reads.names(), ["l.read", "r.read"]);
}

#[tokio::test]
async fn derived_registries_dispatch_and_keep_metrics_and_state() {
    use gonk_tools::metrics::InMemoryMetrics;
    struct Greeting(&'static str);
    let metrics = Arc::new(InMemoryMetrics::new());
    let base = ToolRegistry::builder()
        .metrics(metrics.clone())
        .state(Greeting("hello"))
        .build();
    base.register(
        ToolDefinition::builder("greet")
            .description("Greets.")
            .requires_state::<Greeting>()
            .handler(|_: Empty, ctx: ToolContext| async move {
                let greeting = ctx
                    .state::<Greeting>()
                    .ok_or_else(|| ToolError::internal("no state"))?;
                Ok::<_, ToolError>(greeting.0 .0)
            })
            .build(),
    )
    .unwrap();
    let only = base.extract(["greet"]).unwrap();
    let out = collect_tool_outcome(only.invoke("greet", json!({}), ToolContext::new()), |_| {})
        .await
        .unwrap();
    assert_eq!(out.data, "hello");
    assert_eq!(metrics.snapshot().len(), 1);
}

#[test]
fn an_empty_source_id_is_refused() {
    let registry = ToolRegistry::new();
    for id in ["", "  "] {
        let err = registry.replace_source(id, [tool("s.a")]).unwrap_err();
        assert_eq!(err.to_string(), "Source catalog id must not be empty");
        let err = registry.replace_source(id, []).unwrap_err();
        assert_eq!(err.to_string(), "Source catalog id must not be empty");
    }
    assert!(registry.names().is_empty());
    assert!(registry.sources().is_empty());
}

#[test]
fn a_name_owned_by_another_source_names_that_source() {
    let registry = ToolRegistry::new();
    registry.replace_source("a", [tool("y")]).unwrap();
    let err = registry.replace_source("b", [tool("y")]).unwrap_err();
    assert_eq!(
        err,
        RegistryError::SourcesConflict {
            source_id: "b".into(),
            owner: "a".into(),
            name: "y".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "Source catalog b conflicts with source a: y"
    );
    assert!(!registry.sources().contains(&"b".to_owned()));

    // Merging a registry whose source holds a name another source owns.
    let other = ToolRegistry::new();
    other.replace_source("c", [tool("y")]).unwrap();
    assert_eq!(
        registry.merge(&other).unwrap_err(),
        RegistryError::SourcesConflict {
            source_id: "c".into(),
            owner: "a".into(),
            name: "y".into(),
        }
    );
}

#[test]
fn merge_rechecks_the_state_the_merged_tools_need() {
    struct Db;
    let with_db = ToolRegistry::builder().state(Db).build();
    with_db.register(needs_db_named("db.query")).unwrap();
    with_db
        .replace_source("ext", [needs_db_named("ext.query")])
        .unwrap();
    let without = ToolRegistry::new();
    without.register(tool("plain")).unwrap();

    // The merged registry holds `without`'s state, which has no Db.
    let err = without.merge(&with_db).unwrap_err();
    assert!(
        matches!(&err, RegistryError::MissingState { name, .. } if name == "db.query"),
        "{err:?}"
    );
    assert!(err.to_string().contains("needs application state"), "{err}");
    // A source tool is checked too.
    let only_source = ToolRegistry::builder().state(Db).build();
    only_source
        .replace_source("ext", [needs_db_named("ext.query")])
        .unwrap();
    assert!(matches!(
        without.merge(&only_source).unwrap_err(),
        RegistryError::MissingState { name, .. } if name == "ext.query"
    ));
    // The other way round the state is there.
    let merged = with_db.merge(&without).unwrap();
    assert_eq!(merged.names(), ["db.query", "plain", "ext.query"]);

    fn needs_db_named(name: &str) -> ToolDefinition {
        ToolDefinition::builder(name)
            .description("Needs a Db.")
            .requires_state::<Db>()
            .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
            .build()
    }
}

#[test]
fn registry_messages_start_with_the_contract_wording() {
    let registry = ToolRegistry::new();
    registry.register(tool("local")).unwrap();
    registry.replace_source("s", [tool("s.a")]).unwrap();
    let cases = [
        (
            registry
                .replace_source("s", [tool("s.c"), tool("s.c")])
                .unwrap_err(),
            "Duplicate tool in source catalog s",
        ),
        (
            registry.extract(["local", "ghost"]).unwrap_err(),
            "Tool not in registry: ghost",
        ),
        (
            registry.register(tool("s.a")).unwrap_err(),
            "Tool s.a is owned by a source catalog",
        ),
    ];
    for (error, prefix) in cases {
        let message = error.to_string();
        assert!(
            message.starts_with(prefix),
            "{message:?} starts with {prefix:?}"
        );
    }
    assert_eq!(
        registry
            .replace_source("s", [tool("s.c"), tool("s.c")])
            .unwrap_err(),
        RegistryError::DuplicateInSource {
            source_id: "s".into(),
            name: "s.c".into()
        }
    );
}
