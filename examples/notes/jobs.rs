//! The notes example's background jobs: the embedded runner of
//! `gonk_tools::jobs`, with its records in the notes database (a `jobs`
//! table) so finished jobs survive a restart.

use std::sync::Arc;

use gonk_tools::jobs::{self, EmbeddedRunner, JobRecord, JobStore, Retention};
use gonk_tools::prelude::*;
use gonk_tools::registry::RegistryError;
use rusqlite::{params, Connection};

use crate::store::Store;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, record TEXT NOT NULL)";

/// Job records as JSON rows of the notes database.
pub struct SqliteJobs {
    store: Arc<Store>,
}

impl SqliteJobs {
    /// Jobs kept in `store`'s database.
    pub fn new(store: Arc<Store>) -> Self {
        SqliteJobs { store }
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, String> {
        self.store
            .with(|db| {
                db.execute_batch(SCHEMA)
                    .and_then(|()| f(db))
                    .map_err(|e| ToolError::internal(e.to_string()))
            })
            .map_err(|e| e.message)
    }
}

impl JobStore for SqliteJobs {
    fn load(&self) -> Result<Vec<JobRecord>, String> {
        let rows: Vec<String> = self.with(|db| {
            let mut statement = db.prepare("SELECT record FROM jobs")?;
            let rows = statement.query_map([], |row| row.get(0))?;
            rows.collect()
        })?;
        // A row this version cannot read is skipped, not fatal.
        Ok(rows
            .iter()
            .filter_map(|row| serde_json::from_str(row).ok())
            .collect())
    }

    fn save(&self, record: &JobRecord) -> Result<(), String> {
        let json = serde_json::to_string(record).map_err(|e| e.to_string())?;
        self.with(|db| {
            db.execute(
                "INSERT OR REPLACE INTO jobs (id, record) VALUES (?1, ?2)",
                params![record.id, json],
            )
            .map(drop)
        })
    }

    fn remove(&self, id: &str) -> Result<(), String> {
        self.with(|db| {
            db.execute("DELETE FROM jobs WHERE id = ?1", params![id])
                .map(drop)
        })
    }
}

/// Installs the job runner (jobs in `store`'s database) and the `jobs.*`
/// tools.
pub fn install(registry: &ToolRegistry, store: Arc<Store>) -> Result<(), RegistryError> {
    let runner = EmbeddedRunner::with_store(Retention::default(), Arc::new(SqliteJobs::new(store)));
    jobs::install(registry, Arc::new(runner))
}
