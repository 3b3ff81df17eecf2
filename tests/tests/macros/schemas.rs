//! Client-ready schemas, pinned by golden files, and proof that the
//! enforced schema accepts exactly what it advertises: every value a Rust
//! caller produces is accepted and round-trips through the handler; values
//! serde would refuse are refused by the schema first, with JSON-pointer
//! paths.
//!
//! Regenerate the golden files with `GONK_BLESS=1 cargo test -p
//! gonk-tools-tests --test macros schemas::`, then review the diff.

use gonk_tools_tests::golden;
use std::collections::BTreeMap;

use gonk_tools::client::InProcess;
use gonk_tools::prelude::*;
use gonk_tools::schema::encode_input;
use gonk_tools::schema::input_schema_for;
use serde_json::Value;

/// An author.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Author {
    /// Display name.
    pub name: String,
    /// Contact address.
    pub email: Option<String>,
}

/// A post with a nested author and comments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Nested {
    /// Title of the post.
    pub title: String,
    /// Who wrote it.
    pub author: Author,
    /// Who commented.
    pub commenters: Vec<Author>,
}

/// How strict to be.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Accept everything.
    Lenient,
    /// Refuse on the first problem.
    Strict,
    /// Report, never refuse.
    DryRun,
}

/// Unit enums: plain, in a vector, optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnitEnums {
    pub mode: Mode,
    pub fallbacks: Vec<Mode>,
    pub override_mode: Option<Mode>,
}

/// An externally tagged enum with unit, newtype, tuple and struct variants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Do nothing.
    Noop,
    /// Move to a path.
    Move(String),
    /// Resize to width × height.
    Resize(u32, u32),
    /// Rename, optionally keeping a copy.
    Rename { to: String, keep_copy: Option<bool> },
}

/// An internally tagged enum.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Shape {
    Circle {
        radius: f64,
    },
    Rect {
        width: f64,
        height: f64,
        label: Option<String>,
    },
}

/// Data-carrying enums as fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DataEnums {
    pub action: Action,
    pub shapes: Vec<Shape>,
}

/// Every optional shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Optionals {
    pub text: Option<String>,
    pub count: Option<u16>,
    pub tags: Option<Vec<String>>,
    pub author: Option<Author>,
    /// Defaults to 10 when absent.
    #[serde(default = "ten")]
    pub page_size: u32,
}

fn ten() -> u32 {
    10
}

/// Vectors and maps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Collections {
    pub names: Vec<String>,
    pub matrix: Vec<Vec<i64>>,
    pub scores: BTreeMap<String, u32>,
    pub authors_by_id: BTreeMap<String, Author>,
}

/// Constrained fields; unknown fields refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Constrained {
    /// A slug.
    #[schemars(length(min = 3, max = 16), regex(pattern = r"^[a-z][a-z0-9-]*$"))]
    pub slug: String,
    /// A ratio.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub ratio: f64,
    /// Fits in a byte.
    pub level: u8,
    /// Between one and three items.
    #[schemars(length(min = 1, max = 3))]
    pub items: Vec<String>,
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u32>,
}

/// A recursive type (keeps a `$ref` to the root).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tree {
    pub value: i32,
    pub children: Vec<Tree>,
}

/// A root that is an internally tagged enum.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Command {
    Get { key: String },
    Set { key: String, value: i64 },
}

fn check_golden(name: &str, schema: &Value) {
    golden::check(&format!("schemas/{name}.json"), schema);
}

/// The rules of a client-ready schema, checked on every node.
fn assert_client_ready(schema: &Value, recursive: bool) {
    assert_eq!(schema["type"], "object", "root is an object: {schema}");
    assert!(schema.get("$schema").is_none());
    assert!(schema.get("title").is_none());
    if !recursive {
        assert!(
            !schema.to_string().contains("$ref"),
            "refs inlined: {schema}"
        );
        assert!(schema.get("$defs").is_none());
    }
    fn walk(node: &Value) {
        match node {
            Value::Object(map) => {
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let Some(Value::Object(props)) = map.get("properties") {
                    for (name, prop) in props {
                        if !required.contains(&name.as_str()) {
                            let text = prop.to_string();
                            assert!(
                                !text.contains("\"null\""),
                                "optional property {name} is not nullable: {text}"
                            );
                        }
                    }
                }
                map.values().for_each(walk);
            }
            Value::Array(items) => items.iter().for_each(walk),
            _ => {}
        }
    }
    walk(schema);
}

macro_rules! schemas {
    ($($ty:ident),* $(,)?) => {
        #[test]
        fn golden_schemas() {
            $(
                let schema = input_schema_for::<$ty>();
                assert_client_ready(&schema, stringify!($ty) == "Tree");
                check_golden(stringify!($ty), &schema);
            )*
        }
    };
}

schemas!(
    Nested,
    UnitEnums,
    DataEnums,
    Optionals,
    Collections,
    Constrained,
    Tree,
    Command
);

#[test]
fn schema_details() {
    let s = input_schema_for::<Nested>();
    assert_eq!(
        s["description"],
        "A post with a nested author and comments."
    );
    assert_eq!(
        s["properties"]["author"]["properties"]["name"]["description"],
        "Display name."
    );
    assert_eq!(
        s["properties"]["author"]["properties"]["email"]["type"],
        "string"
    );

    let s = input_schema_for::<UnitEnums>();
    assert_eq!(s["properties"]["mode"]["type"], "string");
    assert_eq!(
        s["properties"]["mode"]["enum"],
        json!(["lenient", "strict", "dry-run"])
    );
    assert_eq!(
        s["properties"]["override_mode"]["enum"],
        json!(["lenient", "strict", "dry-run"])
    );

    let s = input_schema_for::<Constrained>();
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["properties"]["slug"]["minLength"], 3);
    assert_eq!(s["properties"]["slug"]["pattern"], "^[a-z][a-z0-9-]*$");
    assert_eq!(s["properties"]["level"]["maximum"], 255);
    assert_eq!(s["properties"]["limit"]["type"], "integer");
    assert_eq!(s["properties"]["limit"]["maximum"], 20);
    assert_eq!(s["required"], json!(["slug", "ratio", "level", "items"]));

    let s = input_schema_for::<Collections>();
    assert_eq!(s["properties"]["scores"]["type"], "object");
    assert_eq!(
        s["properties"]["scores"]["additionalProperties"]["type"],
        "integer"
    );

    let s = input_schema_for::<Tree>();
    assert_eq!(
        s["properties"]["children"]["items"]["$ref"], "#",
        "recursion refers to the root: {s}"
    );
}

// ------------------------------------------------ enforcement through dispatch

/// Echo a post.
#[tool]
async fn echo_nested(input: Nested) -> Nested {
    input
}
/// Echo unit enums.
#[tool]
async fn echo_unit_enums(input: UnitEnums) -> UnitEnums {
    input
}
/// Echo data enums.
#[tool]
async fn echo_data_enums(input: DataEnums) -> DataEnums {
    input
}
/// Echo optionals.
#[tool]
async fn echo_optionals(input: Optionals) -> Optionals {
    input
}
/// Echo collections.
#[tool]
async fn echo_collections(input: Collections) -> Collections {
    input
}
/// Echo constrained fields.
#[tool]
async fn echo_constrained(input: Constrained) -> Constrained {
    input
}
/// Echo a tree.
#[tool]
async fn echo_tree(input: Tree) -> Tree {
    input
}
/// Echo a command.
#[tool]
async fn echo_command(input: Command) -> Command {
    input
}

toolset! {
    /// Echo tools, one per schema shape.
    pub struct Echo {
        EchoNested, EchoUnitEnums, EchoDataEnums, EchoOptionals,
        EchoCollections, EchoConstrained, EchoTree, EchoCommand,
    }
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    Echo::register_tools(&registry).unwrap();
    registry
}

async fn invoke(registry: &ToolRegistry, tool: &str, input: Value) -> Result<Value, ToolError> {
    let events = registry.invoke(tool, input, ToolContext::new());
    collect_tool_outcome(events, |_| {}).await.map(|o| o.data)
}

async fn rejected(registry: &ToolRegistry, tool: &str, input: Value) -> Vec<String> {
    let error = invoke(registry, tool, input.clone())
        .await
        .expect_err(&format!("{tool} must refuse {input}"));
    assert_eq!(
        error.code,
        ErrorCode::InvalidInput,
        "{tool} {input}: {error}"
    );
    let mut paths: Vec<String> = error.issues().into_iter().map(|i| i.path).collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Every value a Rust caller can produce is accepted and arrives intact:
/// the advertised schema does not refuse what the type allows.
#[tokio::test]
async fn what_rust_produces_is_accepted_and_round_trips() {
    let client = EchoClient::new(InProcess::new(registry()));
    let author = Author {
        name: "ann".into(),
        email: None,
    };
    let nested = Nested {
        title: "t".into(),
        author: author.clone(),
        commenters: vec![
            author.clone(),
            Author {
                name: "bo".into(),
                email: Some("bo@x".into()),
            },
        ],
    };
    assert_eq!(client.echo_nested(nested.clone()).await.unwrap(), nested);

    for mode in [Mode::Lenient, Mode::Strict, Mode::DryRun] {
        let v = UnitEnums {
            mode,
            fallbacks: vec![mode, Mode::Strict],
            override_mode: Some(mode),
        };
        assert_eq!(client.echo_unit_enums(v.clone()).await.unwrap(), v);
    }
    let v = UnitEnums {
        mode: Mode::Strict,
        fallbacks: vec![],
        override_mode: None,
    };
    assert_eq!(client.echo_unit_enums(v.clone()).await.unwrap(), v);

    for action in [
        Action::Noop,
        Action::Move("/tmp".into()),
        Action::Resize(3, 4),
        Action::Rename {
            to: "x".into(),
            keep_copy: None,
        },
        Action::Rename {
            to: "y".into(),
            keep_copy: Some(true),
        },
    ] {
        let v = DataEnums {
            action,
            shapes: vec![
                Shape::Circle { radius: 1.5 },
                Shape::Rect {
                    width: 1.0,
                    height: 2.0,
                    label: None,
                },
                Shape::Rect {
                    width: 1.0,
                    height: 2.0,
                    label: Some("r".into()),
                },
            ],
        };
        assert_eq!(client.echo_data_enums(v.clone()).await.unwrap(), v);
    }

    for v in [
        Optionals {
            text: None,
            count: None,
            tags: None,
            author: None,
            page_size: 10,
        },
        Optionals {
            text: Some("t".into()),
            count: Some(u16::MAX),
            tags: Some(vec!["a".into()]),
            author: Some(author.clone()),
            page_size: 0,
        },
    ] {
        assert_eq!(client.echo_optionals(v.clone()).await.unwrap(), v);
    }

    let v = Collections {
        names: vec!["a".into(), "b".into()],
        matrix: vec![vec![i64::MIN, 0, i64::MAX], vec![]],
        scores: [("x".to_owned(), u32::MAX)].into_iter().collect(),
        authors_by_id: [("1".to_owned(), author.clone())].into_iter().collect(),
    };
    assert_eq!(client.echo_collections(v.clone()).await.unwrap(), v);

    let v = Constrained {
        slug: "abc-1".into(),
        ratio: 0.5,
        level: 255,
        items: vec!["a".into(), "b".into(), "c".into()],
        limit: None,
    };
    assert_eq!(client.echo_constrained(v.clone()).await.unwrap(), v);

    let v = Tree {
        value: 1,
        children: vec![Tree {
            value: 2,
            children: vec![Tree {
                value: 3,
                children: vec![],
            }],
        }],
    };
    assert_eq!(client.echo_tree(v.clone()).await.unwrap(), v);

    for v in [
        Command::Get { key: "k".into() },
        Command::Set {
            key: "k".into(),
            value: -1,
        },
    ] {
        assert_eq!(client.echo_command(v.clone()).await.unwrap(), v);
    }
}

/// What the advertised schema refuses, dispatch refuses before serde runs,
/// with one JSON pointer per violation — including values serde alone
/// would have refused with a less precise message.
#[tokio::test]
async fn what_the_schema_refuses_is_refused_with_pointers() {
    let r = registry();
    assert_eq!(
        rejected(
            &r,
            "echo_nested",
            json!({"title": "t", "author": {"name": 1}, "commenters": [{}]})
        )
        .await,
        ["/author/name", "/commenters/0"]
    );
    assert_eq!(
        rejected(
            &r,
            "echo_nested",
            json!({"title": "t", "author": {"name": "a", "email": null}, "commenters": []})
        )
        .await,
        ["/author/email"],
        "an optional field is not nullable"
    );
    assert_eq!(
        rejected(
            &r,
            "echo_unit_enums",
            json!({"mode": "loose", "fallbacks": ["strict", "dry_run"]})
        )
        .await,
        ["/fallbacks/1", "/mode"]
    );
    assert_eq!(
        rejected(
            &r,
            "echo_data_enums",
            json!({"action": {"resize": [1]}, "shapes": [{"kind": "triangle"}]})
        )
        .await,
        ["/action", "/shapes/0"]
    );
    assert_eq!(
        rejected(&r, "echo_optionals", json!({"count": 70000, "tags": "a"})).await,
        ["/count", "/tags"],
        "u16 range comes from the type"
    );
    assert_eq!(
        rejected(
            &r,
            "echo_collections",
            json!({"names": [], "matrix": [[1.5]], "scores": {"a": -1}, "authors_by_id": {"x": {}}})
        )
        .await,
        ["/authors_by_id/x", "/matrix/0/0", "/scores/a"]
    );
    assert_eq!(
        rejected(
            &r,
            "echo_constrained",
            json!({"slug": "Ab", "ratio": 1.5, "level": 256, "items": [], "limit": 0, "extra": true})
        )
        .await,
        ["", "/items", "/level", "/limit", "/ratio", "/slug"]
    );
    assert_eq!(
        rejected(
            &r,
            "echo_tree",
            json!({"value": 1, "children": [{"value": "x", "children": []}]})
        )
        .await,
        ["/children/0/value"]
    );
    assert_eq!(
        rejected(&r, "echo_command", json!({"op": "delete", "key": "k"})).await,
        [""]
    );
    assert_eq!(rejected(&r, "echo_command", json!("get")).await, [""]);
}

#[test]
fn the_encoder_sends_none_as_absent() {
    let value = encode_input(&Optionals {
        text: None,
        count: Some(1),
        tags: None,
        author: None,
        page_size: 10,
    })
    .unwrap();
    assert_eq!(value, json!({"count": 1, "page_size": 10}));
}
