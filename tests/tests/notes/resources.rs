//! The notes as resources and prompts, through the registry: every note
//! readable as `notes://{id}` (Markdown, tags in `_meta`), `notes://recent`
//! (the last 20 as JSON), `notes://tag/{tag}`, an update for every note a
//! write tool changes, the `summarize` prompt embedding the note, and
//! completion of note ids and tags; and the CLI reading a note another
//! process wrote into the same database file.

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::client::{InProcess, ReadResource};
use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;
use gonk_tools::prompt::PromptContent;
use gonk_tools::{CompletionTarget, ResourceUpdates};
use notes::store::{Store, MEMORY};
use serde_json::{Map, Value};

use gonk_tools_tests::workspace::bin;

fn registry() -> ToolRegistry {
    notes::tools::registry(Arc::new(Store::new(Some(MEMORY.into())))).unwrap()
}

async fn call(registry: &ToolRegistry, tool: &str, input: Value) -> Value {
    collect_tool_outcome(registry.invoke(tool, input, ToolContext::new()), |_| {})
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e:?}"))
        .data
}

async fn create(registry: &ToolRegistry, title: &str, tags: &[&str]) -> i64 {
    let note = call(
        registry,
        "notes.create",
        json!({"title": title, "body": format!("About {title}."), "tags": tags}),
    )
    .await;
    note["id"].as_i64().unwrap()
}

async fn complete(
    registry: &ToolRegistry,
    target: CompletionTarget,
    argument: &str,
    value: &str,
) -> Vec<String> {
    let request = CompletionRequest {
        argument: argument.into(),
        value: value.into(),
        context: Map::new(),
    };
    registry
        .complete(&target, request, ToolContext::new())
        .await
        .unwrap()
        .values
}

#[tokio::test]
async fn every_note_reads_as_markdown_with_its_tags_in_meta() {
    let registry = registry();
    let id = create(&registry, "Groceries", &["home", "weekly"]).await;
    let read = registry
        .read_resource(&format!("notes://{id}"), ToolContext::new())
        .await
        .unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].uri, "notes://1");
    assert_eq!(read[0].mime_type.as_deref(), Some("text/markdown"));
    let text = read[0].as_text().unwrap();
    assert!(
        text.starts_with("# Groceries\n\nAbout Groceries.\n"),
        "{text}"
    );
    let meta = read[0].meta.as_ref().unwrap();
    assert_eq!(meta["tags"], json!(["home", "weekly"]));
    assert_eq!(meta["archived"], false);

    let missing = registry
        .read_resource("notes://99", ToolContext::new())
        .await
        .unwrap_err();
    assert_eq!(missing.code, ErrorCode::ResourceNotFound);
    assert_eq!(missing.message, "Resource not found: notes://99");
}

#[tokio::test]
async fn recent_holds_the_last_twenty_as_json_newest_first() {
    let registry = registry();
    for i in 1..=22 {
        create(&registry, &format!("Note {i}"), &[]).await;
    }
    let read = registry
        .read_resource("notes://recent", ToolContext::new())
        .await
        .unwrap();
    assert_eq!(read[0].mime_type.as_deref(), Some("application/json"));
    let notes: Vec<Value> = serde_json::from_str(read[0].as_text().unwrap()).unwrap();
    // Newest first: notes are changed in id order, so by id, descending.
    let ids: Vec<i64> = notes.iter().map(|n| n["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, (3..=22).rev().collect::<Vec<i64>>());
    assert_eq!(notes[0]["title"], "Note 22");
}

#[tokio::test]
async fn a_tag_lists_its_notes_and_tags_complete() {
    let registry = registry();
    create(&registry, "A", &["release", "work"]).await;
    create(&registry, "B", &["home"]).await;
    create(&registry, "C", &["release"]).await;
    let read = registry
        .read_resource("notes://tag/release", ToolContext::new())
        .await
        .unwrap();
    let notes: Vec<Value> = serde_json::from_str(read[0].as_text().unwrap()).unwrap();
    let titles: Vec<&str> = notes.iter().filter_map(|n| n["title"].as_str()).collect();
    assert_eq!(titles, ["A", "C"]);

    let tag = CompletionTarget::Resource("notes://tag/{tag}".into());
    assert_eq!(
        complete(&registry, tag.clone(), "tag", "re").await,
        ["release"]
    );
    assert_eq!(
        complete(&registry, tag, "tag", "").await,
        ["home", "release", "work"]
    );
}

#[tokio::test]
async fn note_ids_complete_for_the_template_and_the_prompt() {
    let registry = registry();
    for i in 1..=12 {
        create(&registry, &format!("Note {i}"), &[]).await;
    }
    let template = CompletionTarget::Resource("notes://{id}".into());
    assert_eq!(
        complete(&registry, template, "id", "1").await,
        ["1", "10", "11", "12"]
    );
    let prompt = CompletionTarget::Prompt("summarize".into());
    assert_eq!(complete(&registry, prompt.clone(), "id", "9").await, ["9"]);
    assert_eq!(
        complete(&registry, prompt, "style", "b").await,
        ["brief", "bullets"]
    );
}

#[tokio::test]
async fn summarize_embeds_the_note_as_a_resource() {
    let registry = registry();
    let id = create(&registry, "Plans", &["work"]).await;
    let prompt = registry.get_prompt_definition("summarize").unwrap();
    let arguments: Vec<(&str, bool)> = prompt
        .arguments()
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(arguments, [("id", true), ("style", false)]);

    let args = json!({"id": id.to_string(), "style": "detailed"});
    let got = registry
        .get_prompt(
            "summarize",
            args.as_object().unwrap().clone(),
            ToolContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(got.description.as_deref(), Some("Summary of note 1: Plans"));
    match &got.messages[0].content {
        PromptContent::Resource(contents) => {
            assert_eq!(contents.uri, "notes://1");
            assert!(contents.as_text().unwrap().starts_with("# Plans"));
            assert_eq!(contents.meta.as_ref().unwrap()["tags"], json!(["work"]));
        }
        other => panic!("the note is not embedded: {other:?}"),
    }
    assert!(got.messages[1]
        .content
        .as_text()
        .unwrap()
        .contains("in detail"));

    let bad_style = json!({"id": "1", "style": "haiku"});
    let error = registry
        .get_prompt(
            "summarize",
            bad_style.as_object().unwrap().clone(),
            ToolContext::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(
        error.message.contains("unknown style `haiku`"),
        "{}",
        error.message
    );
}

async fn next(updates: &mut ResourceUpdates) -> String {
    tokio::time::timeout(Duration::from_secs(10), updates.next())
        .await
        .expect("an update")
        .expect("the registry is alive")
}

#[tokio::test]
async fn every_write_tool_tells_subscribers_which_notes_changed() {
    let registry = registry();
    let mut updates = registry.resource_updates();
    create(&registry, "Tagged", &["ops"]).await;
    assert_eq!(next(&mut updates).await, "notes://1");
    assert_eq!(next(&mut updates).await, "notes://recent");
    assert_eq!(next(&mut updates).await, "notes://tag/ops");

    call(
        &registry,
        "notes.rename",
        json!({"id": 1, "title": "Renamed"}),
    )
    .await;
    assert_eq!(next(&mut updates).await, "notes://1");
    assert_eq!(next(&mut updates).await, "notes://recent");
    assert_eq!(next(&mut updates).await, "notes://tag/ops");

    call(&registry, "notes.archive", json!({"id": 1})).await;
    assert_eq!(next(&mut updates).await, "notes://1");

    // A read changes nothing: the next update is the next write's.
    call(&registry, "notes.get", json!({"id": 1})).await;
    create(&registry, "Second", &[]).await;
    assert_eq!(
        next(&mut updates).await,
        "notes://recent",
        "archive's recent"
    );
    assert_eq!(next(&mut updates).await, "notes://tag/ops", "archive's tag");
    assert_eq!(next(&mut updates).await, "notes://2");
}

use notes::resources::NoteResource;

#[tokio::test]
async fn the_typed_client_reads_a_note_in_process() {
    let registry = registry();
    create(&registry, "Typed", &[]).await;
    let client = InProcess::new(registry);
    let read = client.read::<NoteResource>(1).await.unwrap();
    assert!(read[0].as_text().unwrap().starts_with("# Typed"));
    let error = client.read::<NoteResource>(7).await.unwrap_err();
    assert_eq!(error.code(), Some(&ErrorCode::ResourceNotFound));
}

#[test]
fn the_cli_reads_a_note_another_process_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db").to_string_lossy().into_owned();
    let run = |args: &[&str]| {
        std::process::Command::new(bin("notes"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .env_remove(notes::saved::ENV)
            .output()
            .unwrap()
    };
    assert!(run(&["notes.create", "Shared", "--tags", "x"])
        .status
        .success());
    let read = run(&["resource", "read", "notes://1"]);
    assert!(read.status.success(), "{read:?}");
    assert!(String::from_utf8_lossy(&read.stdout).starts_with("# Shared\n"));
    let got = run(&["prompt", "get", "summarize", "--id", "1"]);
    assert!(got.status.success(), "{got:?}");
    assert!(String::from_utf8_lossy(&got.stdout).contains("[resource notes://1 (text/markdown)]"));
}
