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
//! Written with `#[resource]` and `#[prompt]`: each template is checked
//! against its fn's parameters when this file compiles.

use std::sync::Arc;

use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;
use gonk_tools::prompt::{Prompt as _, PromptMessage, PromptResult};
use gonk_tools::resource::{Json, Resource as _, ResourceContents, UriTemplate};
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

/// The arguments of `summarize`.
#[derive(Deserialize, JsonSchema)]
pub struct SummarizeArgs {
    /// The id of the note to summarize.
    pub id: i64,
    /// How: `brief` (one paragraph, the default), `bullets` or `detailed`.
    pub style: Option<String>,
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
    store.get(id).await.map_err(|e| match e.code.as_str() {
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

/// A note as Markdown: its title as a heading, its text, then its id, creation time and tags. The contents' `_meta` holds its tags as `{"tags": [..]}` and whether it is archived.
#[resource("notes://{id}", name = "note", title = "Note", mime_type = "text/markdown",
           complete(id = complete_ids))]
pub async fn note_resource(id: i64, store: State<Store>) -> Result<ResourceContents, ToolError> {
    let note = read_note(&store, id).await?;
    Ok(note_contents(&note))
}

/// The 20 most recently changed notes (archived ones left out), newest first, as JSON.
#[resource(
    "notes://recent",
    name = "recent",
    title = "Recent notes",
    mime_type = "application/json"
)]
pub async fn recent_resource(store: State<Store>) -> Result<Json<Vec<Note>>, ToolError> {
    Ok(Json(store.recent(RECENT_LIMIT, false).await?))
}

/// The notes carrying a tag (archived ones too), oldest first, as JSON.
#[resource("notes://tag/{tag}", name = "tag", title = "Notes with a tag",
           mime_type = "application/json", complete(tag = complete_tags))]
pub async fn tag_resource(tag: String, store: State<Store>) -> Result<Json<Vec<Note>>, ToolError> {
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
    Ok(Json(notes))
}

/// Ask for a summary of a note, which is embedded as a resource.
#[prompt(name = "summarize", title = "Summarize a note",
         complete(id = complete_ids, style = complete_styles))]
pub async fn summarize_prompt(
    args: SummarizeArgs,
    store: State<Store>,
) -> Result<PromptResult, ToolError> {
    let id = args.id;
    let note = store.get(id).await.map_err(|e| match e.code.as_str() {
        "NOT_FOUND" => ToolError::new(
            ErrorCode::InvalidInput,
            format!("No note with id {id}; complete `id` to see the ids"),
        ),
        _ => e,
    })?;
    let ask = match args.style.as_deref().unwrap_or("brief") {
        "brief" => "Summarize this note in one short paragraph.",
        "bullets" => "Summarize this note as a few bullet points.",
        "detailed" => "Summarize this note in detail, keeping every decision and open question.",
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
}

/// The styles of `summarize` starting with what was typed.
async fn complete_styles(
    request: CompletionRequest,
    _ctx: ToolContext,
) -> Result<Vec<&'static str>, ToolError> {
    Ok(["brief", "bullets", "detailed"]
        .into_iter()
        .filter(|s| s.starts_with(request.value.as_str()))
        .collect())
}

/// Registers the resources, the prompt and the `triage-notes` skill, and
/// the listener that tells
/// subscribers which notes a write changed; the listener lives as long as
/// `store`.
pub fn install(registry: &ToolRegistry, store: &Arc<Store>) -> Result<(), RegistryError> {
    registry.register_resource(NoteResource::definition())?;
    registry.register_resource(RecentResource::definition())?;
    registry.register_resource(TagResource::definition())?;
    registry.register_prompt(SummarizePrompt::definition())?;
    // How to triage notes with these tools, for agents that load skills
    // (`skill://triage-notes/SKILL.md`); checked and embedded at compile time.
    registry.register_skills(gonk_tools::embed_skills!("notes/skills"))?;
    // The notifier, not the registry: the registry holds its listeners.
    let notifier = registry.resource_notifier();
    let listener = registry.on_change(move |change| {
        if !change.is_write() {
            return;
        }
        // Read in place: the result is not copied to be looked at.
        let Ok(note) = Note::deserialize(change.data) else {
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
