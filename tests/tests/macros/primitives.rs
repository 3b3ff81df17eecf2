//! `#[resource]` and `#[prompt]` end to end: the definitions the macros
//! generate (URI, name, title, description, MIME type, annotations; a
//! prompt's advertised arguments), `Resource::uri` expanding the template
//! into URIs the registry reads back to the same values, handlers reached
//! through `registry.read_resource` / `get_prompt` with their extractors,
//! and completions attached by the macros answering through
//! `registry.complete`.

use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;
use gonk_tools::prompt::{Prompt, PromptContent, PromptMessage};
use gonk_tools::resource::{Json, Resource, ResourceBody, ResourceContents, Role};
use gonk_tools::CompletionTarget;
use serde_json::{Map, Value};

/// The notes every handler here reads: id, title, tags.
pub struct Store {
    notes: Vec<(u64, &'static str, Vec<&'static str>)>,
}

fn store() -> Store {
    Store {
        notes: vec![
            (1, "first", vec!["rust", "macros"]),
            (10, "tenth", vec!["release"]),
            (2, "second", vec!["rust", "registry"]),
        ],
    }
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::builder().state(store()).build();
    registry.register_resource(Note::definition()).unwrap();
    registry.register_resource(Recent::definition()).unwrap();
    registry.register_resource(RepoFile::definition()).unwrap();
    registry.register_resource(Blob::definition()).unwrap();
    registry.register_prompt(Summarize::definition()).unwrap();
    registry.register_prompt(Hello::definition()).unwrap();
    registry
}

/// A note as Markdown.
#[resource(
    "notes://{id}",
    name = "note",
    title = "A note",
    mime_type = "text/markdown",
    size = 1024,
    audience = ["user", "assistant"],
    priority = 0.5,
    icons = ["https://example.com/note.png"],
    complete(id = note_ids)
)]
async fn note(id: u64, store: State<Store>, ctx: &ToolContext) -> Result<String, ToolError> {
    assert!(!ctx.is_cancelled());
    store
        .notes
        .iter()
        .find(|n| n.0 == id)
        .map(|n| format!("# {}", n.1))
        .ok_or_else(|| ToolError::new(ErrorCode::custom("NO_NOTE"), format!("no note {id}")))
}

/// Note ids starting with what was typed.
async fn note_ids(request: CompletionRequest, ctx: ToolContext) -> Result<Vec<String>, ToolError> {
    let store = ctx
        .state::<Store>()
        .ok_or_else(|| ToolError::internal("no store"))?;
    Ok(store
        .notes
        .iter()
        .map(|n| n.0.to_string())
        .filter(|id| id.starts_with(&request.value))
        .collect())
}

/// The ids of the notes, as JSON.
#[resource("notes://recent", mime_type = "application/json")]
async fn recent(store: State<Store>) -> Json<Vec<u64>> {
    Json(store.notes.iter().map(|n| n.0).collect())
}

/// A file of a repository: every operator, and a variable that is not a
/// string.
#[resource("repo://{owner}/{name}/files/{+path}{#line}")]
async fn repo_file(owner: String, name: String, path: String, line: u32) -> String {
    serde_json::json!({"owner": owner, "name": name, "path": path, "line": line}).to_string()
}

/// Raw bytes.
#[resource("blob://{n}", mime_type = "application/octet-stream")]
async fn blob(n: u8) -> Vec<u8> {
    vec![n; 3]
}

/// What to summarize.
#[derive(Deserialize, JsonSchema)]
pub struct SummarizeArgs {
    /// The note to summarize.
    pub id: u64,
    /// Only mention this tag.
    pub tag: Option<String>,
}

/// Summarize a note.
#[prompt(name = "summarize", title = "Summarize", complete(tag = tag_values))]
async fn summarize(
    args: SummarizeArgs,
    store: State<Store>,
) -> Result<Vec<PromptMessage>, ToolError> {
    let (_, title, _) = store
        .notes
        .iter()
        .find(|n| n.0 == args.id)
        .ok_or_else(|| ToolError::new(ErrorCode::custom("NO_NOTE"), "no such note"))?;
    let note = ResourceContents::text(format!("# {title}"))
        .with_uri(Note::uri(&args.id))
        .with_mime_type("text/markdown");
    let ask = match args.tag {
        Some(tag) => format!("Summarize this note, about {tag}."),
        None => "Summarize this note.".to_owned(),
    };
    Ok(vec![
        PromptMessage::user_resource(note),
        PromptMessage::user(ask),
    ])
}

/// The tags of the note already chosen (`id` in the context), or of all
/// notes, starting with what was typed.
async fn tag_values(
    request: CompletionRequest,
    ctx: ToolContext,
) -> Result<Vec<String>, ToolError> {
    let store = ctx
        .state::<Store>()
        .ok_or_else(|| ToolError::internal("no store"))?;
    let id: Option<u64> = request.context_value("id").and_then(|id| id.parse().ok());
    let mut tags: Vec<String> = store
        .notes
        .iter()
        .filter(|n| id.is_none_or(|id| n.0 == id))
        .flat_map(|n| n.2.iter())
        .filter(|t| t.starts_with(&request.value))
        .map(|t| t.to_string())
        .collect();
    tags.sort();
    tags.dedup();
    Ok(tags)
}

/// Says hello.
#[prompt]
async fn hello() -> String {
    "Hello!".to_owned()
}

/// What to look a note up by: the fields go by their camelCase names.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LookupArgs {
    /// The note.
    pub note_id: u64,
    /// A tag of the note.
    #[serde(rename = "topic")]
    pub tag: Option<String>,
}

/// Look a note up. Its completions attach to the arguments a client sees:
/// `noteId`, the field `note_id` under `rename_all`, and `topic`, the
/// field `tag` renamed on its own and so named as a string.
#[prompt(complete(note_id = note_ids, "topic" = tag_values))]
async fn lookup(args: LookupArgs) -> String {
    format!(
        "Note {} about {}.",
        args.note_id,
        args.tag.unwrap_or_default()
    )
}

/// Completes `tag` by its Rust name, which no client sees: the field is
/// `topic` to them.
#[prompt(complete(tag = tag_values))]
async fn lookup_by_rust_name(args: LookupArgs) -> String {
    lookup(args).await
}

#[test]
fn the_resource_definition_is_what_the_attribute_says() {
    assert_eq!(Note::URI, "notes://{id}");
    let def = Note::definition();
    assert_eq!(def.uri(), "notes://{id}");
    assert!(def.is_template());
    assert_eq!(def.name(), "note");
    assert_eq!(def.title(), Some("A note"));
    assert_eq!(def.description(), Some("A note as Markdown."));
    assert_eq!(def.mime_type(), Some("text/markdown"));
    assert_eq!(def.size(), Some(1024));
    assert_eq!(def.annotations().audience, [Role::User, Role::Assistant]);
    assert_eq!(def.annotations().priority, Some(0.5));
    assert_eq!(def.icons()[0].src, "https://example.com/note.png");
    assert_eq!(def.completable().collect::<Vec<_>>(), ["id"]);
    // The variables' schema is what a read is validated against.
    let schema = def
        .read_definition()
        .unwrap()
        .metadata()
        .effective_input_schema();
    assert_eq!(schema["properties"]["id"]["type"], "integer", "{schema}");

    // Defaults: the fn name, no title, the doc comment.
    let def = Recent::definition();
    assert_eq!(def.name(), "recent");
    assert!(!def.is_template());
    assert_eq!(def.title(), None);
    assert_eq!(def.description(), Some("The ids of the notes, as JSON."));
    assert_eq!(def.completable().count(), 0);
}

#[test]
fn uri_expands_the_template_and_reads_back_to_the_same_values() {
    assert_eq!(Note::uri(&12), "notes://12");
    assert_eq!(Recent::uri(&()), "notes://recent");
    let params = RepoFileParams {
        owner: "a b/c".to_owned(),
        name: "x?y".to_owned(),
        path: "src/lib.rs".to_owned(),
        line: 7,
    };
    let uri = RepoFile::uri(&params);
    // `{owner}` encodes `/` and the space, `{+path}` keeps `/`, `{#line}`
    // adds the `#`.
    assert_eq!(uri, "repo://a%20b%2Fc/x%3Fy/files/src/lib.rs#7");
    let template = RepoFile::definition().template().unwrap();
    let vars = template.matches(&uri).unwrap();
    assert_eq!(vars["owner"], "a b/c");
    assert_eq!(vars["name"], "x?y");
    assert_eq!(vars["path"], "src/lib.rs");
    assert_eq!(vars["line"], "7");
    // The generated URI and the runtime's expansion agree.
    assert_eq!(template.expand(&vars), uri);
}

#[tokio::test]
async fn a_read_reaches_the_handler_through_the_registry() {
    let registry = registry();

    let read = registry
        .read_resource(&Note::uri(&10), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].as_text(), Some("# tenth"));
    assert_eq!(read[0].uri, "notes://10");
    assert_eq!(read[0].mime_type.as_deref(), Some("text/markdown"));

    let recent = registry
        .read_resource("notes://recent", ToolContext::new())
        .await
        .unwrap();
    let ids: Value = serde_json::from_str(recent[0].as_text().unwrap()).unwrap();
    assert_eq!(ids, serde_json::json!([1, 10, 2]));
    assert_eq!(recent[0].mime_type.as_deref(), Some("application/json"));

    let params = RepoFileParams {
        owner: "me".into(),
        name: "gonk".into(),
        path: "docs/a b.md".into(),
        line: 42,
    };
    let file = registry
        .read_resource(&RepoFile::uri(&params), ToolContext::new())
        .await
        .unwrap();
    let echoed: Value = serde_json::from_str(file[0].as_text().unwrap()).unwrap();
    assert_eq!(
        echoed,
        serde_json::json!({"owner": "me", "name": "gonk", "path": "docs/a b.md", "line": 42})
    );

    let bytes = registry
        .read_resource(&Blob::uri(&9), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(bytes[0].body, ResourceBody::Blob(vec![9, 9, 9]));

    // The fn's error, converted; a variable that is not its type.
    let missing = registry
        .read_resource("notes://99", ToolContext::new())
        .await
        .unwrap_err();
    assert_eq!(missing.code, ErrorCode::custom("NO_NOTE"));
    let not_a_number = registry
        .read_resource("notes://abc", ToolContext::new())
        .await
        .unwrap_err();
    assert_eq!(
        not_a_number.code,
        ErrorCode::InvalidInput,
        "{not_a_number:?}"
    );
}

#[test]
fn a_resource_that_extracts_state_needs_it_at_registration() {
    let error = ToolRegistry::new()
        .register_resource(Note::definition())
        .unwrap_err();
    assert!(error.to_string().contains("Store"), "{error}");
    // `recent` extracts it too; `blob` extracts nothing.
    assert!(ToolRegistry::new()
        .register_resource(Recent::definition())
        .is_err());
    assert!(ToolRegistry::new()
        .register_resource(Blob::definition())
        .is_ok());
}

#[test]
fn the_prompt_advertises_its_arguments() {
    assert_eq!(Summarize::NAME, "summarize");
    let def = Summarize::definition();
    assert_eq!(def.name(), "summarize");
    assert_eq!(def.title(), Some("Summarize"));
    assert_eq!(def.description(), Some("Summarize a note."));
    let arguments: Vec<_> = def
        .arguments()
        .iter()
        .map(|a| (a.name.as_str(), a.required, a.description.as_deref()))
        .collect();
    assert_eq!(
        arguments,
        [
            ("id", true, Some("The note to summarize.")),
            ("tag", false, Some("Only mention this tag.")),
        ]
    );
    assert_eq!(def.completable().collect::<Vec<_>>(), ["tag"]);

    let hello = Hello::definition();
    assert_eq!(hello.name(), "hello");
    assert!(hello.arguments().is_empty());
}

fn arguments(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect()
}

#[tokio::test]
async fn a_prompt_renders_through_the_registry() {
    let registry = registry();
    let got = registry
        .get_prompt(
            "summarize",
            arguments(&[("id", "2"), ("tag", "rust")]),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(got.messages.len(), 2);
    let PromptContent::Resource(embedded) = &got.messages[0].content else {
        panic!("expected an embedded resource: {:?}", got.messages[0]);
    };
    assert_eq!(embedded.uri, "notes://2");
    assert_eq!(embedded.as_text(), Some("# second"));
    assert_eq!(
        got.messages[1].content.as_text(),
        Some("Summarize this note, about rust.")
    );

    // A missing required argument is refused before the fn runs.
    let error = registry
        .get_prompt(
            "summarize",
            arguments(&[("tag", "rust")]),
            ToolContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput, "{error:?}");

    let hello = registry
        .get_prompt("hello", Map::new(), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(hello.messages[0].content.as_text(), Some("Hello!"));
}

fn request(argument: &str, value: &str, context: &[(&str, &str)]) -> CompletionRequest {
    CompletionRequest {
        argument: argument.to_owned(),
        value: value.to_owned(),
        context: arguments(context),
    }
}

#[tokio::test]
async fn completions_attached_by_the_macros_answer_through_the_registry() {
    let registry = registry();
    let ids = registry
        .complete(
            &CompletionTarget::Resource(Note::URI.to_owned()),
            request("id", "1", &[]),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(ids.values, ["1", "10"]);

    let target = CompletionTarget::Prompt(Summarize::NAME.to_owned());
    let all = registry
        .complete(&target, request("tag", "r", &[]), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(all.values, ["registry", "release", "rust"]);
    // The arguments resolved before narrow it.
    let of_note_2 = registry
        .complete(
            &target,
            request("tag", "r", &[("id", "2")]),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(of_note_2.values, ["registry", "rust"]);
}

#[tokio::test]
async fn completions_attach_to_the_names_serde_gives_the_arguments() {
    let def = Lookup::definition();
    let names: Vec<_> = def.arguments().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["noteId", "topic"]);
    assert_eq!(def.completable().collect::<Vec<_>>(), ["noteId", "topic"]);

    let registry = ToolRegistry::builder().state(store()).build();
    registry.register_prompt(def).unwrap();
    let target = CompletionTarget::Prompt(Lookup::NAME.to_owned());
    let ids = registry
        .complete(&target, request("noteId", "1", &[]), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(ids.values, ["1", "10"]);
    let topics = registry
        .complete(&target, request("topic", "r", &[]), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(topics.values, ["registry", "release", "rust"]);
    let got = registry
        .get_prompt(
            "lookup",
            arguments(&[("noteId", "2"), ("topic", "rust")]),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        got.messages[0].content.as_text(),
        Some("Note 2 about rust.")
    );
}

#[test]
fn a_completion_on_the_rust_name_of_a_renamed_field_is_refused_with_the_name_to_use() {
    let error = ToolRegistry::new()
        .register_prompt(LookupByRustName::definition())
        .unwrap_err();
    let message = error.to_string();
    // The arguments a client sees, and serde's part in naming them.
    assert!(message.contains("`tag`"), "{message}");
    assert!(message.contains("`noteId`, `topic`"), "{message}");
    assert!(message.contains("serde"), "{message}");
}
