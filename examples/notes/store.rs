//! Note storage: embedded SQLite (rusqlite, bundled), at a per-user data
//! path unless `--db PATH` says otherwise (`--db :memory:` for a throwaway
//! database).
//!
//! The database is opened on first use, so `notes --help` or `notes list`
//! never create a file, and the location can be set after argv is parsed.
//!
//! A file database runs in WAL mode (`synchronous = NORMAL`: a commit
//! survives the process being killed; a power cut may lose the last ones)
//! behind a small pool of connections, so reads run side by side and two
//! processes can share one file. Each connection compiles a statement
//! once and keeps it (`prepare_cached`); this process's writes take turns
//! on one connection of their own rather than in SQLite's sleeping busy
//! handler (and, as the only writer here, it keeps its page cache). A
//! create, a read by id and a search run where they are asked when a
//! connection is free, within a budget of SQLite steps, and on a blocking
//! thread past it (`pool.rs`: on two cores the hop costs more than a short
//! query); every other query runs on a blocking thread.
//! Search uses an FTS5 index (trigram
//! tokens: substring matches, as `LIKE` would find, without a table scan),
//! kept in step with the notes by triggers (new notes a batch at a time,
//! the few behind scanned): the index finds the notes holding some of the
//! query's trigrams, and a check of their text keeps those holding the
//! query.
//!
//! `--db postgres://HOST/DB` (or `postgresql://`) puts the notes on
//! PostgreSQL instead (`postgres.rs`): the typed operations below
//! (`create`, `get`, `search`, …) run on whichever backend is chosen.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::pool::{Pool, FILE_CONNECTIONS};
use crate::postgres;

use gonk_tools::prelude::*;
use rusqlite::functions::FunctionFlags;
use rusqlite::{params, Connection, OptionalExtension, Row};

/// The SQLite location of an in-memory database.
pub const MEMORY: &str = ":memory:";

/// A note, as every tool returns it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    /// Its id.
    pub id: i64,
    /// Its title.
    pub title: String,
    /// Its text (Markdown).
    pub body: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Whether it is archived (hidden from search by default).
    pub archived: bool,
    /// When it was created (UTC, RFC 3339).
    pub created_at: String,
    /// When it last changed (UTC, RFC 3339).
    pub updated_at: String,
}

/// One search hit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    /// The note's id.
    pub id: i64,
    /// Its title.
    pub title: String,
    /// The start of its text.
    pub snippet: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Whether it is archived.
    pub archived: bool,
}

/// The notes database. Shared by the tools as registry state
/// (`State<Store>`).
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    /// Registry listeners that live as long as the store (the resource
    /// updates of `resources::install`).
    listeners: Mutex<Vec<gonk_tools::changes::ChangeSubscription>>,
    location: Mutex<Option<Database>>,
    pool: Mutex<Option<Arc<Pool>>>,
    postgres: tokio::sync::OnceCell<sqlx::PgPool>,
    exports: tokio::sync::Semaphore,
}

/// Where the notes live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Database {
    /// An embedded SQLite file (or `:memory:`).
    Sqlite(PathBuf),
    /// A PostgreSQL server, by its `postgres://` URL.
    Postgres(String),
}

/// The backend `--db` names: a `postgres://` or `postgresql://` URL is
/// PostgreSQL; anything else is a SQLite path (or `:memory:`).
pub fn database_from_arg(arg: impl Into<PathBuf>) -> Database {
    let arg = arg.into();
    match arg.to_str() {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Database::Postgres(url.to_owned())
        }
        _ => Database::Sqlite(arg),
    }
}

/// Exports that may build their documents at once (the rest wait).
pub const CONCURRENT_EXPORTS: usize = 2;

/// `$XDG_DATA_HOME/gonk-notes/notes.db`, else
/// `~/.local/share/gonk-notes/notes.db`; `None` when neither is known.
pub fn default_path() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|home| home.join(".local").join("share"))
        })?;
    Some(data_home.join("gonk-notes").join("notes.db"))
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS notes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL DEFAULT '',
    tags        TEXT NOT NULL DEFAULT '[]',
    archived    INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX IF NOT EXISTS notes_updated ON notes (updated_at DESC);
";

/// The full-text index over titles, texts and tags (an external-content
/// FTS5 table: the text is stored once, in `notes`). It keeps which notes
/// hold each trigram, not where (`detail = none`): search checks the text
/// of what it finds ([`holds`]) and asks for single trigrams, never
/// phrases. No column sizes: they serve only ranking by relevance
/// (`bm25`), which search does not use, and cost a row per note.
const SEARCH_INDEX: &str = "
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(
    title, body, tags, content = 'notes', content_rowid = 'id', tokenize = 'trigram',
    columnsize = 0, detail = none
);
";

/// How far the index has caught up (`notes_index`: every note with an id
/// up to `indexed_to` is in it), and the triggers that keep it in step.
///
/// FTS5 writes a segment of its index per transaction and merges segments
/// as they pile up, so indexing each create on its own costs about twice
/// what SQLite spends on the rest of the create. New notes are indexed
/// [`INDEX_BATCH`] at a time instead, by the create that brings the
/// count behind to the batch, in that create's own transaction; search
/// scans the few notes behind (ids above `indexed_to`: ids only grow) and
/// checks their text as it checks the index's candidates. A note behind
/// that changes or goes needs nothing from the index; one at or below
/// `indexed_to` is updated in it as before, and an insert with an id at or
/// below `indexed_to` (not ours: ids are `AUTOINCREMENT`) is indexed at
/// once.
fn index_triggers() -> String {
    format!(
        "
CREATE TRIGGER IF NOT EXISTS notes_index_catch_up AFTER INSERT ON notes
WHEN new.id - (SELECT indexed_to FROM notes_index) >= {INDEX_BATCH} BEGIN
    INSERT INTO notes_fts (rowid, title, body, tags)
        SELECT id, title, body, tags FROM notes WHERE id > (SELECT indexed_to FROM notes_index);
    UPDATE notes_index SET indexed_to = (SELECT max(id) FROM notes);
    INSERT INTO notes_fts (notes_fts, rank) VALUES ('merge', {INDEX_MERGE_PAGES});
END;
CREATE TRIGGER IF NOT EXISTS notes_index_insert_below AFTER INSERT ON notes
WHEN new.id <= (SELECT indexed_to FROM notes_index) BEGIN
    INSERT INTO notes_fts (rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS notes_index_delete AFTER DELETE ON notes
WHEN old.id <= (SELECT indexed_to FROM notes_index) BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
        VALUES ('delete', old.id, old.title, old.body, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS notes_index_update AFTER UPDATE OF title, body, tags ON notes
WHEN old.id <= (SELECT indexed_to FROM notes_index) BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
        VALUES ('delete', old.id, old.title, old.body, old.tags);
    INSERT INTO notes_fts (rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
END;
"
    )
}

/// How many pages of merging a batch adds to FTS5's own (`automerge`):
/// without it a batch's larger segments are merged later than single
/// notes' were, and a search seeks its trigrams in about twice as many.
const INDEX_MERGE_PAGES: u32 = 16;

/// How many notes behind the search index may be before the create that
/// makes them that many indexes them all; a search scans the at most one
/// fewer behind it.
pub const INDEX_BATCH: i64 = 16;

/// The triggers of files made before [`index_triggers`], which indexed
/// every note in its own transaction.
const ROW_BY_ROW_TRIGGERS: &str = "
DROP TRIGGER IF EXISTS notes_fts_insert;
DROP TRIGGER IF EXISTS notes_fts_delete;
DROP TRIGGER IF EXISTS notes_fts_update;
";

/// Trigram search needs at least this many characters; shorter queries
/// scan with `LIKE`.
const MIN_INDEXED_QUERY: usize = 3;

/// How many notes [`Store::reindex`] indexes between progress reports.
pub const REINDEX_BATCH: i64 = 500;

const COLUMNS: &str = "id, title, body, tags, archived, created_at, updated_at";

pub(crate) fn db_error(error: rusqlite::Error) -> ToolError {
    ToolError::internal(format!("notes database error: {error}"))
}

/// `NOT_FOUND` for a missing note.
pub fn not_found(id: i64) -> ToolError {
    ToolError::new(
        ErrorCode::custom("NOT_FOUND"),
        format!("No note with id {id}; `notes notes.search <text>` finds ids"),
    )
    .with_details(json!({ "id": id }))
}

fn note_from(row: &Row<'_>) -> rusqlite::Result<Note> {
    let tags: String = row.get(3)?;
    Ok(Note {
        id: row.get(0)?,
        title: row.get(1)?,
        body: row.get(2)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        archived: row.get(4)?,
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
    })
}

/// `%text%` for LIKE, with `%`, `_` and `\` escaped.
pub(crate) fn like_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Every how many characters [`trigram_terms`] takes a trigram.
const TRIGRAM_STRIDE: usize = 6;

/// Some of the trigrams of `text` (at least 3 characters), as FTS5 terms:
/// the first, one every [`TRIGRAM_STRIDE`] characters after it, and the
/// last, each quoted (inner quotes doubled, so no query syntax reaches the
/// parser). Up to 8 characters, the first and the last.
fn trigram_terms(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let last = chars.len() - 3;
    (0..=last)
        .step_by(TRIGRAM_STRIDE)
        .chain((!last.is_multiple_of(TRIGRAM_STRIDE)).then_some(last))
        .map(|start| {
            let mut term = String::with_capacity(12);
            term.push('"');
            for &c in &chars[start..start + 3] {
                if c == '"' {
                    term.push('"');
                }
                term.push(c);
            }
            term.push('"');
            term
        })
        .collect()
}

/// How many notes a trigram may be in for search to take them from the
/// index by that trigram alone.
const FEW_NOTES: usize = 64;

/// Where a search's candidates come from.
#[derive(Debug, PartialEq)]
enum Candidates {
    /// The notes holding one of the query's trigrams, read off the index
    /// (a JSON array of ids).
    Ids(String),
    /// The FTS5 query for the notes holding all of [`trigram_terms`].
    Query(String),
}

/// The candidates of a search for `text` (at least 3 characters): the
/// notes holding the rarest of its [`trigram_terms`] when one is in at
/// most [`FEW_NOTES`] notes, else those holding all of them.
///
/// [`holds`] checks the text of every note found, so any of the query's
/// trigrams find every note holding it; what differs is the work. FTS5
/// answers `a AND b` by walking both lists of notes, so a trigram most
/// notes hold (`the`, or `s0 ` in the load's titles) costs a step per note
/// in the notebook, where a rare one alone costs a step and a check per
/// note holding it. Reading up to [`FEW_NOTES`] + 1 notes of each term,
/// the last first (the end of what someone types is the likelier to be
/// rare), finds a rare one and its notes in one seek.
fn candidates(db: &Connection, text: &str) -> rusqlite::Result<Candidates> {
    let terms = trigram_terms(text);
    let mut notes =
        db.prepare_cached("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?1 LIMIT ?2")?;
    let mut rarest: Option<Vec<i64>> = None;
    for term in terms.iter().rev() {
        let ids = notes
            .query_map(params![term, FEW_NOTES as i64 + 1], |row| {
                row.get::<_, i64>(0)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if ids.len() <= FEW_NOTES && rarest.as_ref().is_none_or(|r| ids.len() < r.len()) {
            // A handful is as good as it gets: no need to seek the others.
            let enough = ids.len() <= FEW_NOTES / 4;
            rarest = Some(ids);
            if enough {
                break;
            }
        }
    }
    Ok(match rarest {
        Some(ids) => Candidates::Ids(serde_json::to_string(&ids).unwrap_or_default()),
        None => Candidates::Query(terms.join(" AND ")),
    })
}

/// `text` with its letters in lower case, one letter for one, as the
/// trigram index folds them.
fn fold(text: &str) -> String {
    text.chars()
        .map(|c| {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) => l,
                _ => c,
            }
        })
        .collect()
}

/// Whether `text`, [`fold`]ed, contains `folded` (a query folded once, not
/// for every note and column). SQL: `notes_contains`.
fn holds(text: &str, folded: &str) -> bool {
    if text.is_ascii() && folded.is_ascii() {
        let (text, folded) = (text.as_bytes(), folded.as_bytes());
        return folded.is_empty()
            || text
                .windows(folded.len())
                .any(|window| window.eq_ignore_ascii_case(folded));
    }
    fold(text).contains(folded)
}

pub(crate) fn snippet(body: &str) -> String {
    let line = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = line.chars();
    let short: String = chars.by_ref().take(80).collect();
    if chars.next().is_some() {
        format!("{short}…")
    } else {
        short
    }
}

impl Store {
    /// A store at `location` (a file path or `:memory:`), opened on first
    /// use. `None` means "no default could be found": the first use fails
    /// with a message asking for `--db`.
    pub fn new(location: Option<PathBuf>) -> Self {
        Store {
            inner: Arc::new(Inner {
                listeners: Mutex::new(Vec::new()),
                location: Mutex::new(location.map(Database::Sqlite)),
                pool: Mutex::new(None),
                postgres: tokio::sync::OnceCell::new(),
                exports: tokio::sync::Semaphore::new(CONCURRENT_EXPORTS),
            }),
        }
    }

    /// Up to `limit` notes with an id above `after`, by id, read on a
    /// blocking thread: the step of every walk over the whole notebook.
    pub async fn page(
        &self,
        after: i64,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<Note>, ToolError> {
        match self.postgres().await? {
            Some(pool) => postgres::page(&pool, after, limit, include_archived).await,
            None => {
                self.run(move |db| sql::page(db, after, limit, include_archived))
                    .await
            }
        }
    }

    /// The PostgreSQL pool (opened and migrated on first use) when the
    /// notes live there; `None` for SQLite.
    async fn postgres(&self) -> Result<Option<sqlx::PgPool>, ToolError> {
        let url = match &*self
            .inner
            .location
            .lock()
            .unwrap_or_else(|p| p.into_inner())
        {
            Some(Database::Postgres(url)) => url.clone(),
            _ => return Ok(None),
        };
        // A failed open leaves the cell empty: the next call tries again.
        let pool = self
            .inner
            .postgres
            .get_or_try_init(|| postgres::open(&url))
            .await?;
        Ok(Some(pool.clone()))
    }

    /// Inserts a note.
    pub async fn create(
        &self,
        title: String,
        body: String,
        tags: Vec<String>,
    ) -> Result<Note, ToolError> {
        match self.postgres().await? {
            Some(pool) => postgres::create(&pool, &title, &body, &tags).await,
            // One statement (the insert and its index trigger): stopped or
            // refused here, it left nothing behind, so it runs again on a
            // blocking thread.
            None => match self
                .inner
                .try_write_here(|db| sql::create(db, &title, &body, &tags))
            {
                Some(note) => note,
                None => {
                    self.run_write(move |db| sql::create(db, &title, &body, &tags))
                        .await
                }
            },
        }
    }

    /// One note by id (`NOT_FOUND` when there is none).
    pub async fn get(&self, id: i64) -> Result<Note, ToolError> {
        match self.postgres().await? {
            Some(pool) => postgres::get(&pool, id).await,
            None => match self.inner.try_read_here(|db| sql::get(db, id)) {
                Some(note) => note,
                None => self.run(move |db| sql::get(db, id)).await,
            },
        }
    }

    /// Notes whose title, text or tags contain `query` (case-insensitive);
    /// title matches first, then the most recently changed.
    pub async fn search(
        &self,
        query: String,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<Hit>, ToolError> {
        match self.postgres().await? {
            Some(pool) => postgres::search(&pool, &query, limit, include_archived).await,
            None => match self
                .inner
                .try_read_here(|db| sql::search(db, &query, limit, include_archived))
            {
                Some(hits) => hits,
                None => {
                    self.run(move |db| sql::search(db, &query, limit, include_archived))
                        .await
                }
            },
        }
    }

    /// Sets a note's title.
    pub async fn rename(&self, id: i64, title: String) -> Result<Note, ToolError> {
        match self.postgres().await? {
            Some(pool) => postgres::rename(&pool, id, &title).await,
            None => self.run_write(move |db| sql::rename(db, id, &title)).await,
        }
    }

    /// Archives a note; `true` when it was not archived before.
    pub async fn archive(&self, id: i64) -> Result<(Note, bool), ToolError> {
        match self.postgres().await? {
            Some(pool) => postgres::archive(&pool, id).await,
            None => self.run_write(move |db| sql::archive(db, id)).await,
        }
    }

    /// The `limit` most recently changed notes, newest first.
    pub async fn recent(&self, limit: u32, include_archived: bool) -> Result<Vec<Note>, ToolError> {
        match self.postgres().await? {
            Some(pool) => postgres::recent(&pool, limit, include_archived).await,
            None => {
                self.run(move |db| sql::recent(db, limit, include_archived))
                    .await
            }
        }
    }

    /// How many notes there are (without archived ones unless asked).
    pub async fn count(&self, include_archived: bool) -> Result<u64, ToolError> {
        match self.postgres().await? {
            Some(pool) => postgres::count(&pool, include_archived).await,
            None => self.run(move |db| sql::count(db, include_archived)).await,
        }
    }

    /// Waits for one of the [`CONCURRENT_EXPORTS`] export slots (an export
    /// holds its document in memory until it is sent); `None` once closed.
    pub async fn export_slot(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.inner.exports.acquire().await.ok()
    }

    /// Moves the store to `location`, if it has not been opened yet.
    pub fn set_location(&self, location: impl Into<PathBuf>) {
        self.set_database(Database::Sqlite(location.into()));
    }

    /// Moves the store to `database` (SQLite or PostgreSQL), if it has not
    /// been opened yet.
    pub fn set_database(&self, database: Database) {
        let mut slot = self
            .inner
            .location
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        *slot = Some(database);
    }

    fn connect(location: &Path) -> Result<Connection, ToolError> {
        let connection = if location.as_os_str() == MEMORY {
            Connection::open_in_memory()
        } else {
            if let Some(parent) = location.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| {
                    ToolError::internal(format!(
                        "cannot create the notes directory {}: {e}; pass --db PATH to use another file",
                        parent.display()
                    ))
                })?;
            }
            Connection::open(location)
        }
        .map_err(|e| {
            ToolError::internal(format!(
                "cannot open the notes database {}: {e}; pass --db PATH to use another file",
                location.display()
            ))
        })?;
        connection
            .busy_timeout(crate::pool::BUSY_TIMEOUT)
            .map_err(db_error)?;
        // A cached statement stays compiled: without the query planner
        // stability guarantee, SQLite recompiles a statement whose
        // `LIKE ?` could be planned from the bound value — every search.
        connection
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
                true,
            )
            .map_err(db_error)?;
        connection
            .create_scalar_function(
                "notes_contains",
                2,
                FunctionFlags::SQLITE_UTF8
                    | FunctionFlags::SQLITE_DETERMINISTIC
                    | FunctionFlags::SQLITE_INNOCUOUS,
                |context| {
                    let text = context.get_raw(0).as_str().unwrap_or_default();
                    let folded = context.get_raw(1).as_str().unwrap_or_default();
                    Ok(holds(text, folded))
                },
            )
            .map_err(db_error)?;
        Ok(connection)
    }

    /// Opens the database: WAL mode and the schema (the search index built
    /// for a database made before it existed), then the pool's other
    /// connections.
    fn open(location: &Path) -> Result<Pool, ToolError> {
        let first = Self::connect(location)?;
        let memory = location.as_os_str() == MEMORY;
        if !memory {
            let _mode: String = first
                .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
                .map_err(db_error)?;
            first
                .execute_batch("PRAGMA synchronous = NORMAL")
                .map_err(db_error)?;
        }
        first.execute_batch(SCHEMA).map_err(db_error)?;
        Self::index(&first).map_err(db_error)?;
        if memory {
            return Ok(Pool::new(vec![first], None));
        }
        let mut connections = Vec::with_capacity(FILE_CONNECTIONS);
        for _ in 0..FILE_CONNECTIONS {
            let connection = Self::connect(location)?;
            connection
                .execute_batch("PRAGMA synchronous = NORMAL")
                .map_err(db_error)?;
            connections.push(connection);
        }
        // The first connection, which made the schema, writes.
        Ok(Pool::new(connections, Some(first)))
    }

    /// Makes the search index and its triggers, in one transaction: for a
    /// file made before the index, the index of every note; for one made
    /// when each note was indexed on its own, the batched triggers in place
    /// of the old ones, every note counted as indexed.
    fn index(db: &Connection) -> rusqlite::Result<()> {
        let exists = |name: &str| {
            db.query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = ?1)",
                [name],
                |row| row.get::<_, bool>(0),
            )
        };
        // Made already, and no older `notes` has put its row-by-row
        // triggers back since (the usual case): nothing to write.
        if exists("notes_index")? && !exists("notes_fts_insert")? {
            return Ok(());
        }
        db.execute_batch("BEGIN IMMEDIATE")?;
        let made = (|| {
            // Another process may have made it meanwhile.
            let (indexed, batched) = (exists("notes_fts")?, exists("notes_index")?);
            if batched {
                if exists("notes_fts_insert")? {
                    // An older binary opened the file and made its triggers
                    // again: with both sets, a note may be indexed twice.
                    db.execute_batch(ROW_BY_ROW_TRIGGERS)?;
                    db.execute_batch(
                        "INSERT INTO notes_fts (notes_fts) VALUES ('rebuild');
                         UPDATE notes_index SET indexed_to = (SELECT coalesce(max(id), 0) FROM notes);",
                    )?;
                }
                return Ok(());
            }
            db.execute_batch(SEARCH_INDEX)?;
            if !indexed {
                // A search seeks each of its trigrams in every segment of the
                // index; merging at 2 segments a level instead of 4 keeps
                // fewer of them.
                db.execute_batch(
                    "INSERT INTO notes_fts (notes_fts, rank) VALUES ('automerge', 2);
                     INSERT INTO notes_fts (notes_fts) VALUES ('rebuild');",
                )?;
            }
            db.execute_batch(ROW_BY_ROW_TRIGGERS)?;
            db.execute_batch(
                "CREATE TABLE notes_index (indexed_to INTEGER NOT NULL);
                 INSERT INTO notes_index SELECT coalesce(max(id), 0) FROM notes;",
            )?;
            db.execute_batch(&index_triggers())
        })();
        db.execute_batch(if made.is_ok() { "COMMIT" } else { "ROLLBACK" })?;
        made
    }

    /// Keeps a registry's change listener alive as long as the store.
    pub fn keep_listener(&self, listener: gonk_tools::changes::ChangeSubscription) {
        self.inner
            .listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(listener);
    }

    /// Runs `f` on the connection on a blocking thread (SQLite blocks),
    /// opening the database first if needed.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || inner.with(f))
            .await
            .map_err(|e| ToolError::internal(format!("notes database task failed: {e}")))?
    }

    /// [`Store::run`] for a write: on the writer connection, one at a time
    /// in this process.
    pub async fn run_write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || inner.pool()?.write(f))
            .await
            .map_err(|e| ToolError::internal(format!("notes database task failed: {e}")))?
    }

    /// Runs `f` on the connection, opening the database first if needed.
    /// Blocking: async code calls [`Store::run`].
    pub fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        self.inner.with(f)
    }

    /// Rebuilds the full-text index from the notes, [`REINDEX_BATCH`] notes
    /// at a time, calling `progress(done, total)` after each batch; a
    /// `Break` from it stops and keeps the old index (`ABORTED`). Returns
    /// how many notes were indexed.
    ///
    /// Blocking: run it on a blocking thread. It is one write transaction,
    /// so the index is never half built: writes wait until it ends (other
    /// connections up to their busy timeout), and searches use the old
    /// index until it commits.
    pub fn reindex(
        &self,
        mut progress: impl FnMut(u64, u64) -> ControlFlow<()>,
    ) -> Result<u64, ToolError> {
        self.with(|db| {
            db.execute_batch("BEGIN IMMEDIATE").map_err(db_error)?;
            let rebuilt = rebuild_index(db, &mut progress);
            let end = if rebuilt.is_ok() {
                "COMMIT"
            } else {
                "ROLLBACK"
            };
            db.execute_batch(end).map_err(db_error)?;
            rebuilt
        })
    }
}

/// The body of [`Store::reindex`], inside its transaction.
fn rebuild_index(
    db: &Connection,
    progress: &mut impl FnMut(u64, u64) -> ControlFlow<()>,
) -> Result<u64, ToolError> {
    let total = db
        .query_row("SELECT count(*) FROM notes", [], |row| row.get::<_, i64>(0))
        .map_err(db_error)? as u64;
    db.execute(
        "INSERT INTO notes_fts (notes_fts) VALUES ('delete-all')",
        [],
    )
    .map_err(db_error)?;
    let mut batch = db
        .prepare(
            "INSERT INTO notes_fts (rowid, title, body, tags)
             SELECT id, title, body, tags FROM notes WHERE id > ?1 ORDER BY id LIMIT ?2
             RETURNING rowid",
        )
        .map_err(db_error)?;
    let (mut done, mut last) = (0u64, 0i64);
    loop {
        let ids = batch
            .query_map(params![last, REINDEX_BATCH], |row| row.get::<_, i64>(0))
            .map_err(db_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db_error)?;
        let Some(&max) = ids.iter().max() else {
            db.execute("UPDATE notes_index SET indexed_to = ?1", [last])
                .map_err(db_error)?;
            return Ok(done);
        };
        last = max;
        done += ids.len() as u64;
        if progress(done, total.max(done)).is_break() {
            return Err(ToolError::new(
                ErrorCode::Aborted,
                format!("reindex stopped after {done} of {total} notes; the old index is kept"),
            ));
        }
    }
}

impl Inner {
    fn with<T>(&self, f: impl FnOnce(&Connection) -> Result<T, ToolError>) -> Result<T, ToolError> {
        self.pool()?.with(f)
    }

    /// The SQLite pool if it is open (opening it blocks).
    fn open_pool(&self) -> Option<Arc<Pool>> {
        self.pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(Arc::clone)
    }

    /// A read run here, on the async worker ([`Pool::try_read_here`]);
    /// `None`: run it on a blocking thread.
    fn try_read_here<T>(&self, f: impl FnOnce(&Connection) -> T) -> Option<T> {
        self.open_pool()?.try_read_here(f)
    }

    /// A write run here ([`Pool::try_write_here`]); `None`: run it on a
    /// blocking thread. A checkpoint it made due runs on one.
    fn try_write_here<T>(&self, f: impl FnOnce(&Connection) -> T) -> Option<T> {
        let pool = self.open_pool()?;
        let written = pool.try_write_here(f)?;
        if pool.take_checkpoint() {
            tokio::task::spawn_blocking(move || pool.checkpoint());
        }
        Some(written)
    }

    /// The SQLite pool, opened on first use (blocking).
    fn pool(&self) -> Result<Arc<Pool>, ToolError> {
        let mut slot = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pool) = slot.as_ref() {
            return Ok(Arc::clone(pool));
        }
        let location = self
            .location
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let location = match location {
            Some(Database::Sqlite(path)) => path,
            Some(Database::Postgres(_)) => {
                return Err(ToolError::new(
                    ErrorCode::custom("UNSUPPORTED"),
                    "this operation needs the SQLite store and is not available \
                     on PostgreSQL yet; pass --db PATH for a SQLite file",
                ))
            }
            None => {
                return Err(ToolError::internal(
                    "no per-user data directory is known (set XDG_DATA_HOME or HOME), \
                     so pass --db PATH",
                ))
            }
        };
        let pool = Arc::new(Store::open(&location)?);
        *slot = Some(Arc::clone(&pool));
        Ok(pool)
    }
}

/// The queries behind the tools. Each takes an open connection.
pub mod sql {
    use super::*;

    /// Inserts a note.
    pub fn create(
        db: &Connection,
        title: &str,
        body: &str,
        tags: &[String],
    ) -> Result<Note, ToolError> {
        let tags = serde_json::to_string(tags)?;
        // One cached statement: the insert (and its index trigger) is
        // compiled once per connection, and answers the row it made.
        db.prepare_cached(
            "INSERT INTO notes (title, body, tags) VALUES (?1, ?2, ?3) \
             RETURNING id, title, body, tags, archived, created_at, updated_at",
        )
        .map_err(db_error)?
        .query_row(params![title, body, tags], note_from)
        .map_err(db_error)
    }

    /// One note by id.
    pub fn get(db: &Connection, id: i64) -> Result<Note, ToolError> {
        db.prepare_cached(
            "SELECT id, title, body, tags, archived, created_at, updated_at FROM notes WHERE id = ?1",
        )
        .map_err(db_error)?
        .query_row(params![id], note_from)
        .optional()
        .map_err(db_error)?
        .ok_or_else(|| not_found(id))
    }

    /// Notes whose title, text or tags contain `query` (case-insensitive);
    /// title matches first, then the most recently changed. The FTS5
    /// index finds the candidates; a query shorter than a trigram scans.
    pub fn search(
        db: &Connection,
        query: &str,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<Hit>, ToolError> {
        // FTS5 reads a query only up to a NUL ("unterminated string"), so
        // a query holding one scans too.
        let indexable = query.chars().count() >= MIN_INDEXED_QUERY && !query.contains('\0');
        // The index finds the notes holding some of the query's trigrams
        // (`candidates`, in any column), beside the few notes it has not
        // caught up with yet; `notes_contains` keeps those holding the
        // query itself (bound folded).
        let (source, found) = match indexable
            .then(|| candidates(db, query))
            .transpose()
            .map_err(db_error)?
        {
            Some(Candidates::Ids(ids)) => ("id IN (SELECT value FROM json_each(?4))", ids),
            Some(Candidates::Query(terms)) => (
                "id IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?4)",
                terms,
            ),
            None => ("?4 IS NOT NULL", String::new()),
        };
        let matching = if indexable {
            "(notes_contains(title, ?5) OR notes_contains(body, ?5) OR notes_contains(tags, ?5))"
        } else {
            "(title LIKE ?1 ESCAPE '\\' OR body LIKE ?1 ESCAPE '\\' OR tags LIKE ?1 ESCAPE '\\')
             AND ?5 IS NOT NULL"
        };
        let behind = if indexable {
            "OR id > (SELECT indexed_to FROM notes_index)"
        } else {
            ""
        };
        let mut statement = db
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM notes
                 WHERE ({source} {behind}) AND {matching}
                   AND (?2 OR archived = 0)
                 ORDER BY (title LIKE ?1 ESCAPE '\\') DESC, updated_at DESC, id DESC
                 LIMIT ?3"
            ))
            .map_err(db_error)?;
        let rows = statement
            .query_map(
                params![
                    like_pattern(query),
                    include_archived,
                    limit,
                    found,
                    fold(query)
                ],
                note_from,
            )
            .map_err(db_error)?;
        rows.map(|row| {
            row.map(|note| Hit {
                id: note.id,
                title: note.title,
                snippet: snippet(&note.body),
                tags: note.tags,
                archived: note.archived,
            })
            .map_err(db_error)
        })
        .collect()
    }

    /// Sets a note's title.
    pub fn rename(db: &Connection, id: i64, title: &str) -> Result<Note, ToolError> {
        let changed = db
            .prepare_cached(
                "UPDATE notes SET title = ?2, updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?1",
            )
            .and_then(|mut update| update.execute(params![id, title]))
            .map_err(db_error)?;
        if changed == 0 {
            return Err(not_found(id));
        }
        get(db, id)
    }

    /// Archives a note; `true` when it was not archived before.
    pub fn archive(db: &Connection, id: i64) -> Result<(Note, bool), ToolError> {
        let changed = db
            .prepare_cached(
                "UPDATE notes SET archived = 1, updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
                 WHERE id = ?1 AND archived = 0",
            )
            .and_then(|mut update| update.execute(params![id]))
            .map_err(db_error)?;
        Ok((get(db, id)?, changed > 0))
    }

    /// Every note, oldest first.
    /// The `limit` most recently changed notes, newest first.
    pub fn recent(
        db: &Connection,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<Note>, ToolError> {
        let mut statement = db
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM notes WHERE (?1 OR archived = 0) \
                 ORDER BY updated_at DESC, id DESC LIMIT ?2"
            ))
            .map_err(db_error)?;
        let rows = statement
            .query_map(params![include_archived, limit], note_from)
            .map_err(db_error)?;
        rows.map(|row| row.map_err(db_error)).collect()
    }

    /// Up to `limit` notes with an id above `after`, by id: a page of a
    /// long walk that never holds the whole notebook.
    pub fn page(
        db: &Connection,
        after: i64,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<Note>, ToolError> {
        let mut statement = db
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM notes WHERE id > ?1 AND (?2 OR archived = 0) \
                 ORDER BY id LIMIT ?3"
            ))
            .map_err(db_error)?;
        let rows = statement
            .query_map(params![after, include_archived, limit], note_from)
            .map_err(db_error)?;
        rows.map(|row| row.map_err(db_error)).collect()
    }

    /// How many notes there are (without archived ones unless asked).
    pub fn count(db: &Connection, include_archived: bool) -> Result<u64, ToolError> {
        let count: i64 = db
            .query_row(
                "SELECT COUNT(*) FROM notes WHERE (?1 OR archived = 0)",
                params![include_archived],
                |row| row.get(0),
            )
            .map_err(db_error)?;
        Ok(count.max(0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_through_sqlite() {
        let store = Store::new(Some(PathBuf::from(MEMORY)));
        store
            .with(|db| {
                let a = sql::create(db, "Rust 100%", "ownership_and borrowing", &["lang".into()])?;
                sql::create(db, "Groceries", "milk, rust remover", &[])?;
                assert_eq!(sql::get(db, a.id)?.tags, ["lang"]);
                let hits = sql::search(db, "rust", 10, false)?;
                assert_eq!(
                    hits.iter().map(|h| h.title.as_str()).collect::<Vec<_>>(),
                    ["Rust 100%", "Groceries"]
                );
                // LIKE wildcards in the query are literal.
                assert_eq!(sql::search(db, "0%", 10, false)?.len(), 1);
                assert_eq!(sql::search(db, "p_a", 10, false)?.len(), 1);
                assert_eq!(sql::search(db, "_", 10, false)?.len(), 1);
                let (archived, changed) = sql::archive(db, a.id)?;
                assert!(archived.archived && changed);
                assert!(!sql::archive(db, a.id)?.1);
                assert_eq!(sql::search(db, "rust", 10, false)?.len(), 1);
                assert_eq!(sql::search(db, "rust", 10, true)?.len(), 2);
                assert_eq!(sql::rename(db, a.id, "Rust")?.title, "Rust");
                assert_eq!(
                    sql::get(db, 99).unwrap_err().code,
                    ErrorCode::custom("NOT_FOUND")
                );
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn search_input_is_text_never_query_syntax() {
        let store = Store::new(Some(PathBuf::from(MEMORY)));
        store
            .with(|db| {
                sql::create(
                    db,
                    "Say \"hi\" NEAR(the) door",
                    "a OR b * c",
                    &["x:y".into()],
                )?;
                for indexed in behind_then_indexed(db) {
                    for query in [
                        "\"hi\"", "NEAR(the", "a OR b", "b * c", "x:y", "\"", "*", "^ca", ")",
                    ] {
                        let hits = sql::search(db, query, 10, false)?;
                        let expected = usize::from(query != "^ca");
                        assert_eq!(hits.len(), expected, "{query:?} (indexed: {indexed})");
                    }
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn a_database_made_before_the_index_is_indexed_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(SCHEMA).unwrap();
            old.execute(
                "INSERT INTO notes (title, body) VALUES ('Backlog', 'groom the tickets')",
                [],
            )
            .unwrap();
        }
        let store = Store::new(Some(path.clone()));
        let hits = store
            .with(|db| sql::search(db, "tickets", 10, false))
            .unwrap();
        assert_eq!(hits.len(), 1);
        // The index follows later changes too.
        store
            .with(|db| sql::rename(db, hits[0].id, "Sprint backlog"))
            .unwrap();
        let hits = store
            .with(|db| sql::search(db, "sprint", 10, false))
            .unwrap();
        assert_eq!(hits.len(), 1);
        let mode: String = store
            .with(|db| {
                db.query_row("PRAGMA journal_mode", [], |r| r.get(0))
                    .map_err(db_error)
            })
            .unwrap();
        assert_eq!(mode, "wal");
    }

    /// Creates notes that match no test's query until the index has caught
    /// up with every note: a search then finds them through the index, not
    /// by scanning the notes behind it.
    fn catch_up(db: &Connection) {
        loop {
            let (behind, indexed_to): (i64, i64) = db
                .query_row(
                    "SELECT (SELECT coalesce(max(id), 0) FROM notes), indexed_to FROM notes_index",
                    [],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .unwrap();
            if behind == indexed_to {
                return;
            }
            assert!(behind - indexed_to < INDEX_BATCH, "the index fell behind");
            sql::create(db, "~", "", &[]).unwrap();
        }
    }

    /// `false`, then `true` once [`catch_up`] has indexed every note: a
    /// check run in a loop over it sees the notes behind the index first,
    /// then the same notes through the index.
    fn behind_then_indexed(db: &Connection) -> impl Iterator<Item = bool> + '_ {
        [false, true].into_iter().inspect(move |&indexed| {
            if indexed {
                catch_up(db);
            }
        })
    }

    /// The ids the index itself finds for `query` (no scan of the notes
    /// behind it), and how far it has caught up.
    fn in_index(db: &Connection, query: &str) -> (Vec<i64>, i64) {
        let mut ids = db
            .prepare("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?1 ORDER BY rowid")
            .unwrap()
            .query_map([trigram_terms(query).join(" AND ")], |row| row.get(0))
            .unwrap()
            .collect::<Result<Vec<i64>, _>>()
            .unwrap();
        ids.dedup();
        let indexed_to = db
            .query_row("SELECT indexed_to FROM notes_index", [], |row| row.get(0))
            .unwrap();
        (ids, indexed_to)
    }

    /// FTS5's own check of the index: that it holds exactly the notes'
    /// text when none is behind it, and only that it is whole inside when
    /// some are (it would miss them).
    fn index_is_sound(db: &Connection) {
        let caught_up: bool = db
            .query_row(
                "SELECT coalesce(max(id), 0) = (SELECT indexed_to FROM notes_index) FROM notes",
                [],
                |row| row.get(0),
            )
            .unwrap();
        db.execute(
            "INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', ?1)",
            [caught_up],
        )
        .unwrap();
    }

    #[test]
    fn new_notes_are_found_before_and_after_the_index_catches_up() {
        let store = Store::new(Some(PathBuf::from(MEMORY)));
        store
            .with(|db| {
                let mut ids = Vec::new();
                for i in 1..INDEX_BATCH {
                    ids.push(sql::create(db, &format!("kiwi {i}"), "fresh", &[])?.id);
                }
                // Behind the index: not in it, found all the same.
                assert_eq!(in_index(db, "kiwi"), (vec![], 0));
                assert_eq!(sql::search(db, "kiwi", 100, false)?.len(), ids.len());
                // Changed and renamed while behind: found by what they are now.
                sql::rename(db, ids[0], "mango")?;
                db.execute("DELETE FROM notes WHERE id = ?1", [ids[1]])
                    .map_err(db_error)?;
                assert_eq!(sql::search(db, "kiwi", 100, false)?.len(), ids.len() - 2);
                assert_eq!(sql::search(db, "mango", 100, false)?[0].id, ids[0]);
                index_is_sound(db);

                // The batch's last create indexes the notes behind, itself included.
                let last = sql::create(db, "kiwi last", "", &[])?.id;
                let (indexed, indexed_to) = in_index(db, "kiwi");
                assert_eq!(indexed_to, last);
                assert_eq!(indexed.len(), ids.len() - 2 + 1);
                assert_eq!(in_index(db, "mango").0, vec![ids[0]]);
                assert_eq!(sql::search(db, "kiwi", 100, false)?.len(), ids.len() - 1);
                index_is_sound(db);

                // Indexed notes follow their changes in the index.
                sql::rename(db, ids[2], "papaya")?;
                db.execute("DELETE FROM notes WHERE id = ?1", [ids[3]])
                    .map_err(db_error)?;
                assert_eq!(in_index(db, "papaya").0, vec![ids[2]]);
                assert_eq!(sql::search(db, "kiwi", 100, false)?.len(), ids.len() - 3);
                index_is_sound(db);

                // A row put in below the index's mark is indexed at once.
                db.execute(
                    "INSERT INTO notes (id, title) VALUES (?1, 'guava')",
                    [ids[1]],
                )
                .map_err(db_error)?;
                assert_eq!(in_index(db, "guava").0, vec![ids[1]]);
                index_is_sound(db);
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn a_file_indexed_row_by_row_keeps_its_index_and_batches_from_then_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("row-by-row.db");
        {
            // The schema and triggers as files before the batches had them.
            let old = Connection::open(&path).unwrap();
            old.execute_batch(SCHEMA).unwrap();
            old.execute_batch(
                "CREATE VIRTUAL TABLE notes_fts USING fts5(
                     title, body, tags, content = 'notes', content_rowid = 'id', tokenize = 'trigram');
                 CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes BEGIN
                     INSERT INTO notes_fts (rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
                 END;
                 CREATE TRIGGER notes_fts_delete AFTER DELETE ON notes BEGIN
                     INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
                         VALUES ('delete', old.id, old.title, old.body, old.tags);
                 END;
                 CREATE TRIGGER notes_fts_update AFTER UPDATE OF title, body, tags ON notes BEGIN
                     INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
                         VALUES ('delete', old.id, old.title, old.body, old.tags);
                     INSERT INTO notes_fts (rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
                 END;
                 INSERT INTO notes (title) VALUES ('Backlog'), ('Roadmap');",
            )
            .unwrap();
        }
        let triggers = |db: &Connection| {
            let names: Vec<String> = db
                .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
                .unwrap()
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(
                names.iter().all(|name| name.starts_with("notes_index_")),
                "{names:?}"
            );
            names.len()
        };
        let store = Store::new(Some(path.clone()));
        store
            .with(|db| {
                assert_eq!(triggers(db), 4);
                // The notes indexed before are counted as indexed.
                assert_eq!(in_index(db, "roadmap"), (vec![2], 2));
                sql::rename(db, 2, "Plan")?;
                let third = sql::create(db, "Backlog two", "", &[])?.id;
                assert_eq!(in_index(db, "backlog"), (vec![1], 2));
                let hits = sql::search(db, "backlog", 10, false)?;
                assert_eq!(hits.len(), 2, "{hits:?}");
                assert!(hits.iter().any(|hit| hit.id == third));
                assert!(sql::search(db, "roadmap", 10, false)?.is_empty());
                index_is_sound(db);
                catch_up(db);
                index_is_sound(db);
                Ok(())
            })
            .unwrap();
        drop(store);

        // An older binary opens the file again: its insert trigger comes
        // back, and it writes notes with both sets of triggers in place.
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes BEGIN
                     INSERT INTO notes_fts (rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
                 END;",
            )
            .unwrap();
            for i in 0..INDEX_BATCH {
                old.execute(
                    "INSERT INTO notes (title) VALUES (?1)",
                    [format!("Old {i}")],
                )
                .unwrap();
            }
        }
        // Opened by this one again: one set of triggers, a sound index.
        let store = Store::new(Some(path));
        store
            .with(|db| {
                assert_eq!(triggers(db), 4);
                index_is_sound(db);
                assert_eq!(
                    sql::search(db, "old ", 100, false)?.len() as i64,
                    INDEX_BATCH
                );
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn search_finds_the_query_itself_not_only_its_trigrams() {
        let store = Store::new(Some(PathBuf::from(MEMORY)));
        store
            .with(|db| {
                // Every trigram of "abcdefgh", but never the whole of it in
                // one column, in order.
                sql::create(db, "abc fgh", "bcd def efg", &["cde".into()])?;
                sql::create(db, "fghabcde", "", &[])?;
                assert!(sql::search(db, "abcdefgh", 10, false)?.is_empty());
                let whole = sql::create(db, "plan", "the abcdefgh step", &[])?;
                let hits = sql::search(db, "ABCDEFGH", 10, false)?;
                assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), [whole.id]);
                // Every trigram of a long query, in three columns.
                sql::create(db, "abcdefgh", "habcdefg", &["efghabcd".into()])?;
                for indexed in behind_then_indexed(db) {
                    // Lengths 3 to 8, and 16: some trigrams, then the check.
                    for (query, notes) in [
                        ("abc", 4),
                        ("abcd", 3),
                        ("fghab", 2),
                        ("bcdef", 2),
                        ("cdefgh", 2),
                        ("abcdefg", 2),
                        ("ABCDEFGH", 2),
                        ("abcdefghabcdefgh", 0),
                    ] {
                        let hits = sql::search(db, query, 10, false)?;
                        assert_eq!(hits.len(), notes, "{query:?} (indexed: {indexed})");
                    }
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn search_asks_the_index_for_a_rare_trigram_alone() {
        let store = Store::new(Some(PathBuf::from(MEMORY)));
        store
            .with(|db| {
                for i in 0..FEW_NOTES * 2 {
                    sql::create(db, &format!("common xyz{i}"), "", &[])?;
                }
                catch_up(db);
                // `com` and ` xy` are in every note, `z42` in one.
                let id = |title: &str| {
                    db.query_row("SELECT id FROM notes WHERE title = ?1", [title], |row| {
                        row.get::<_, i64>(0)
                    })
                    .unwrap()
                };
                assert_eq!(
                    candidates(db, "common xyz42").map_err(db_error)?,
                    Candidates::Ids(format!("[{}]", id("common xyz42")))
                );
                let hits = sql::search(db, "COMMON XYZ42", 500, false)?;
                assert_eq!(
                    hits.iter().map(|h| h.title.as_str()).collect::<Vec<_>>(),
                    ["common xyz42"]
                );
                // No trigram is rare: all of them.
                assert_eq!(
                    candidates(db, "common xy").map_err(db_error)?,
                    Candidates::Query("\"com\" AND \" xy\"".into())
                );
                let hits = sql::search(db, "common xy", 500, false)?;
                assert_eq!(hits.len(), FEW_NOTES * 2);
                // A trigram in no note: the index finds none.
                assert_eq!(
                    candidates(db, "common qq").map_err(db_error)?,
                    Candidates::Ids("[]".into())
                );
                assert!(sql::search(db, "common qq", 500, false)?.is_empty());
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn search_folds_letters_beyond_ascii() {
        let store = Store::new(Some(PathBuf::from(MEMORY)));
        store
            .with(|db| {
                sql::create(db, "Été à Zürich", "Ωμέγα notes", &["Straße".into()])?;
                for indexed in behind_then_indexed(db) {
                    for query in ["ÉTÉ", "zürICH", "ZÜRICH", "ωΜΈΓΑ", "straße", "STRAßE"]
                    {
                        let hits = sql::search(db, query, 10, false)?;
                        assert_eq!(hits.len(), 1, "{query:?} (indexed: {indexed})");
                    }
                    assert!(sql::search(db, "ete", 10, false)?.is_empty());
                }
                Ok(())
            })
            .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_creates_are_each_kept_once_with_their_own_answer() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::new(Some(dir.path().join("notes.db"))));
        let creates = (0..64).map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.create(format!("note {i}"), "b".into(), vec![]).await })
        });
        let notes = futures::future::join_all(creates).await;
        let mut ids = Vec::new();
        for (i, note) in notes.into_iter().enumerate() {
            let note = note.unwrap().unwrap();
            assert_eq!(note.title, format!("note {i}"));
            assert_eq!(store.get(note.id).await.unwrap().title, note.title);
            ids.push(note.id);
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 64);
        let stored: (i64, i64) = store
            .run(|db| {
                db.query_row(
                    "SELECT count(*), count(DISTINCT title) FROM notes",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(db_error)
            })
            .await
            .unwrap();
        assert_eq!(stored, (64, 64));
    }

    #[test]
    fn a_query_holding_a_nul_is_text_too() {
        let store = Store::new(Some(PathBuf::from(MEMORY)));
        store
            .with(|db| {
                sql::create(db, "plain", "", &[])?;
                for _indexed in behind_then_indexed(db) {
                    // FTS5 would stop at the NUL and answer "unterminated string".
                    for query in ["a\u{0}bc", "\"\u{0}\"", "pla\u{0}"] {
                        assert!(sql::search(db, query, 10, false)?.is_empty(), "{query:?}");
                    }
                    assert_eq!(sql::search(db, "lai", 10, false)?.len(), 1);
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn reindex_rebuilds_the_index_in_batches_and_reports_progress() {
        let store = Store::new(Some(PathBuf::from(MEMORY)));
        let total = REINDEX_BATCH as u64 * 2 + 7;
        store
            .with(|db| {
                for i in 0..total {
                    sql::create(db, &format!("note {i}"), "needle", &[])?;
                }
                // Lose the index, as a damaged one would.
                db.execute(
                    "INSERT INTO notes_fts (notes_fts) VALUES ('delete-all')",
                    [],
                )
                .map_err(db_error)?;
                Ok(())
            })
            .unwrap();
        let search = || store.with(|db| sql::search(db, "needle", 20, false));
        // Only the notes behind the index are found (they are scanned).
        let behind = store
            .with(|db| {
                db.query_row(
                    "SELECT count(*) FROM notes WHERE id > (SELECT indexed_to FROM notes_index)",
                    [],
                    |row| row.get::<_, i64>(0),
                )
                .map_err(db_error)
            })
            .unwrap();
        assert!(behind < INDEX_BATCH);
        assert_eq!(search().unwrap().len() as i64, behind);
        let mut reports = Vec::new();
        let indexed = store
            .reindex(|done, total| {
                reports.push((done, total));
                ControlFlow::Continue(())
            })
            .unwrap();
        assert_eq!(indexed, total);
        assert_eq!(reports.len(), 3);
        assert_eq!(reports.last(), Some(&(total, total)));
        assert_eq!(search().unwrap().len(), 20);
        // A stop keeps the index as it was, and the store keeps working.
        let stopped = store.reindex(|_, _| ControlFlow::Break(())).unwrap_err();
        assert_eq!(stopped.code, ErrorCode::Aborted);
        assert_eq!(search().unwrap().len(), 20);
        // The rebuilt index holds every note, and takes new ones after it.
        store
            .with(|db| {
                index_is_sound(db);
                sql::create(db, "after", "needle", &[])?;
                catch_up(db);
                index_is_sound(db);
                Ok(())
            })
            .unwrap();
    }
}
