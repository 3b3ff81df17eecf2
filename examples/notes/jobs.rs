//! The notes example's background jobs: the embedded runner of
//! `gonk_tools::jobs`, with its records in the notes database (a `jobs`
//! table) so finished jobs survive a restart — or, with `--shared
//! nats://…`, jobs on NATS JetStream ([`NatsJobs`]): any replica launches,
//! every `notes serve`/`notes mcp` replica runs a share, and every query
//! answers from any replica.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use gonk_tools::jobs::{
    self, EmbeddedRunner, JobHandle, JobLaunch, JobRecord, JobRunner, JobStore, NatsJobConfig,
    NatsJobRunner, Retention,
};
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

/// Installs the job runner and the `jobs.*` tools: on the NATS at
/// `nats` (a `nats://` URL and its [`nats_config`]), else embedded with
/// the records in `store`'s database.
pub fn install(
    registry: &ToolRegistry,
    store: Arc<Store>,
    nats: Option<(String, NatsJobConfig)>,
) -> Result<(), RegistryError> {
    match nats {
        Some((url, config)) => {
            let shared = Arc::new(NatsJobs::new(url, config));
            registry.insert_state(Arc::clone(&shared));
            jobs::install(registry, shared)
        }
        None => {
            let records = Arc::new(SqliteJobs::new(store));
            let runner = EmbeddedRunner::with_store(Retention::default(), records);
            jobs::install(registry, Arc::new(runner))
        }
    }
}

/// Jobs on NATS JetStream, connected on first use (the registry is built
/// before the runtime starts).
pub struct NatsJobs {
    url: String,
    config: NatsJobConfig,
    runner: tokio::sync::OnceCell<NatsJobRunner>,
}

/// The environment variable giving the NATS jobs' ack wait in whole
/// seconds (30 without it): how long a replica's worker may go silent
/// before its job is run again by another replica.
pub const ACK_WAIT_ENV: &str = "NOTES_JOBS_ACK_WAIT";

/// How the jobs are named and delivered on NATS: their stream and records
/// named after `prefix` (characters NATS does not allow in names become
/// `_`), the ack wait from [`ACK_WAIT_ENV`].
pub fn nats_config(prefix: &str) -> Result<NatsJobConfig, String> {
    let prefix: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut config = NatsJobConfig {
        prefix,
        ..NatsJobConfig::default()
    };
    if let Ok(value) = std::env::var(ACK_WAIT_ENV) {
        config.ack_wait = ack_wait(&value)?;
    }
    Ok(config)
}

/// An [`ACK_WAIT_ENV`] value: whole seconds, at least 1.
fn ack_wait(value: &str) -> Result<Duration, String> {
    match value.trim().parse::<u64>() {
        Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs)),
        _ => Err(format!(
            "{ACK_WAIT_ENV}={value}: give the jobs' ack wait in whole seconds, at least 1 \
             (default 30)"
        )),
    }
}

impl NatsJobs {
    /// Jobs on the NATS at `url`, named and delivered as `config` says
    /// ([`nats_config`]).
    pub fn new(url: String, config: NatsJobConfig) -> Self {
        NatsJobs {
            url,
            config,
            runner: tokio::sync::OnceCell::new(),
        }
    }

    async fn runner(&self) -> Result<&NatsJobRunner, ToolError> {
        self.runner
            .get_or_try_init(|| NatsJobRunner::connect(&self.url, self.config.clone()))
            .await
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::custom("JOBS_UNAVAILABLE"),
                    format!(
                        "the job queue at {} cannot be reached ({e}); retry when NATS is back",
                        self.url
                    ),
                )
            })
    }

    /// Runs this process's share of the jobs with `registry`'s tools.
    pub async fn start_worker(&self, registry: ToolRegistry) -> Result<(), String> {
        let runner = self.runner().await.map_err(|e| e.message)?;
        runner
            .start_worker(registry)
            .await
            .map_err(|e| e.to_string())
    }

    /// Stops taking jobs (the ones running end or are delivered again).
    pub fn stop_worker(&self) {
        if let Some(runner) = self.runner.get() {
            runner.stop_worker();
        }
    }
}

impl NatsJobs {
    /// The runner for a query: while NATS is away a query answers as if
    /// the job were missing (the trait's queries return `Option`), and
    /// stderr says why.
    async fn connected(&self) -> Option<&NatsJobRunner> {
        self.runner()
            .await
            .map_err(|error| eprintln!("notes: {}", error.message))
            .ok()
    }
}

impl JobRunner for NatsJobs {
    fn launch(&self, launch: JobLaunch) -> BoxFuture<'_, Result<JobHandle, ToolError>> {
        Box::pin(async move { self.runner().await?.launch(launch).await })
    }

    fn get<'a>(&'a self, owner: Option<&'a str>, id: &'a str) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(async move { self.connected().await?.get(owner, id).await })
    }

    fn wait<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(async move { self.connected().await?.wait(owner, id, timeout).await })
    }

    fn cancel<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(async move { self.connected().await?.cancel(owner, id).await })
    }

    fn list<'a>(&'a self, owner: Option<&'a str>) -> BoxFuture<'a, Vec<JobRecord>> {
        Box::pin(async move {
            match self.connected().await {
                Some(runner) => runner.list(owner).await,
                None => Vec::new(),
            }
        })
    }

    fn retention(&self) -> Option<Retention> {
        self.runner.get().and_then(JobRunner::retention)
    }
}

/// The NATS jobs of `registry`, when `--shared nats://…` put them there.
pub fn nats(registry: &ToolRegistry) -> Option<Arc<NatsJobs>> {
    registry
        .state::<Arc<NatsJobs>>()
        .map(|shared| Arc::clone(&*shared))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ack_wait_is_whole_seconds_and_anything_else_says_what_to_give() {
        assert_eq!(ack_wait("5"), Ok(Duration::from_secs(5)));
        for bad in ["0", "-1", "5s", "1.5", ""] {
            let error = ack_wait(bad).unwrap_err();
            assert!(
                error.starts_with(&format!("NOTES_JOBS_ACK_WAIT={bad}: give")),
                "{error}"
            );
            assert!(error.contains("whole seconds, at least 1"), "{error}");
        }
    }
}
