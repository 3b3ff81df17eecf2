//! The notes as MCP resources and prompts, with completion:
//!
//! * `notes://{id}` — a note as Markdown (what `notes.get` shows); its
//!   tags (and whether it is archived) are in the contents' `_meta` as
//!   `{"tags": [..], "archived": bool}`, where a client finds them without
//!   parsing the text. Note ids complete.
//! * `notes://recent` — the 20 most recently changed notes (archived ones
//!   left out) as a JSON array of notes.
//! * `notes://tag/{tag}` — the notes with a tag, as a JSON array; tags
//!   complete.
//! * the `summarize` prompt (`id`, optional `style`) — asks for a summary
//!   of the note, embedded as a resource; ids complete.
//!
//! After every write tool that returns a note (`notes.create`,
//! `notes.rename`, `notes.archive`) the registry tells subscribers that
//! `notes://{id}`, `notes://recent` and the note's `notes://tag/{tag}`s
//! changed (a change listener: whichever surface made the call).
//!
//! Written with the builders; `#[resource]` / `#[prompt]` expand to the
//! same definitions.

use std::sync::Arc;

use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;
use gonk_tools::prompt::{PromptDefinition, PromptMessage, PromptResult};
use gonk_tools::resource::{Json, ResourceContents, ResourceDefinition, UriTemplate};
use gonk_tools::{RegistryError, ToolRegistry};
use rusqlite::params;
use serde_json::{Map, Value};

use crate::store::{sql, Note, Store};

/// How many notes `notes://recent` holds.
pub const RECENT_LIMIT: u32 = 20;

/// The URI of note `id`.
pub fn note_uri(id: i64) -> String {
    format!("notes://{id}")
}

/// The URI of the notes with `tag` (percent-encoded as the template
/// writes it).
pub fn tag_uri(tag: &str) -> String {
    let mut vars = Map::new();
    vars.insert("tag".into(), Value::String(tag.to_owned()));
    UriTemplate::parse("notes://tag/{tag}")
        .map(|template| template.expand(&vars))
        .unwrap_or_else(|_| format!("notes://tag/{tag}"))
}

/// The variables of `notes://{id}`.
#[derive(Deserialize, JsonSchema)]
struct NoteVars {
    /// The note's id.
    id: i64,
}

/// The variables of `notes://tag/{tag}`.
#[derive(Deserialize, JsonSchema)]
struct TagVars {
    /// The tag.
    tag: String,
}

/// The arguments of `summarize`.
#[derive(Deserialize, JsonSchema)]
struct SummarizeArgs {
    /// The id of the note to summarize.
    id: i64,
    /// How: `brief` (one paragraph, the default), `bullets` or `detailed`.
    style: Option<String>,
}

fn store(ctx: &ToolContext) -> Result<gonk_tools::State<Store>, ToolError> {
    ctx.state::<Store>()
        .ok_or_else(|| ToolError::internal("the notes store is not registered"))
}

/// A missing note reads as a missing resource.
fn resource_missing(id: i64) -> ToolError {
    let uri = note_uri(id);
    ToolError::new(
        ErrorCode::ResourceNotFound,
        format!("Resource not found: {uri}"),
    )
    .with_details(serde_json::json!({ "uri": uri }))
}

async fn read_note(store: &Store, id: i64) -> Result<Note, ToolError> {
    store
        .run(move |db| sql::get(db, id))
        .await
        .map_err(|e| match e.code.as_str() {
            "NOT_FOUND" => resource_missing(id),
            _ => e,
        })
}

/// A note as resource contents: Markdown, tags in `_meta`.
pub fn note_contents(note: &Note) -> ResourceContents {
    let mut meta = Map::new();
    meta.insert("tags".into(), serde_json::json!(note.tags));
    meta.insert("archived".into(), Value::Bool(note.archived));
    ResourceContents::text(crate::tools::markdown(note))
        .with_uri(note_uri(note.id))
        .with_mime_type("text/markdown")
        .with_meta(meta)
}

/// Note ids starting with what was typed, lowest first.
async fn complete_ids(
    request: CompletionRequest,
    ctx: ToolContext,
) -> Result<Vec<String>, ToolError> {
    let store = store(&ctx)?;
    let typed = request.value;
    store
        .run(move |db| {
            let mut statement = db
                .prepare(
                    "SELECT id FROM notes WHERE CAST(id AS TEXT) LIKE ?1 || '%' ORDER BY id LIMIT 101",
                )
                .map_err(|e| ToolError::internal(e.to_string()))?;
            let ids = statement
                .query_map(params![typed], |row| row.get::<_, i64>(0))
                .map_err(|e| ToolError::internal(e.to_string()))?;
            ids.map(|id| id.map(|id| id.to_string()).map_err(|e| ToolError::internal(e.to_string())))
                .collect()
        })
        .await
}

/// Tags starting with what was typed (case-insensitive), alphabetically.
async fn complete_tags(
    request: CompletionRequest,
    ctx: ToolContext,
) -> Result<Vec<String>, ToolError> {
    let store = store(&ctx)?;
    let typed = request.value.to_lowercase();
    let tags = store.run(all_tags).await?;
    Ok(tags
        .into_iter()
        .filter(|tag| tag.to_lowercase().starts_with(&typed))
        .collect())
}

/// Every tag in use, sorted, once each.
fn all_tags(db: &rusqlite::Connection) -> Result<Vec<String>, ToolError> {
    let mut statement = db
        .prepare("SELECT DISTINCT value FROM notes, json_each(notes.tags) ORDER BY value")
        .map_err(|e| ToolError::internal(e.to_string()))?;
    let tags = statement
        .query_map([], |row| row.get::<_, String>(0))
        .map_err(|e| ToolError::internal(e.to_string()))?;
    tags.map(|t| t.map_err(|e| ToolError::internal(e.to_string())))
        .collect()
}

/// `notes://{id}`.
pub fn note_resource() -> ResourceDefinition {
    ResourceDefinition::builder("notes://{id}")
        .name("note")
        .title("Note")
        .description(
            "A note as Markdown: its title as a heading, its text, then its id, creation time and \
             tags. The contents' `_meta` holds its tags as {\"tags\": [..]} and whether it is archived.",
        )
        .mime_type("text/markdown")
        .requires_state::<Store>()
        .handler(|vars: NoteVars, ctx| async move {
            let store = store(&ctx)?;
            let note = read_note(&store, vars.id).await?;
            Ok::<_, ToolError>(note_contents(&note))
        })
        .complete("id", complete_ids)
        .build()
}

/// `notes://recent`.
pub fn recent_resource() -> ResourceDefinition {
    ResourceDefinition::builder("notes://recent")
        .name("recent")
        .title("Recent notes")
        .description(
            "The 20 most recently changed notes (archived ones left out), newest first, as JSON.",
        )
        .mime_type("application/json")
        .requires_state::<Store>()
        .handler(|_: NoInput, ctx| async move {
            let store = store(&ctx)?;
            let notes = store.run(|db| sql::recent(db, RECENT_LIMIT, false)).await?;
            Ok::<_, ToolError>(Json(notes))
        })
        .build()
}

/// `notes://tag/{tag}`.
pub fn tag_resource() -> ResourceDefinition {
    ResourceDefinition::builder("notes://tag/{tag}")
        .name("tag")
        .title("Notes with a tag")
        .description("The notes carrying a tag (archived ones too), oldest first, as JSON.")
        .mime_type("application/json")
        .requires_state::<Store>()
        .handler(|vars: TagVars, ctx| async move {
            let store = store(&ctx)?;
            let tag = vars.tag;
            let notes = store
                .run(move |db| {
                    let mut statement = db
                        .prepare(
                            "SELECT id FROM notes WHERE EXISTS \
                             (SELECT 1 FROM json_each(notes.tags) WHERE value = ?1) ORDER BY id",
                        )
                        .map_err(|e| ToolError::internal(e.to_string()))?;
                    let ids: Vec<i64> = statement
                        .query_map(params![tag], |row| row.get(0))
                        .map_err(|e| ToolError::internal(e.to_string()))?
                        .collect::<Result<_, _>>()
                        .map_err(|e| ToolError::internal(e.to_string()))?;
                    ids.into_iter()
                        .map(|id| sql::get(db, id))
                        .collect::<Result<Vec<_>, _>>()
                })
                .await?;
            Ok::<_, ToolError>(Json(notes))
        })
        .complete("tag", complete_tags)
        .build()
}

/// The `summarize` prompt.
pub fn summarize_prompt() -> PromptDefinition {
    PromptDefinition::builder("summarize")
        .title("Summarize a note")
        .description("Ask for a summary of a note, which is embedded as a resource.")
        .requires_state::<Store>()
        .handler(|args: SummarizeArgs, ctx| async move {
            let store = store(&ctx)?;
            let note = store
                .run(move |db| sql::get(db, args.id))
                .await
                .map_err(|e| match e.code.as_str() {
                    "NOT_FOUND" => ToolError::new(
                        ErrorCode::InvalidInput,
                        format!("No note with id {}; complete `id` to see the ids", args.id),
                    ),
                    _ => e,
                })?;
            let ask = match args.style.as_deref().unwrap_or("brief") {
                "brief" => "Summarize this note in one short paragraph.",
                "bullets" => "Summarize this note as a few bullet points.",
                "detailed" => {
                    "Summarize this note in detail, keeping every decision and open question."
                }
                other => {
                    return Err(ToolError::new(
                        ErrorCode::InvalidInput,
                        format!("unknown style `{other}`: use brief, bullets or detailed"),
                    ))
                }
            };
            Ok(PromptResult {
                description: Some(format!("Summary of note {}: {}", note.id, note.title)),
                messages: vec![
                    PromptMessage::user_resource(note_contents(&note)),
                    PromptMessage::user(ask),
                ],
            })
        })
        .complete("id", complete_ids)
        .complete("style", |request: CompletionRequest, _ctx| async move {
            let values: Vec<&str> = ["brief", "bullets", "detailed"]
                .into_iter()
                .filter(|s| s.starts_with(request.value.as_str()))
                .collect();
            Ok::<_, ToolError>(values)
        })
        .build()
}

/// Registers the resources and the prompt, and the listener that tells
/// subscribers which notes a write changed; the listener lives as long as
/// `store`.
pub fn install(registry: &ToolRegistry, store: &Arc<Store>) -> Result<(), RegistryError> {
    registry.register_resource(note_resource())?;
    registry.register_resource(recent_resource())?;
    registry.register_resource(tag_resource())?;
    registry.register_prompt(summarize_prompt())?;
    // The notifier, not the registry: the registry holds its listeners.
    let notifier = registry.resource_notifier();
    let listener = registry.on_change(move |change| {
        if !change.is_write() {
            return;
        }
        let Ok(note) = serde_json::from_value::<Note>(change.data.clone()) else {
            return;
        };
        notifier.notify(note_uri(note.id));
        notifier.notify("notes://recent");
        for tag in &note.tags {
            notifier.notify(tag_uri(tag));
        }
    });
    store.keep_listener(listener);
    Ok(())
}
