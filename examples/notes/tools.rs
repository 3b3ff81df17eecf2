//! The notes tools: defined once, served unchanged by every surface (the
//! command line in `main.rs`; MCP uses this same module).
//!
//! Each handler gets the [`Store`] as registry state and runs its SQL on a
//! blocking thread.

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::definition::{AuthorizationResource, CliHints, McpAnnotations, McpHints};
use gonk_tools::event::DisplayBlock;
use gonk_tools::prelude::*;
use gonk_tools::registry::RegistryError;
use rusqlite::Connection;

use crate::store::{sql, Hit, Note, Store};

/// The category every notes tool is listed under.
pub const CATEGORY: &str = "notes";

/// Runs `f` on the notes database, on a blocking thread.
async fn with_db<T: Send + 'static>(
    ctx: &ToolContext,
    f: impl FnOnce(&Connection) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let store: Arc<Store> = ctx
        .state::<Store>()
        .ok_or_else(|| ToolError::internal("the notes store is not registered as state"))?
        .0;
    tokio::task::spawn_blocking(move || store.with(f))
        .await
        .map_err(|e| ToolError::internal(format!("notes database task failed: {e}")))?
}

fn cli(positional: &[&str], aliases: &[&str], examples: &[&str]) -> CliHints {
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect();
    CliHints {
        command: None,
        positional: strings(positional),
        aliases: strings(aliases),
        examples: strings(examples),
    }
}

fn mcp(read_only: bool, destructive: bool, idempotent: bool) -> McpHints {
    McpHints {
        annotations: McpAnnotations {
            read_only: Some(read_only),
            destructive: Some(destructive),
            idempotent: Some(idempotent),
            open_world: Some(false),
        },
        ..McpHints::default()
    }
}

/// Input of `notes.create`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateNote {
    /// The note's title.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// The note's text (Markdown).
    #[serde(default)]
    pub body: String,
    /// Tags to file the note under.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// Input of `notes.get`, `notes.archive`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoteId {
    /// The note's id.
    #[schemars(range(min = 1))]
    pub id: i64,
}

fn default_limit() -> u32 {
    10
}

/// Input of `notes.search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchNotes {
    /// Text to look for in titles, text and tags.
    #[schemars(length(min = 1))]
    pub query: String,
    /// How many hits to return.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 20))]
    pub limit: u32,
    /// Include archived notes.
    #[serde(default)]
    pub include_archived: bool,
}

/// Output of `notes.search`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResult {
    /// The query.
    pub query: String,
    /// The hits, best first.
    pub hits: Vec<Hit>,
}

fn default_list_limit() -> u32 {
    50
}

/// Input of `notes.list`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListNotes {
    /// How many notes to return, most recently changed first.
    #[serde(default = "default_list_limit")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: u32,
    /// Include archived notes.
    #[serde(default)]
    pub include_archived: bool,
}

/// Output of `notes.list`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NoteList {
    /// The notes, most recently changed first.
    pub notes: Vec<Note>,
}

/// Input of `notes.rename`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RenameNote {
    /// The note's id.
    #[schemars(range(min = 1))]
    pub id: i64,
    /// The new title.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
}

/// Export formats.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// One Markdown document.
    #[default]
    Markdown,
    /// A JSON array of notes.
    Json,
}

/// Input of `notes.export`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExportNotes {
    /// Output format.
    #[serde(default)]
    pub format: ExportFormat,
    /// Include archived notes.
    #[serde(default)]
    pub include_archived: bool,
    /// Pause after each note, in milliseconds (to watch the progress).
    #[serde(default)]
    #[schemars(range(max = 10000))]
    pub delay_ms: u64,
}

/// Output of `notes.export`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Export {
    /// The format of `document`.
    pub format: ExportFormat,
    /// How many notes it holds.
    pub count: usize,
    /// The exported notes.
    pub document: String,
}

fn markdown(note: &Note) -> String {
    let mut text = format!("# {}\n\n", note.title);
    if !note.body.is_empty() {
        text.push_str(note.body.trim_end());
        text.push_str("\n\n");
    }
    let mut meta = format!("_note {} · created {}", note.id, note.created_at);
    if !note.tags.is_empty() {
        meta.push_str(&format!(" · tags: {}", note.tags.join(", ")));
    }
    if note.archived {
        meta.push_str(" · archived");
    }
    meta.push('_');
    text.push_str(&meta);
    text
}

fn create() -> ToolDefinition {
    ToolDefinition::builder("notes.create")
        .description("Create a note with a title, optional Markdown text and tags.")
        .category(CATEGORY)
        .approval(ApprovalTier::Write)
        .capabilities(Capabilities {
            writes_fs: true,
            ..Capabilities::default()
        })
        .mcp(mcp(false, false, false))
        .cli(cli(
            &["title"],
            &["create"],
            &["notes notes.create \"Release checklist\" --body \"- tag v1\" --tags release"],
        ))
        .requires_state::<Store>()
        .output_schema_for::<Note>()
        .handler_with_output(|input: CreateNote, ctx: ToolContext| async move {
            let note = with_db(&ctx, move |db| {
                sql::create(db, &input.title, &input.body, &input.tags)
            })
            .await?;
            let display = format!("Created note {}: {}", note.id, note.title);
            Ok::<_, ToolError>(ToolOutput::new(note).with_display(display))
        })
        .build()
}

fn get() -> ToolDefinition {
    ToolDefinition::builder("notes.get")
        .description("Show one note by id.")
        .category(CATEGORY)
        .approval(ApprovalTier::Read)
        .capabilities(Capabilities {
            reads_fs: true,
            idempotent: true,
            ..Capabilities::default()
        })
        .mcp(mcp(true, false, true))
        .cli(cli(&["id"], &["get", "show"], &["notes notes.get 1"]))
        .requires_state::<Store>()
        .output_schema_for::<Note>()
        .handler_with_output(|input: NoteId, ctx: ToolContext| async move {
            let note = with_db(&ctx, move |db| sql::get(db, input.id)).await?;
            let display = vec![DisplayBlock::Markdown {
                text: markdown(&note),
            }];
            Ok::<_, ToolError>(ToolOutput::new(note).with_display(display))
        })
        .build()
}

fn search() -> ToolDefinition {
    ToolDefinition::builder("notes.search")
        .description("Search notes by text in their title, body or tags; title matches first, then the most recently changed.")
        .category(CATEGORY)
        .approval(ApprovalTier::Read)
        .capabilities(Capabilities { reads_fs: true, idempotent: true, ..Capabilities::default() })
        .mcp(mcp(true, false, true))
        .cli(cli(
            &["query"],
            &["search"],
            &["notes notes.search rust --limit 5", "notes notes.search release --include-archived"],
        ))
        .requires_state::<Store>()
        .output_schema_for::<SearchResult>()
        .handler_with_output(|input: SearchNotes, ctx: ToolContext| async move {
            let query = input.query.clone();
            let hits = with_db(&ctx, move |db| sql::search(db, &input.query, input.limit, input.include_archived)).await?;
            let display = if hits.is_empty() {
                format!("No notes match \"{query}\".")
            } else {
                hits.iter()
                    .map(|hit| {
                        let archived = if hit.archived { " (archived)" } else { "" };
                        if hit.snippet.is_empty() {
                            format!("{:>4}  {}{archived}", hit.id, hit.title)
                        } else {
                            format!("{:>4}  {}{archived} — {}", hit.id, hit.title, hit.snippet)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            Ok::<_, ToolError>(ToolOutput::new(SearchResult { query, hits }).with_display(display))
        })
        .build()
}

fn list() -> ToolDefinition {
    ToolDefinition::builder("notes.list")
        .description("List the most recently changed notes, newest first.")
        .category(CATEGORY)
        .approval(ApprovalTier::Read)
        .capabilities(Capabilities {
            reads_fs: true,
            idempotent: true,
            ..Capabilities::default()
        })
        .mcp(mcp(true, false, true))
        .cli(cli(&[], &["ls"], &["notes notes.list --limit 5"]))
        .requires_state::<Store>()
        .output_schema_for::<NoteList>()
        .handler_with_output(|input: ListNotes, ctx: ToolContext| async move {
            let notes = with_db(&ctx, move |db| {
                sql::recent(db, input.limit, input.include_archived)
            })
            .await?;
            let display = if notes.is_empty() {
                "No notes yet.".to_owned()
            } else {
                notes
                    .iter()
                    .map(|note| format!("{:>4}  {}", note.id, note.title))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            Ok::<_, ToolError>(ToolOutput::new(NoteList { notes }).with_display(display))
        })
        .build()
}

fn rename() -> ToolDefinition {
    ToolDefinition::builder("notes.rename")
        .description("Give a note a new title.")
        .category(CATEGORY)
        .approval(ApprovalTier::Write)
        .capabilities(Capabilities {
            writes_fs: true,
            idempotent: true,
            ..Capabilities::default()
        })
        .mcp(mcp(false, false, true))
        .authorization_resource(AuthorizationResource::new("note"))
        .cli(cli(
            &["id", "title"],
            &["rename"],
            &["notes notes.rename 1 \"Release checklist v2\""],
        ))
        .requires_state::<Store>()
        .output_schema_for::<Note>()
        .handler_with_output(|input: RenameNote, ctx: ToolContext| async move {
            let note = with_db(&ctx, move |db| sql::rename(db, input.id, &input.title)).await?;
            let display = format!("Renamed note {} to \"{}\"", note.id, note.title);
            Ok::<_, ToolError>(ToolOutput::new(note).with_display(display))
        })
        .build()
}

fn archive() -> ToolDefinition {
    ToolDefinition::builder("notes.archive")
        .description("Archive a note: it disappears from search and export unless archived notes are asked for.")
        .category(CATEGORY)
        .approval(ApprovalSpec {
            tier: ApprovalTier::Write,
            overridable: false,
            reason: Some("archiving hides the note from search".into()),
        })
        .capabilities(Capabilities { writes_fs: true, idempotent: true, ..Capabilities::default() })
        .mcp(mcp(false, true, true))
        .cli(cli(&["id"], &["archive"], &["notes notes.archive 1"]))
        .requires_state::<Store>()
        .output_schema_for::<Note>()
        .handler_with_output(|input: NoteId, ctx: ToolContext| async move {
            let (note, changed) = with_db(&ctx, move |db| sql::archive(db, input.id)).await?;
            let display = if changed {
                format!("Archived note {}: {}", note.id, note.title)
            } else {
                format!("Note {} was already archived", note.id)
            };
            Ok::<_, ToolError>(ToolOutput::new(note).with_display(display))
        })
        .build()
}

fn export() -> ToolDefinition {
    ToolDefinition::builder("notes.export")
        .description("Export every note as one Markdown document or a JSON array, reporting progress as it goes.")
        .category(CATEGORY)
        .approval(ApprovalTier::Read)
        .capabilities(Capabilities { reads_fs: true, idempotent: true, ..Capabilities::default() })
        .mcp(mcp(true, false, true))
        .cli(cli(
            &[],
            &["export"],
            &["notes notes.export > notes.md", "notes notes.export --format json --include-archived"],
        ))
        .requires_state::<Store>()
        .output_schema_for::<Export>()
        .stream_handler(|input: ExportNotes, ctx: ToolContext| async move {
            async_stream::stream! {
                let include_archived = input.include_archived;
                let notes = match with_db(&ctx, move |db| sql::all(db, include_archived)).await {
                    Ok(notes) => notes,
                    Err(error) => {
                        yield ToolEvent::error(error);
                        return;
                    }
                };
                let total = notes.len();
                let noun = if total == 1 { "note" } else { "notes" };
                yield ToolEvent::log(LogLevel::Info, format!("exporting {total} {noun}"));
                let mut parts = Vec::with_capacity(total);
                for (i, note) in notes.iter().enumerate() {
                    parts.push(match input.format {
                        ExportFormat::Markdown => markdown(note),
                        ExportFormat::Json => String::new(),
                    });
                    if input.delay_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(input.delay_ms)).await;
                    }
                    let done = i + 1;
                    yield ToolEvent::progress(
                        (done as f64 * 100.0 / total as f64).round(),
                        format!("exported {done}/{total}"),
                    );
                }
                let (document, block) = match input.format {
                    ExportFormat::Markdown => {
                        let document = parts.join("\n\n---\n\n");
                        (document.clone(), DisplayBlock::Markdown { text: document })
                    }
                    ExportFormat::Json => {
                        let value = serde_json::to_value(&notes).unwrap_or_default();
                        let document = serde_json::to_string_pretty(&value).unwrap_or_default();
                        (document, DisplayBlock::Json { value, caption: None })
                    }
                };
                let export = Export { format: input.format, count: total, document };
                yield ToolEvent::Result { data: export, display: Some(vec![block].into()) };
            }
        })
        .build()
}

/// Every notes tool.
pub fn definitions() -> Vec<ToolDefinition> {
    vec![
        create(),
        get(),
        search(),
        list(),
        rename(),
        archive(),
        export(),
    ]
}

/// A registry holding `store` as state and every notes tool.
pub fn registry(store: Arc<Store>) -> Result<ToolRegistry, RegistryError> {
    let registry = ToolRegistry::builder().state_arc(store).build();
    registry.register_all(definitions())?;
    Ok(registry)
}
