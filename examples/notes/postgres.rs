//! Note storage on PostgreSQL (`notes --db postgres://HOST/DB`), with the
//! same operations, results, errors and limits as the SQLite store
//! (`store::sql`), through sqlx's `PgPool`.
//!
//! Search uses `pg_trgm`, not a `tsvector`: the SQLite store's FTS5 index
//! is a trigram index (substring matches, as `LIKE` finds), and a trigram
//! GIN index serves the same `ILIKE '%text%'` here, so one query finds the
//! same notes on both backends; a `tsvector` matches stemmed words, which
//! would find other notes ("run" in "running", never "ust" in "rust").
//!
//! The schema is created on first use, inside a transaction holding an
//! advisory lock, so replicas starting at once against a fresh database
//! wait for each other instead of racing on `CREATE … IF NOT EXISTS`.

use std::time::Duration;

use gonk_tools::prelude::*;
use sqlx::postgres::{PgPool, PgPoolOptions, PgRow};
use sqlx::Row;

use crate::store::{like_pattern, not_found, snippet, Hit, Note};

/// Connections the pool keeps at most.
const CONNECTIONS: u32 = 8;

/// How long a call waits for a connection before the database counts as
/// unreachable.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The advisory lock key of the schema migration ("notes" in ASCII).
const MIGRATION_LOCK: i64 = 0x6e6f746573;

/// UTC now in the SQLite store's format (RFC 3339, seconds).
const NOW: &str = r#"to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')"#;

const COLUMNS: &str = "id, title, body, tags, archived, created_at, updated_at";

/// The schema, one statement per entry (run in one transaction).
fn schema() -> [String; 4] {
    [
        "CREATE EXTENSION IF NOT EXISTS pg_trgm".to_owned(),
        format!(
            "CREATE TABLE IF NOT EXISTS notes (
                id          BIGSERIAL PRIMARY KEY,
                title       TEXT NOT NULL,
                body        TEXT NOT NULL DEFAULT '',
                tags        TEXT NOT NULL DEFAULT '[]',
                archived    BOOLEAN NOT NULL DEFAULT false,
                created_at  TEXT NOT NULL DEFAULT {NOW},
                updated_at  TEXT NOT NULL DEFAULT {NOW}
            )"
        ),
        "CREATE INDEX IF NOT EXISTS notes_updated ON notes (updated_at DESC)".to_owned(),
        // One trigram index over the three searched columns: each `ILIKE`
        // of the search below can use it.
        "CREATE INDEX IF NOT EXISTS notes_trgm ON notes
             USING gin (title gin_trgm_ops, body gin_trgm_ops, tags gin_trgm_ops)"
            .to_owned(),
    ]
}

/// A `ToolError` for a failed database call: `UNAVAILABLE` when PostgreSQL
/// cannot be reached (the pool reconnects by itself once it is back),
/// `INTERNAL` otherwise.
pub fn db_error(error: sqlx::Error) -> ToolError {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => ToolError::new(
            ErrorCode::custom("UNAVAILABLE"),
            format!(
                "the notes database (PostgreSQL) is unreachable: {error}; \
                 check that it runs and that --db points to it, then try again"
            ),
        ),
        sqlx::Error::Database(ref db) if db.code().is_some_and(|c| c.starts_with("57P")) => {
            // 57P01 admin_shutdown etc.: the server ended the connection.
            ToolError::new(
                ErrorCode::custom("UNAVAILABLE"),
                format!(
                    "the notes database (PostgreSQL) closed the connection: {error}; try again"
                ),
            )
        }
        other => ToolError::internal(format!("notes database error: {other}")),
    }
}

/// Opens a pool on `url` and creates the schema if needed.
pub async fn open(url: &str) -> Result<PgPool, ToolError> {
    let pool = PgPoolOptions::new()
        .max_connections(CONNECTIONS)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        // A connection the server ended (a restart, `pg_terminate_backend`)
        // is found and replaced before a call uses it.
        .test_before_acquire(true)
        .connect(url)
        .await
        .map_err(db_error)?;
    migrate(&pool).await?;
    Ok(pool)
}

/// Creates the schema under an advisory lock (released at commit).
pub async fn migrate(pool: &PgPool) -> Result<(), ToolError> {
    let mut tx = pool.begin().await.map_err(db_error)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
    for statement in schema() {
        sqlx::query(&statement)
            .execute(&mut *tx)
            .await
            .map_err(|e| match e {
                sqlx::Error::Database(ref db) if statement.contains("pg_trgm") => {
                    ToolError::internal(format!(
                        "cannot enable the pg_trgm extension that notes search needs ({db}); \
                         install it or run `CREATE EXTENSION pg_trgm` as a superuser"
                    ))
                }
                other => db_error(other),
            })?;
    }
    tx.commit().await.map_err(db_error)
}

fn note_from(row: &PgRow) -> Result<Note, ToolError> {
    let read = || -> Result<Note, sqlx::Error> {
        let tags: String = row.try_get(3)?;
        Ok(Note {
            id: row.try_get(0)?,
            title: row.try_get(1)?,
            body: row.try_get(2)?,
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            archived: row.try_get(4)?,
            created_at: row.try_get(5)?,
            updated_at: row.try_get(6)?,
        })
    };
    read().map_err(db_error)
}

/// PostgreSQL text cannot hold NUL, so a note holding one is refused
/// (SQLite would store it).
fn check_no_nul(field: &str, text: &str) -> Result<(), ToolError> {
    if text.contains('\0') {
        return Err(ToolError::new(
            ErrorCode::InvalidInput,
            format!("the {field} holds a NUL character, which PostgreSQL cannot store; remove it"),
        ));
    }
    Ok(())
}

/// Inserts a note.
pub async fn create(
    pool: &PgPool,
    title: &str,
    body: &str,
    tags: &[String],
) -> Result<Note, ToolError> {
    check_no_nul("title", title)?;
    check_no_nul("body", body)?;
    let tags = serde_json::to_string(tags)?;
    check_no_nul("tags", &tags)?;
    let row = sqlx::query(&format!(
        "INSERT INTO notes (title, body, tags) VALUES ($1, $2, $3) RETURNING {COLUMNS}"
    ))
    .bind(title)
    .bind(body)
    .bind(tags)
    .fetch_one(pool)
    .await
    .map_err(db_error)?;
    note_from(&row)
}

/// One note by id.
pub async fn get(pool: &PgPool, id: i64) -> Result<Note, ToolError> {
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM notes WHERE id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await
        .map_err(db_error)?;
    note_from(&row.ok_or_else(|| not_found(id))?)
}

/// Notes whose title, text or tags contain `query` (case-insensitive);
/// title matches first, then the most recently changed.
pub async fn search(
    pool: &PgPool,
    query: &str,
    limit: u32,
    include_archived: bool,
) -> Result<Vec<Hit>, ToolError> {
    if query.contains('\0') {
        // No stored text holds a NUL (see `check_no_nul`).
        return Ok(Vec::new());
    }
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM notes
         WHERE (title ILIKE $1 ESCAPE '\\' OR body ILIKE $1 ESCAPE '\\' OR tags ILIKE $1 ESCAPE '\\')
           AND ($2 OR NOT archived)
         ORDER BY (title ILIKE $1 ESCAPE '\\') DESC, updated_at DESC, id DESC
         LIMIT $3"
    ))
    .bind(like_pattern(query))
    .bind(include_archived)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            note_from(row).map(|note| Hit {
                id: note.id,
                title: note.title,
                snippet: snippet(&note.body),
                tags: note.tags,
                archived: note.archived,
            })
        })
        .collect()
}

/// Sets a note's title.
pub async fn rename(pool: &PgPool, id: i64, title: &str) -> Result<Note, ToolError> {
    check_no_nul("title", title)?;
    let row = sqlx::query(&format!(
        "UPDATE notes SET title = $2, updated_at = {NOW} WHERE id = $1 RETURNING {COLUMNS}"
    ))
    .bind(id)
    .bind(title)
    .fetch_optional(pool)
    .await
    .map_err(db_error)?;
    note_from(&row.ok_or_else(|| not_found(id))?)
}

/// Archives a note; `true` when it was not archived before.
pub async fn archive(pool: &PgPool, id: i64) -> Result<(Note, bool), ToolError> {
    let row = sqlx::query(&format!(
        "UPDATE notes SET archived = true, updated_at = {NOW}
         WHERE id = $1 AND NOT archived RETURNING {COLUMNS}"
    ))
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(db_error)?;
    match row {
        Some(row) => Ok((note_from(&row)?, true)),
        None => Ok((get(pool, id).await?, false)),
    }
}

/// The `limit` most recently changed notes, newest first.
pub async fn recent(
    pool: &PgPool,
    limit: u32,
    include_archived: bool,
) -> Result<Vec<Note>, ToolError> {
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM notes WHERE ($1 OR NOT archived)
         ORDER BY updated_at DESC, id DESC LIMIT $2"
    ))
    .bind(include_archived)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(note_from).collect()
}

/// Up to `limit` notes with an id above `after`, by id.
pub async fn page(
    pool: &PgPool,
    after: i64,
    limit: u32,
    include_archived: bool,
) -> Result<Vec<Note>, ToolError> {
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM notes WHERE id > $1 AND ($2 OR NOT archived)
         ORDER BY id LIMIT $3"
    ))
    .bind(after)
    .bind(include_archived)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(note_from).collect()
}

/// How many notes there are (without archived ones unless asked).
pub async fn count(pool: &PgPool, include_archived: bool) -> Result<u64, ToolError> {
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM notes WHERE ($1 OR NOT archived)")
        .bind(include_archived)
        .fetch_one(pool)
        .await
        .map_err(db_error)?;
    Ok(count.max(0) as u64)
}
