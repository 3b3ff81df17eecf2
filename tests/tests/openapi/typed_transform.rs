//! The typed form of a transform: a wrapper `#[tool]` with fewer
//! arguments that calls the original through a typed client — the one
//! `toolset!` generates for a native original, or `gonk_tools::client::call`
//! with a `Tool` type written by hand for a tool made at run time (what a
//! source imports). The served registry holds only the wrapper; the
//! original runs in a registry of its own, through the whole dispatch path.

use gonk_tools::client::InProcess;
use gonk_tools::prelude::*;
use serde_json::{json, Value};

/// The original's input.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct ListTodos {
    /// Only the done (or the open) ones.
    pub done: Option<bool>,
    /// At most this many.
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Whose todos.
    pub tenant: String,
}

/// One todo.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Todo {
    /// What to do.
    pub title: String,
    /// Whether it is done.
    pub done: bool,
}

/// List a tenant's todos.
#[tool(name = "todo.list", approval = "read")]
async fn todo_list(input: ListTodos) -> Result<Vec<Todo>, ToolError> {
    let all = [
        ("milk", false, "acme"),
        ("bread", true, "acme"),
        ("eggs", false, "acme"),
        ("secret", false, "other"),
    ];
    Ok(all
        .iter()
        .filter(|(_, done, tenant)| {
            *tenant == input.tenant && input.done.is_none_or(|d| d == *done)
        })
        .take(input.limit as usize)
        .map(|(title, done, _)| Todo {
            title: (*title).to_owned(),
            done: *done,
        })
        .collect())
}

toolset! {
    /// The original tools.
    pub struct TodoTools { TodoList }
}

/// The wrapper's input: what callers may choose (the tenant and `done`
/// are fixed, the limit narrowed).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenTodos {
    /// At most this many (3 when left out).
    #[schemars(range(min = 1, max = 3))]
    pub max: Option<u32>,
}

/// The todos acme still has to do.
#[tool(name = "todo.open", approval = "read")]
async fn todo_open(
    input: OpenTodos,
    todos: State<TodoToolsClient<InProcess>>,
) -> Result<Vec<Todo>, ToolError> {
    let all = ListTodos {
        done: Some(false),
        limit: input.max.unwrap_or(3),
        tenant: "acme".to_owned(),
    };
    Ok(todos.todo_list(all).await?)
}

async fn call(registry: &ToolRegistry, name: &str, input: Value) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(registry.invoke(name, input, ToolContext::new()), |_| {}).await
}

#[tokio::test]
async fn a_wrapper_tool_with_fewer_arguments_calls_the_native_original_through_its_typed_client() {
    let originals = ToolRegistry::new();
    TodoTools::register_tools(&originals).unwrap();
    let served = ToolRegistry::builder()
        .state(TodoToolsClient::new(InProcess::new(originals)))
        .build();
    served.register(TodoOpen::definition()).unwrap();
    assert_eq!(served.names(), ["todo.open"], "the original is not served");
    let open = served.get("todo.open").unwrap();
    let properties = open.effective_input_schema()["properties"].clone();
    assert_eq!(
        properties.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["max"],
        "{properties}"
    );

    let got = call(&served, "todo.open", json!({})).await.expect("runs");
    assert_eq!(
        got.data,
        json!([{"title": "milk", "done": false}, {"title": "eggs", "done": false}])
    );
    let one = call(&served, "todo.open", json!({"max": 1}))
        .await
        .expect("runs");
    assert_eq!(one.data, json!([{"title": "milk", "done": false}]));
    for (input, why) in [
        (json!({"tenant": "other"}), "a fixed argument"),
        (json!({"done": true}), "a fixed argument"),
        (json!({"max": 50}), "over the narrowed maximum"),
    ] {
        let error = call(&served, "todo.open", input).await.expect_err(why);
        assert_eq!(error.code, ErrorCode::InvalidInput, "{why}: {error:?}");
    }
}

/// A tool made at run time — as a source imports one — given a Rust type
/// by hand: its name and its input and output types.
struct GetItem;

/// [`GetItem`]'s input.
#[derive(Serialize, JsonSchema)]
struct GetItemInput {
    item_id: String,
    #[serde(rename = "X-Trace")]
    trace: String,
}

impl Tool for GetItem {
    const NAME: &'static str = "api.get_item";
    type Input = GetItemInput;
    type Output = Value;
}

/// The wrapper's input: the item only (the trace is fixed).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ItemId {
    item_id: String,
}

/// Read an item, traced as the gateway.
#[tool(name = "api.traced_item", approval = "read")]
async fn api_traced_item(input: ItemId, api: State<InProcess>) -> Result<Value, ToolError> {
    let fixed = GetItemInput {
        item_id: input.item_id,
        trace: "gateway".to_owned(),
    };
    Ok(gonk_tools::client::call::<GetItem>(&*api, fixed).await?)
}

#[tokio::test]
async fn a_wrapper_calls_a_tool_made_at_run_time_through_a_tool_type_written_by_hand() {
    let imported = ToolRegistry::new();
    imported
        .register(
            ToolDefinition::builder("api.get_item")
                .description("Remote OpenAPI operation api/get_item")
                .input_json_schema(json!({"type": "object",
                    "properties": {"item_id": {"type": "string"}, "X-Trace": {"type": "string"}},
                    "required": ["item_id"], "additionalProperties": false}))
                .raw_handler(|input, _| async move { Ok(ToolOutput::new(input)) })
                .build(),
        )
        .unwrap();
    let served = ToolRegistry::builder()
        .state(InProcess::new(imported))
        .build();
    served.register(ApiTracedItem::definition()).unwrap();
    let got = call(&served, "api.traced_item", json!({"item_id": "7"}))
        .await
        .expect("runs");
    assert_eq!(got.data, json!({"item_id": "7", "X-Trace": "gateway"}));
    let error = call(
        &served,
        "api.traced_item",
        json!({"item_id": "7", "X-Trace": "mine"}),
    )
    .await
    .expect_err("the trace is fixed");
    assert_eq!(error.code, ErrorCode::InvalidInput);
}
