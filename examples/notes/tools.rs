//! The notes tools: ten `#[tool]` fns (`notes.export_file` and
//! `notes.reindex`, the heavy ones, are detached and live in their own files;
//! `notes.board`, which only the board app calls, lives in `app.rs`), grouped by `toolset!` into
//! [`NotesTools`] (registration) and [`NotesToolsClient`] (a typed client
//! over any transport), and served unchanged by every surface: the command
//! line (`cli.rs`), MCP (`mcp.rs`) and WebSocket (`ws.rs`).
//!
//! Each tool takes the [`Store`] as `State<Store>` (registry state), so
//! registering the set in a registry without a store fails at start-up.

use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use gonk_tools::event::DisplayBlock;
use gonk_tools::prelude::*;
use gonk_tools::registry::RegistryError;
use serde_json::Value;

pub use crate::app::{Board, BoardInput, NotesBoard, TagCount};
pub use crate::export_file::{ExportFile, ExportedFile, NotesExportFile};
pub use crate::reindex::{NotesReindex, Reindex, Reindexed};
use crate::store::{Hit, Note, Store};

/// Input of `notes.create`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CreateNote {
    /// The note's title.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// The note's text (Markdown), up to 64 KiB of characters.
    #[serde(default)]
    #[schemars(length(max = 65536))]
    pub body: String,
    /// Tags to file the note under: at most 32, each 1–64 characters.
    #[serde(default)]
    #[schemars(length(max = 32), inner(length(min = 1, max = 64)))]
    pub tags: Vec<String>,
}

/// Input of `notes.get`, `notes.archive`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoteId {
    /// The note's id.
    #[schemars(range(min = 1))]
    pub id: i64,
}

fn default_limit() -> u32 {
    10
}

/// Input of `notes.search`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchNotes {
    /// Text to look for in titles, text and tags.
    #[schemars(length(min = 1, max = 200))]
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
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoteList {
    /// The notes, most recently changed first.
    pub notes: Vec<Note>,
}

/// Input of `notes.rename`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Export {
    /// The format of `document`.
    pub format: ExportFormat,
    /// How many notes it holds.
    pub count: usize,
    /// The exported notes.
    pub document: String,
}

/// One note as Markdown (shared by the exports).
pub(crate) fn markdown(note: &Note) -> String {
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

/// Create a note with a title, optional Markdown text and tags.
#[tool(
    name = "notes.create",
    category = "notes",
    scopes("notes:write"),
    approval = "write",
    capabilities(writes_fs),
    mcp(read_only = false, destructive = false, idempotent = false, open_world = false),
    cli(
        positional = ["title"],
        aliases = ["create"],
        examples = ["notes notes.create \"Release checklist\" --body \"- tag v1\" --tags release"],
    )
)]
pub async fn notes_create(
    input: CreateNote,
    store: State<Store>,
) -> Result<ToolOutput<Note>, ToolError> {
    let note = store.create(input.title, input.body, input.tags).await?;
    let display = format!("Created note {}: {}", note.id, note.title);
    Ok(ToolOutput::new(note).with_display(display))
}

/// Show one note by id.
#[tool(
    name = "notes.get",
    category = "notes",
    scopes("notes:read"),
    approval = "read",
    capabilities(reads_fs, idempotent),
    mcp(read_only, destructive = false, idempotent, open_world = false),
    cli(positional = ["id"], aliases = ["get", "show"], examples = ["notes notes.get 1"])
)]
pub async fn notes_get(input: NoteId, store: State<Store>) -> Result<ToolOutput<Note>, ToolError> {
    let note = store.get(input.id).await?;
    let display = vec![DisplayBlock::Markdown {
        text: markdown(&note),
    }];
    Ok(ToolOutput::new(note).with_display(display))
}

// A host with MCP Apps opens the notes board (`app.rs`) on the results;
// every other client reads the text.
/// Search notes by text in their title, body or tags; title matches first, then the most recently changed.
#[tool(
    name = "notes.search",
    category = "notes",
    scopes("notes:read"),
    approval = "read",
    capabilities(reads_fs, idempotent),
    mcp(read_only, destructive = false, idempotent, open_world = false),
    ui = "ui://notes/board",
    cli(
        positional = ["query"],
        aliases = ["search"],
        examples = [
            "notes notes.search rust --limit 5",
            "notes notes.search release --include-archived",
        ],
    )
)]
pub async fn notes_search(
    input: SearchNotes,
    store: State<Store>,
) -> Result<ToolOutput<SearchResult>, ToolError> {
    let SearchNotes {
        query,
        limit,
        include_archived,
    } = input;
    search(&store, query, limit, include_archived).await
}

/// Runs a search and shows its hits one per line: what `notes.search` and
/// the saved searches (`saved.rs`) answer.
pub(crate) async fn search(
    store: &Store,
    query: String,
    limit: u32,
    include_archived: bool,
) -> Result<ToolOutput<SearchResult>, ToolError> {
    let hits = store.search(query.clone(), limit, include_archived).await?;
    let display = if hits.is_empty() {
        format!("No notes match \"{query}\".")
    } else {
        hits.iter().map(hit_line).collect::<Vec<_>>().join("\n")
    };
    Ok(ToolOutput::new(SearchResult { query, hits }).with_display(display))
}

fn hit_line(hit: &Hit) -> String {
    let archived = if hit.archived { " (archived)" } else { "" };
    if hit.snippet.is_empty() {
        format!("{:>4}  {}{archived}", hit.id, hit.title)
    } else {
        format!("{:>4}  {}{archived} — {}", hit.id, hit.title, hit.snippet)
    }
}

/// List the most recently changed notes, newest first.
#[tool(
    name = "notes.list",
    category = "notes",
    scopes("notes:read"),
    approval = "read",
    capabilities(reads_fs, idempotent),
    mcp(read_only, destructive = false, idempotent, open_world = false),
    cli(aliases = ["ls"], examples = ["notes notes.list --limit 5"])
)]
pub async fn notes_list(
    input: ListNotes,
    store: State<Store>,
) -> Result<ToolOutput<NoteList>, ToolError> {
    let notes = store.recent(input.limit, input.include_archived).await?;
    let display = if notes.is_empty() {
        "No notes yet.".to_owned()
    } else {
        notes
            .iter()
            .map(|note| format!("{:>4}  {}", note.id, note.title))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok(ToolOutput::new(NoteList { notes }).with_display(display))
}

/// Give a note a new title.
#[tool(
    name = "notes.rename",
    category = "notes",
    scopes("notes:write"),
    approval = "write",
    capabilities(writes_fs, idempotent),
    mcp(read_only = false, destructive = false, idempotent, open_world = false),
    authorization_resource = "note",
    cli(
        positional = ["id", "title"],
        aliases = ["rename"],
        examples = ["notes notes.rename 1 \"Release checklist v2\""],
    )
)]
pub async fn notes_rename(
    input: RenameNote,
    store: State<Store>,
) -> Result<ToolOutput<Note>, ToolError> {
    let note = store.rename(input.id, input.title).await?;
    let display = format!("Renamed note {} to \"{}\"", note.id, note.title);
    Ok(ToolOutput::new(note).with_display(display))
}

/// Archive a note: it disappears from search and export unless archived notes are asked for.
#[tool(
    name = "notes.archive",
    category = "notes",
    scopes("notes:write"),
    approval(tier = "write", reason = "archiving hides the note from search"),
    capabilities(writes_fs, idempotent),
    mcp(read_only = false, destructive, idempotent, open_world = false),
    cli(positional = ["id"], aliases = ["archive"], examples = ["notes notes.archive 1"])
)]
pub async fn notes_archive(
    input: NoteId,
    store: State<Store>,
) -> Result<ToolOutput<Note>, ToolError> {
    let (note, changed) = store.archive(input.id).await?;
    let display = if changed {
        format!("Archived note {}: {}", note.id, note.title)
    } else {
        format!("Note {} was already archived", note.id)
    };
    Ok(ToolOutput::new(note).with_display(display))
}

/// Export every note as one Markdown document or a JSON array, reporting progress as it goes.
#[tool(
    name = "notes.export",
    category = "notes",
    scopes("notes:read"),
    approval = "read",
    capabilities(reads_fs, idempotent),
    mcp(read_only, destructive = false, idempotent, open_world = false),
    cli(
        aliases = ["export"],
        examples = [
            "notes notes.export > notes.md",
            "notes notes.export --format json --include-archived",
        ],
    )
)]
pub async fn notes_export(
    input: ExportNotes,
    store: State<Store>,
) -> impl Stream<Item = ToolEvent<Export>> {
    gonk_tools::stream! {
        // A few exports at a time: each holds its document in memory.
        let Some(_slot) = store.export_slot().await else {
            yield ToolEvent::error(ToolError::internal("the notes store is closing"));
            return;
        };
        let include_archived = input.include_archived;
        let total = match store.count(include_archived).await {
            Ok(total) => total as usize,
            Err(error) => {
                yield ToolEvent::error(error);
                return;
            }
        };
        let noun = if total == 1 { "note" } else { "notes" };
        yield ToolEvent::log(LogLevel::Info, format!("exporting {total} {noun}"));
        // Page by page: never every note and its rendering at once.
        let mut markdown_doc = String::new();
        let mut json_notes = Vec::new();
        let mut done = 0usize;
        let mut after = 0i64;
        loop {
            let page = match store.page(after, 200, include_archived).await {
                Ok(page) => page,
                Err(error) => {
                    yield ToolEvent::error(error);
                    return;
                }
            };
            let Some(last) = page.last() else { break };
            after = last.id;
            for note in page {
                match input.format {
                    ExportFormat::Markdown => {
                        if done > 0 {
                            markdown_doc.push_str("\n\n---\n\n");
                        }
                        markdown_doc.push_str(&markdown(&note));
                    }
                    ExportFormat::Json => json_notes.push(serde_json::to_value(&note).unwrap_or_default()),
                }
                if input.delay_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(input.delay_ms)).await;
                }
                done += 1;
                yield ToolEvent::progress(
                    (done as f64 * 100.0 / total.max(done) as f64).round(),
                    format!("exported {done}/{}", total.max(done)),
                );
            }
        }
        let (document, block) = match input.format {
            ExportFormat::Markdown => {
                (markdown_doc.clone(), DisplayBlock::Markdown { text: markdown_doc })
            }
            ExportFormat::Json => {
                let value = Value::Array(json_notes);
                let document = serde_json::to_string_pretty(&value).unwrap_or_default();
                (document, DisplayBlock::Json { value, caption: None })
            }
        };
        let export = Export { format: input.format, count: done, document };
        yield ToolEvent::Result { data: export, display: Some(vec![block].into()) };
    }
}

toolset! {
    /// Every notes tool. `NotesTools::register_tools(&registry)` registers them
    /// all, after the board app they link (`app::install`);
    /// `NotesToolsClient::new(transport)` calls them by type.
    pub struct NotesTools {
        NotesCreate,
        NotesGet,
        NotesSearch,
        NotesList,
        NotesRename,
        NotesArchive,
        NotesExport,
        NotesExportFile,
        NotesReindex,
        NotesBoard,
    }
}

/// A registry holding `store` as state, every notes tool, and the job
/// runner (with the `jobs.*` tools) that `notes.export_file` runs on.
pub fn registry(store: Arc<Store>) -> Result<ToolRegistry, RegistryError> {
    registry_with(store, gonk_tools::security::SecurityOptions::new(), None)
}

/// [`registry`] with `security` for authenticated calls (see
/// [`crate::approval::security`]) and each call's metric recorded to
/// `metrics` (the OTLP pipeline's sink under `--otel`).
pub fn registry_with(
    store: Arc<Store>,
    security: gonk_tools::security::SecurityOptions,
    metrics: Option<Arc<dyn gonk_tools::metrics::MetricsSink>>,
) -> Result<ToolRegistry, RegistryError> {
    registry_with_limits(store, security, metrics, None, None)
}

/// [`registry_with`], every root call counted against `limits` (`notes
/// --rate-limit`, see `limits.rs`), and jobs on NATS when `nats` gives
/// its URL and the jobs' configuration there (`--shared nats://…`).
pub fn registry_with_limits(
    store: Arc<Store>,
    security: gonk_tools::security::SecurityOptions,
    metrics: Option<Arc<dyn gonk_tools::metrics::MetricsSink>>,
    limits: Option<gonk_tools::rate_limit::RateLimits>,
    nats: Option<(String, gonk_tools::jobs::NatsJobConfig)>,
) -> Result<ToolRegistry, RegistryError> {
    let builder = ToolRegistry::builder()
        .state_arc(Arc::clone(&store))
        .security(security);
    let builder = match limits {
        Some(limits) => builder.rate_limits(limits),
        None => builder,
    };
    let registry = match metrics {
        Some(metrics) => builder.metrics(metrics),
        None => builder,
    }
    .build();
    // The board app first: notes.search and notes.board link it.
    crate::app::install(&registry)?;
    NotesTools::register_tools(&registry)?;
    crate::resources::install(&registry, &store)?;
    crate::jobs::install(&registry, store, nats)?;
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use gonk_tools::client::InProcess;

    use super::*;
    use crate::store::{sql, MEMORY};

    #[tokio::test]
    async fn the_typed_client_calls_every_tool_in_process() {
        let store = Arc::new(Store::new(Some(MEMORY.into())));
        let notes = NotesToolsClient::new(InProcess::new(registry(store).unwrap()));
        let note = notes
            .notes_create(CreateNote {
                title: "Typed".into(),
                body: "end to end".into(),
                tags: vec!["t".into()],
            })
            .await
            .unwrap();
        assert_eq!((note.id, note.title.as_str()), (1, "Typed"));
        let renamed = notes
            .notes_rename(RenameNote {
                id: 1,
                title: "Renamed".into(),
            })
            .await
            .unwrap();
        assert_eq!(renamed.title, "Renamed");
        assert_eq!(notes.notes_get(NoteId { id: 1 }).await.unwrap(), renamed);
        let found = notes
            .notes_search(SearchNotes {
                query: "end".into(),
                limit: 10,
                include_archived: false,
            })
            .await
            .unwrap();
        assert_eq!(found.hits.iter().map(|h| h.id).collect::<Vec<_>>(), [1]);
        let export = notes
            .notes_export(ExportNotes {
                format: ExportFormat::Json,
                include_archived: false,
                delay_ms: 0,
            })
            .await
            .unwrap();
        assert_eq!(export.count, 1);
        assert!(
            notes
                .notes_archive(NoteId { id: 1 })
                .await
                .unwrap()
                .archived
        );
        let missing = notes.notes_get(NoteId { id: 9 }).await.unwrap_err();
        assert_eq!(missing.code(), Some(&ErrorCode::custom("NOT_FOUND")));
    }

    #[tokio::test]
    async fn oversize_notes_are_refused_and_the_next_call_succeeds() {
        let store = Arc::new(Store::new(Some(MEMORY.into())));
        let registry = registry(store).unwrap();
        let create = |input: serde_json::Value| {
            collect_tool_outcome(
                registry.invoke("notes.create", input, ToolContext::new()),
                |_| {},
            )
        };
        let cases = [
            (json!({ "title": "t", "body": "x".repeat(65_537) }), "/body"),
            (json!({ "title": "t", "tags": vec!["t"; 33] }), "/tags"),
            (json!({ "title": "t", "tags": ["x".repeat(65)] }), "/tags/0"),
            (json!({ "title": "t", "tags": [""] }), "/tags/0"),
            (json!({ "title": "x".repeat(201) }), "/title"),
        ];
        for (input, path) in cases {
            let error = create(input).await.unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidInput);
            let paths: Vec<String> = error.issues().into_iter().map(|i| i.path).collect();
            assert_eq!(paths, [path]);
            // The answer quotes a bounded part of the value, not all of it.
            assert!(serde_json::to_string(&error).unwrap().len() < 2048);
        }
        let at_limit = json!({ "title": "t", "body": "x".repeat(65_536), "tags": vec!["t"; 32] });
        assert_eq!(create(at_limit).await.unwrap().data["id"], 1);
        let search = registry.invoke(
            "notes.search",
            json!({ "query": "q".repeat(201) }),
            ToolContext::new(),
        );
        let error = collect_tool_outcome(search, |_| {}).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidInput);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reindex_runs_as_a_job_and_cancelling_it_keeps_the_old_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::new(Some(dir.path().join("notes.db"))));
        store
            .with(|db| {
                for i in 0..1200 {
                    sql::create(db, &format!("Note {i}"), "findable text", &[])?;
                }
                Ok(())
            })
            .unwrap();
        let registry = registry(store).unwrap();
        let run = |tool: &str, input: serde_json::Value| {
            collect_tool_outcome(registry.invoke(tool, input, ToolContext::new()), |_| {})
        };
        // Waiting: the rebuild's progress, then the count.
        let mut reports = Vec::new();
        let waited = collect_tool_outcome(
            registry.invoke("notes.reindex", json!({ "wait": true }), ToolContext::new()),
            |e| reports.push(e.clone()),
        )
        .await
        .unwrap();
        assert_eq!(waited.data["notes"], 1200);
        assert_eq!(reports.iter().filter(|e| e.kind() == "progress").count(), 3);

        // Detached, slow, cancelled after its first batch: the old index stays.
        let handle = run("notes.reindex", json!({ "delay_ms": 2000 }))
            .await
            .unwrap();
        let id = handle.data["jobId"].as_str().unwrap().to_owned();
        for _ in 0..500 {
            let status = run("jobs.status", json!({ "jobId": id })).await.unwrap();
            if status.data["progress"].is_object() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let cancelled = run("jobs.cancel", json!({ "jobId": id })).await.unwrap();
        assert_eq!(cancelled.data["status"], "cancelled");
        let found = run("notes.search", json!({ "query": "findable", "limit": 20 }))
            .await
            .unwrap();
        assert_eq!(found.data["hits"].as_array().unwrap().len(), 20);
    }

    #[test]
    fn registering_without_a_store_fails_at_start_up() {
        let registry = ToolRegistry::new();
        crate::app::install(&registry).unwrap();
        let error = NotesTools::register_tools(&registry).unwrap_err();
        assert!(
            matches!(error, RegistryError::MissingState { .. }),
            "{error}"
        );
    }
}
