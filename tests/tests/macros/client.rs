//! Acceptance test of the macro surface: tools defined with `#[tool]`,
//! registered through a tool set, called through the generated typed
//! client over the in-process transport.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::Stream;
use gonk_tools::client::{ClientError, InProcess};
use gonk_tools::prelude::*;

// ---------------------------------------------------------------- inputs

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchNotes {
    /// Free-text query.
    #[schemars(length(min = 1))]
    pub query: String,
    /// At most this many hits.
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u32>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hits {
    pub titles: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NewNote {
    #[schemars(length(min = 1, max = 40))]
    pub title: String,
    pub body: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Created {
    pub id: usize,
    pub total: usize,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Count {
    #[schemars(range(min = 1, max = 10))]
    pub to: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Lookup {
    pub id: usize,
}

/// Application state, provided to the registry.
#[derive(Default)]
pub struct Store {
    notes: Mutex<Vec<(String, String)>>,
}

// ---------------------------------------------------------------- tools

/// Search notes by title.
#[tool(
    name = "notes.search",
    approval = "read",
    capabilities(reads_fs, idempotent),
    mcp(read_only)
)]
pub async fn notes_search(input: SearchNotes, store: State<Store>) -> Result<Hits, ToolError> {
    let notes = store.notes.lock().unwrap();
    let limit = input.limit.unwrap_or(10) as usize;
    let titles = notes
        .iter()
        .filter(|(title, _)| title.contains(&input.query))
        .map(|(title, _)| title.clone())
        .take(limit)
        .collect();
    Ok(Hits { titles })
}

/// Create a note.
#[tool(
    name = "notes.create",
    approval(tier = "write", reason = "adds a note"),
    capabilities(writes_fs)
)]
pub async fn notes_create(input: NewNote, ctx: ToolContext, store: State<Store>) -> Created {
    ctx.log().info("creating a note");
    let mut notes = store.notes.lock().unwrap();
    notes.push((input.title, input.body));
    Created {
        id: notes.len() - 1,
        total: notes.len(),
    }
}

/// Count how many notes there are.
#[tool(name = "notes.count")]
pub async fn notes_count(store: State<Store>) -> usize {
    store.notes.lock().unwrap().len()
}

/// Count up to `to`, streaming progress and data chunks.
#[tool(name = "count-up", latency = "seconds")]
pub async fn count_up(input: Count) -> impl Stream<Item = ToolEvent<Vec<u32>>> {
    gonk_tools::stream! {
        let mut seen = Vec::new();
        for i in 1..=input.to {
            seen.push(i);
            yield ToolEvent::progress(f64::from(i) * 100.0 / f64::from(input.to), Some(format!("at {i}")));
            yield ToolEvent::data(json!(i));
        }
        yield ToolEvent::result(seen);
    }
}

/// Show a note, with a display for humans.
#[tool(name = "notes.show", approval = "read")]
pub async fn notes_show(
    input: Lookup,
    ctx: &ToolContext,
    store: State<Store>,
) -> Result<ToolOutput<String>, ToolError> {
    let _ = ctx.tool_name();
    let notes = store.notes.lock().unwrap();
    match notes.get(input.id) {
        Some((title, body)) => Ok(ToolOutput::new(body.clone()).with_display(format!("# {title}"))),
        None => Err(ToolError::new(
            ErrorCode::custom("NOTE_NOT_FOUND"),
            format!("no note {}", input.id),
        )),
    }
}

/// Titles by first letter: composes `notes.search` through `ctx.call`.
#[tool(name = "notes.index", output_schema = false)]
pub async fn notes_index(ctx: ToolContext) -> Result<BTreeMap<char, Vec<String>>, ToolError> {
    let hits = ctx
        .call::<NotesSearch>(SearchNotes {
            query: String::new() + "o",
            limit: None,
        })
        .await?;
    let mut index: BTreeMap<char, Vec<String>> = BTreeMap::new();
    for title in hits.titles {
        if let Some(first) = title.chars().next() {
            index.entry(first).or_default().push(title);
        }
    }
    Ok(index)
}

toolset! {
    /// The notes tools.
    pub struct NotesTools {
        NotesSearch,
        NotesCreate,
        NotesCount,
        CountUp,
        NotesShow,
        NotesIndex,
    }
}

fn client() -> NotesToolsClient<InProcess> {
    let registry = ToolRegistry::builder().state(Store::default()).build();
    NotesTools::register_tools(&registry).expect("the tool set registers");
    NotesToolsClient::new(InProcess::new(registry))
}

#[tokio::test]
async fn every_tool_answers_through_the_typed_client() {
    let client = client();
    assert_eq!(
        NotesTools::TOOL_NAMES,
        [
            "notes.search",
            "notes.create",
            "notes.count",
            "count-up",
            "notes.show",
            "notes.index"
        ]
    );

    let created = client
        .notes_create(NewNote {
            title: "groceries".into(),
            body: "milk".into(),
        })
        .await
        .unwrap();
    assert_eq!(created, Created { id: 0, total: 1 });
    let created = client
        .notes_create(NewNote {
            title: "todo".into(),
            body: "write tests".into(),
        })
        .await
        .unwrap();
    assert_eq!(created, Created { id: 1, total: 2 });

    assert_eq!(client.notes_count(NoInput).await.unwrap(), 2);

    let hits = client
        .notes_search(SearchNotes {
            query: "o".into(),
            limit: Some(1),
        })
        .await
        .unwrap();
    assert_eq!(hits.titles, ["groceries"]);

    assert_eq!(
        client.notes_show(Lookup { id: 1 }).await.unwrap(),
        "write tests"
    );
    let missing = client.notes_show(Lookup { id: 7 }).await.unwrap_err();
    assert_eq!(missing.code(), Some(&ErrorCode::custom("NOTE_NOT_FOUND")));

    let index = client.notes_index(NoInput).await.unwrap();
    assert_eq!(index.get(&'g').unwrap(), &["groceries"]);
    assert_eq!(index.get(&'t').unwrap(), &["todo"]);

    assert_eq!(client.count_up(Count { to: 3 }).await.unwrap(), [1, 2, 3]);
}

#[tokio::test]
async fn display_survives_the_typed_call() {
    let client = client();
    client
        .notes_create(NewNote {
            title: "a".into(),
            body: "b".into(),
        })
        .await
        .unwrap();
    let output =
        gonk_tools::client::call_output::<NotesShow>(client.transport(), Lookup { id: 0 }, |_| {})
            .await
            .unwrap();
    assert_eq!(output.data, "b");
    assert_eq!(output.display, Some(ToolDisplay::Text("# a".into())));
}

#[tokio::test]
async fn streaming_events_arrive_in_order() {
    let registry = ToolRegistry::builder().state(Store::default()).build();
    NotesTools::register_tools(&registry).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let transport =
        InProcess::new(registry).tap(move |event| sink.lock().unwrap().push(event.clone()));
    let client = NotesToolsClient::new(transport);

    let result = client.count_up(Count { to: 3 }).await.unwrap();
    assert_eq!(result, [1, 2, 3]);

    let events = seen.lock().unwrap().clone();
    let expected: Vec<ToolEvent> = (1..=3u32)
        .flat_map(|i| {
            [
                ToolEvent::progress(f64::from(i) * 100.0 / 3.0, Some(format!("at {i}"))),
                ToolEvent::data(json!(i)),
            ]
        })
        .chain([ToolEvent::result(json!([1, 2, 3]))])
        .collect();
    assert_eq!(events, expected);
}

#[tokio::test]
async fn schema_violations_come_back_as_invalid_input_with_pointers() {
    let client = client();
    let error = client
        .notes_search(SearchNotes {
            query: String::new(),
            limit: Some(99),
        })
        .await
        .unwrap_err();
    let ClientError::Tool(error) = error else {
        panic!("expected a tool error, got {error:?}");
    };
    assert_eq!(error.code, ErrorCode::InvalidInput);
    let mut paths: Vec<String> = error.issues().into_iter().map(|i| i.path).collect();
    paths.sort();
    assert_eq!(paths, ["/limit", "/query"]);

    let error = client
        .notes_create(NewNote {
            title: "x".repeat(41),
            body: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(&ErrorCode::InvalidInput));
    let paths: Vec<String> = error
        .tool_error()
        .unwrap()
        .issues()
        .into_iter()
        .map(|i| i.path)
        .collect();
    assert_eq!(paths, ["/title"]);

    let error = client.count_up(Count { to: 0 }).await.unwrap_err();
    assert_eq!(error.code(), Some(&ErrorCode::InvalidInput));
}

#[test]
fn metadata_comes_from_the_attributes() {
    let def = NotesSearch::definition();
    assert_eq!(def.name, "notes.search");
    assert_eq!(def.description, "Search notes by title.");
    assert!(def.capabilities.reads_fs && def.capabilities.idempotent);
    assert_eq!(def.hints.mcp.annotations.read_only, Some(true));
    assert!(def.output_schema.is_some());
    assert_eq!(def.required_state().count(), 1);

    let def = NotesCreate::definition();
    match &def.approval {
        Some(gonk_tools::definition::Approval::Static(spec)) => {
            assert_eq!(spec.tier, ApprovalTier::Write);
            assert_eq!(spec.reason.as_deref(), Some("adds a note"));
            assert!(!spec.overridable);
        }
        other => panic!("unexpected approval {other:?}"),
    }
    assert!(NotesIndex::definition().output_schema.is_none());
    assert_eq!(
        NotesCount::definition().input_schema,
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn missing_state_is_refused_at_registration() {
    let registry = ToolRegistry::new();
    let error = NotesTools::register_tools(&registry).unwrap_err();
    assert!(
        matches!(&error, gonk_tools::RegistryError::MissingState { type_name, .. } if type_name.ends_with("Store")),
        "{error}"
    );
    assert!(registry.names().is_empty(), "all or none");
}

#[tokio::test]
async fn merge_refuses_a_tool_whose_state_the_merged_registry_lacks() {
    // `merge` builds a registry with the state of its receiver, which here
    // has none: the tool that extracts `State<Store>` is refused, as at
    // registration, so no call can find its state missing.
    let with_state = ToolRegistry::builder().state(Store::default()).build();
    with_state.register(NotesCount::definition()).unwrap();
    let error = ToolRegistry::new().merge(&with_state).unwrap_err();
    assert!(
        matches!(&error, gonk_tools::RegistryError::MissingState { name, type_name }
            if name == "notes.count" && type_name.ends_with("Store")),
        "{error}"
    );
    // The registry keeps serving.
    let events = with_state.invoke("notes.count", json!({}), ToolContext::new());
    assert_eq!(collect_tool_outcome(events, |_| {}).await.unwrap().data, 0);
}

#[tokio::test]
async fn the_fn_stays_callable_as_written() {
    let hits = notes_search(
        SearchNotes {
            query: "x".into(),
            limit: None,
        },
        State(Arc::new(Store::default())),
    )
    .await
    .unwrap();
    assert!(hits.titles.is_empty());
}

// ------------------------------------------------ #[tools] on an impl block

/// A counter whose tools are `&self` methods.
pub struct Counter {
    value: Mutex<i64>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    #[schemars(range(min = -100, max = 100))]
    pub by: i64,
}

#[tools]
impl Counter {
    /// Add to the counter.
    #[tool(name = "counter.add", approval = "write")]
    pub async fn add(&self, input: Step) -> i64 {
        let mut value = self.value.lock().unwrap();
        *value += input.by;
        *value
    }

    /// Read the counter, streaming a log line first.
    #[tool(name = "counter.read", approval = "read")]
    pub async fn read(&self, ctx: &ToolContext) -> impl Stream<Item = ToolEvent<i64>> {
        let value = *self.value.lock().unwrap();
        let tool = ctx.tool_name().unwrap_or_default().to_owned();
        gonk_tools::stream! {
            yield ToolEvent::log(LogLevel::Info, format!("{tool} read {value}"));
            yield ToolEvent::result(value);
        }
    }
}

#[tokio::test]
async fn method_tools_share_their_receiver() {
    let counter = Arc::new(Counter {
        value: Mutex::new(0),
    });
    let registry = ToolRegistry::new();
    counter.register_tools(&registry).unwrap();
    assert_eq!(registry.names(), ["counter.add", "counter.read"]);

    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&logs);
    let client = CounterClient::new(InProcess::new(registry).tap(move |event| {
        if let ToolEvent::Log { message, .. } = event {
            sink.lock().unwrap().push(message.clone());
        }
    }));
    assert_eq!(client.counter_add(Step { by: 5 }).await.unwrap(), 5);
    assert_eq!(client.counter_add(Step { by: -2 }).await.unwrap(), 3);
    assert_eq!(client.counter_read(NoInput).await.unwrap(), 3);
    assert_eq!(
        *counter.value.lock().unwrap(),
        3,
        "the tools mutate the registered value"
    );
    assert_eq!(*logs.lock().unwrap(), ["counter.read read 3"]);

    let error = client.counter_add(Step { by: 1000 }).await.unwrap_err();
    assert_eq!(error.code(), Some(&ErrorCode::InvalidInput));
    assert_eq!(error.tool_error().unwrap().issues()[0].path, "/by");
}
