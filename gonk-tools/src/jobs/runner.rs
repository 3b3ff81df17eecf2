//! [`JobRunner`], the seam between detached tools and whatever runs their
//! jobs, and [`EmbeddedRunner`], the default: jobs on this process's
//! runtime.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use indexmap::IndexMap;
use serde_json::{Map, Value};
use tokio::sync::{oneshot, Notify};
use tokio_util::sync::CancellationToken;

use super::asking::{JobAsker, JobAsking};
use super::record::{now_rfc3339, JobLog, JobProgress, JobRecord, JobStatus};
use super::store::JobStore;
use super::JobHandle;
use crate::ask::InputRequest;
use crate::context::ToolContext;
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::event::ToolOutput;
use crate::registry::ToolRegistry;
use crate::security::AuthContext;

/// A call to run detached.
#[derive(Clone)]
#[non_exhaustive]
pub struct JobLaunch {
    /// The registry the call runs in.
    pub registry: ToolRegistry,
    /// The tool.
    pub tool: String,
    /// Its input (validated again when the job runs it).
    pub input: Value,
    /// What kind of work it is.
    pub kind: String,
    /// The launching caller's auth context: the job's call is authorized
    /// and audited as this principal. `None` is the trusted internal path.
    pub auth: Option<AuthContext>,
    /// What the launching caller can answer and has answered: the job
    /// asks them through the runner (see [`JobRunner::answer`]). `None`:
    /// the job cannot ask.
    pub asking: Option<JobAsking>,
}

impl JobLaunch {
    /// A launch of `tool` with `input` in `registry`.
    pub fn new(registry: ToolRegistry, tool: impl Into<String>, input: Value) -> Self {
        let tool = tool.into();
        JobLaunch {
            registry,
            kind: tool.clone(),
            tool,
            input,
            auth: None,
            asking: None,
        }
    }

    /// Lets the job ask its caller (see [`JobAsking`]).
    pub fn asking(mut self, asking: Option<JobAsking>) -> Self {
        self.asking = asking;
        self
    }

    /// Sets the kind.
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = kind.into();
        self
    }

    /// Runs the job as `auth`'s principal.
    pub fn auth(mut self, auth: Option<AuthContext>) -> Self {
        self.auth = auth;
        self
    }

    /// The owner key of a job launched as `auth`.
    pub fn owner(&self) -> Option<String> {
        owner_of(self.auth.as_ref())
    }
}

impl std::fmt::Debug for JobLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobLaunch")
            .field("tool", &self.tool)
            .field("kind", &self.kind)
            .field("authenticated", &self.auth.is_some())
            .finish_non_exhaustive()
    }
}

/// The owner key of a caller: its security context key; `None` for the
/// unauthenticated path.
pub fn owner_of(auth: Option<&AuthContext>) -> Option<String> {
    auth.map(|auth| auth.security_context_key().to_owned())
}

/// Runs detached calls and answers for them.
///
/// The registry's detached tools and the `jobs.*` tools talk to a runner
/// only through this trait, so a host can put jobs on an external queue:
/// implement `launch` to enqueue (the [`JobLaunch`] carries the tool, the
/// validated input and the caller's auth context; a worker runs it with
/// `registry.invoke(tool, input, ToolContext::new().with_auth(auth))`),
/// and the queries from the queue's own records. Every query takes the
/// caller's owner key and must treat another owner's job as missing.
pub trait JobRunner: Send + Sync + 'static {
    /// Starts a job; its handle carries the job id.
    fn launch(&self, launch: JobLaunch) -> BoxFuture<'_, Result<JobHandle, ToolError>>;

    /// The job, if `owner` may see it.
    fn get<'a>(&'a self, owner: Option<&'a str>, id: &'a str) -> BoxFuture<'a, Option<JobRecord>>;

    /// The job once it has ended, or as it is after `timeout`.
    fn wait<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Option<JobRecord>>;

    /// Cancels the job (its handler is dropped); the record as it is now.
    fn cancel<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Option<JobRecord>>;

    /// `owner`'s jobs, newest first.
    fn list<'a>(&'a self, owner: Option<&'a str>) -> BoxFuture<'a, Vec<JobRecord>>;

    /// Waits until no job this process runs is queued or running: what a
    /// short-lived host (a command line) awaits before it exits, since its
    /// jobs end with it. A runner whose jobs live elsewhere returns at once
    /// (the default).
    fn idle(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    /// Delivers `answers` to the questions the running job asked (by key;
    /// keys it is not waiting on are ignored). `None` when `owner` cannot
    /// see the job. The default acknowledges and ignores every answer: a
    /// runner whose jobs cannot ask never has questions.
    fn answer<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
        answers: Map<String, Value>,
    ) -> BoxFuture<'a, Option<()>> {
        let _ = answers;
        Box::pin(async move { self.get(owner, id).await.map(drop) })
    }

    /// How long this runner keeps a finished job readable, when it bounds
    /// that: MCP tells a client the time it may still read a task
    /// (`ttlMs`) from it. `None` (the default) says jobs are kept without
    /// a time limit; a runner that expires them must say so.
    fn retention(&self) -> Option<Retention> {
        None
    }
}

/// How long finished jobs are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// At most this many finished jobs (the oldest go first).
    pub max_finished: usize,
    /// Finished jobs older than this go.
    pub max_age: Duration,
}

impl Default for Retention {
    /// 1,000 finished jobs, for an hour.
    fn default() -> Self {
        Retention {
            max_finished: 1000,
            max_age: Duration::from_secs(3600),
        }
    }
}

/// Log lines kept per job.
const MAX_LOGS: usize = 50;

struct Entry {
    record: JobRecord,
    token: CancellationToken,
    ended: Arc<Notify>,
}

struct Shared {
    jobs: Mutex<IndexMap<String, Entry>>,
    retention: Retention,
    store: Option<Arc<dyn JobStore>>,
    loaded: OnceLock<()>,
    /// Finished jobs in the order they ended (what retention evicts by).
    finished: Mutex<VecDeque<(String, SystemTime)>>,
    /// Jobs launched and not yet ended and written.
    unsettled: AtomicUsize,
    settled: Notify,
    next: AtomicU64,
    prefix: String,
    /// Answers awaited by running jobs: job id → question key → the
    /// asker's channel.
    pub(super) waiting: Mutex<HashMap<String, HashMap<String, oneshot::Sender<Value>>>>,
}

/// The default [`JobRunner`]: each job a task on the current tokio
/// runtime with its own cancellation token, running the call through
/// [`ToolRegistry::invoke`] (the full contract). Status, last progress,
/// recent logs and the outcome are kept with bounded [`Retention`], and
/// written to a [`JobStore`] if one is given.
///
/// ```
/// use std::sync::Arc;
/// use gonk_tools::jobs::{self, EmbeddedRunner};
/// use gonk_tools::prelude::*;
///
/// let registry = ToolRegistry::new();
/// jobs::install(&registry, Arc::new(EmbeddedRunner::new())).unwrap();
/// assert!(registry.has("jobs.status"));
/// ```
#[derive(Clone)]
pub struct EmbeddedRunner {
    shared: Arc<Shared>,
}

impl Default for EmbeddedRunner {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for EmbeddedRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedRunner")
            .field("jobs", &self.lock().len())
            .field("retention", &self.shared.retention)
            .finish_non_exhaustive()
    }
}

impl EmbeddedRunner {
    /// A runner with the default retention and no persistence.
    pub fn new() -> Self {
        Self::build(Retention::default(), None)
    }

    /// A runner keeping finished jobs as `retention` says.
    pub fn with_retention(retention: Retention) -> Self {
        Self::build(retention, None)
    }

    /// A runner that writes every job to `store` and starts with the jobs
    /// it holds, so finished jobs survive a restart. The store is read on
    /// the runner's first use (not here), so a command line that never
    /// touches jobs never opens it; a store that cannot be read is logged
    /// and the runner starts empty.
    ///
    /// A job the store holds as queued or running was cut off by the end
    /// of the process that ran it: it reads as failed (`INTERRUPTED`). The
    /// store itself is not rewritten, so if that process is in fact alive
    /// (two processes sharing one store), its final write still lands.
    pub fn with_store(retention: Retention, store: Arc<dyn JobStore>) -> Self {
        Self::build(retention, Some(store))
    }

    fn build(retention: Retention, store: Option<Arc<dyn JobStore>>) -> Self {
        let started = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis();
        EmbeddedRunner {
            shared: Arc::new(Shared {
                jobs: Mutex::new(IndexMap::new()),
                retention,
                store,
                loaded: OnceLock::new(),
                finished: Mutex::new(VecDeque::new()),
                unsettled: AtomicUsize::new(0),
                settled: Notify::new(),
                next: AtomicU64::new(1),
                prefix: format!("job-{started:x}-"),
                waiting: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Loads the store's records, once.
    fn load(&self) {
        let Some(store) = &self.shared.store else {
            return;
        };
        self.shared.loaded.get_or_init(|| {
            let loaded = match store.load() {
                Ok(loaded) => loaded,
                Err(error) => {
                    tracing::warn!(target: "gonk_tools::jobs", %error, "job store could not be read; starting without its jobs");
                    return;
                }
            };
            let mut ended = Vec::with_capacity(loaded.len());
            {
                let mut jobs = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
                for mut record in loaded {
                    if !record.status.is_terminal() {
                        record.status = JobStatus::Failed;
                        record.error = Some(interrupted());
                    }
                    let at = humantime::parse_rfc3339_weak(&record.updated_at)
                        .unwrap_or_else(|_| SystemTime::now());
                    ended.push((record.id.clone(), at));
                    let entry = Entry {
                        record,
                        token: CancellationToken::new(),
                        ended: Arc::new(Notify::new()),
                    };
                    jobs.entry(entry.record.id.clone()).or_insert(entry);
                }
                // Launch order, whatever the store's (`list` is newest first).
                jobs.sort_by(|_, a, _, b| a.record.created_at.cmp(&b.record.created_at));
            }
            ended.sort_by_key(|(_, at)| *at);
            self.shared
                .finished
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(ended);
        });
    }

    fn lock(&self) -> MutexGuard<'_, IndexMap<String, Entry>> {
        self.load();
        // A panic while holding the lock leaves plain data; keep serving.
        self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn wait_idle(&self) {
        loop {
            let settled = self.shared.settled.notified();
            let mut settled = std::pin::pin!(settled);
            settled.as_mut().enable();
            if self.shared.unsettled.load(Ordering::SeqCst) == 0 {
                return;
            }
            settled.await;
        }
    }

    fn persist(&self, record: &JobRecord) {
        if let Some(store) = &self.shared.store {
            if let Err(error) = store.save(record) {
                tracing::warn!(target: "gonk_tools::jobs", job = %record.id, %error, "job store write failed");
            }
        }
    }

    /// Applies `change` to a job's record (if it is still there).
    fn update(&self, id: &str, change: impl FnOnce(&mut JobRecord)) {
        if let Some(entry) = self.lock().get_mut(id) {
            change(&mut entry.record);
            entry.record.updated_at = now_rfc3339();
        }
    }

    /// Records that job `id` asks `question` under `key`, and hands back
    /// where its answer will arrive.
    pub(super) fn await_answer(
        &self,
        id: &str,
        key: &str,
        question: &InputRequest,
    ) -> oneshot::Receiver<Value> {
        let (sender, receiver) = oneshot::channel();
        self.shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id.to_owned())
            .or_default()
            .insert(key.to_owned(), sender);
        self.update(id, |record| {
            record.questions.insert(key.to_owned(), question.clone());
        });
        receiver
    }

    /// Withdraws questions of job `id` nobody answered.
    pub(super) fn withdraw(&self, id: &str, keys: &[String]) {
        if let Some(waiting) = self
            .shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(id)
        {
            for key in keys {
                waiting.remove(key);
            }
        }
        self.update(id, |record| {
            for key in keys {
                record.questions.remove(key);
            }
        });
    }

    /// Ends a job once: the first outcome wins.
    fn finish(&self, id: &str, status: JobStatus, outcome: Result<ToolOutput, ToolError>) {
        let record = {
            let mut jobs = self.lock();
            let Some(entry) = jobs.get_mut(id) else {
                return;
            };
            if entry.record.status.is_terminal() {
                return;
            }
            entry.record.status = status;
            entry.record.updated_at = now_rfc3339();
            entry.record.questions.clear();
            match outcome {
                Ok(output) => entry.record.output = Some(output),
                Err(error) => entry.record.error = Some(error),
            }
            entry.ended.notify_waiters();
            entry.record.clone()
        };
        self.persist(&record);
        self.shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        self.shared
            .finished
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back((record.id.clone(), SystemTime::now()));
        // Settled only once written: a host that exits when idle loses nothing.
        self.shared.unsettled.fetch_sub(1, Ordering::SeqCst);
        self.shared.settled.notify_waiters();
        self.prune();
    }

    /// Drops finished jobs past the retention limits.
    fn prune(&self) {
        self.load();
        let retention = self.shared.retention;
        let now = SystemTime::now();
        let mut evicted = Vec::new();
        {
            let mut finished = self
                .shared
                .finished
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            // Oldest first: the queue is in the order jobs ended.
            while let Some((_, at)) = finished.front() {
                let too_old = now
                    .duration_since(*at)
                    .is_ok_and(|age| age > retention.max_age);
                if finished.len() > retention.max_finished || too_old {
                    let (id, _) = finished.pop_front().expect("front exists");
                    evicted.push(id);
                } else {
                    break;
                }
            }
        }
        if evicted.is_empty() {
            return;
        }
        {
            let mut jobs = self.lock();
            for id in &evicted {
                jobs.shift_remove(id);
            }
        }
        if let Some(store) = &self.shared.store {
            for id in evicted {
                if let Err(error) = store.remove(&id) {
                    tracing::warn!(target: "gonk_tools::jobs", job = %id, %error, "job store delete failed");
                }
            }
        }
    }

    fn visible(entry: &Entry, owner: Option<&str>) -> bool {
        entry.record.owner.as_deref() == owner
    }

    async fn run(self, id: String, launch: JobLaunch, token: CancellationToken) {
        let started = {
            let mut jobs = self.lock();
            jobs.get_mut(&id)
                .filter(|e| e.record.status == JobStatus::Queued)
                .map(|entry| {
                    entry.record.status = JobStatus::Running;
                    entry.record.updated_at = now_rfc3339();
                    entry.record.clone()
                })
        };
        if let Some(record) = started {
            self.persist(&record);
            // A cancel that ended the job while that write was on its way
            // wrote its record first; write the ending again so the store
            // does not keep the job running (read back as INTERRUPTED).
            let ended = self
                .lock()
                .get(&id)
                .filter(|entry| entry.record.status.is_terminal())
                .map(|entry| entry.record.clone());
            if let Some(ended) = ended {
                self.persist(&ended);
            }
        }
        // The launch was counted against the rate limits; its run is not.
        let mut ctx = ToolContext::new()
            .with_cancellation(token.clone())
            .with_rate_limit_charged();
        if let Some(auth) = launch.auth {
            ctx = ctx.with_auth(auth);
        }
        if let Some(asking) = launch.asking {
            ctx = ctx.with_asker(Arc::new(JobAsker::new(self.clone(), id.clone(), asking)));
        }
        let mut events = launch.registry.invoke(&launch.tool, launch.input, ctx);
        while let Some(event) = events.next().await {
            match event {
                ToolEvent::Progress { percent, message } => self.update(&id, |r| {
                    r.progress = Some(JobProgress { percent, message });
                }),
                ToolEvent::Log { level, message, .. } => self.update(&id, |r| {
                    if r.logs.len() == MAX_LOGS {
                        r.logs.remove(0);
                    }
                    r.logs.push(JobLog { level, message });
                }),
                ToolEvent::Data { .. } => {}
                ToolEvent::Result { data, display } => {
                    return self.finish(
                        &id,
                        JobStatus::Succeeded,
                        Ok(ToolOutput { data, display }),
                    );
                }
                event @ ToolEvent::Error { .. } => {
                    let error = event.as_error().expect("an error event");
                    let cancelled = error.code == ErrorCode::Aborted && token.is_cancelled();
                    let status = if cancelled {
                        JobStatus::Cancelled
                    } else {
                        JobStatus::Failed
                    };
                    return self.finish(&id, status, Err(error));
                }
            }
        }
        // Dispatch always ends a stream with an outcome; be safe anyway.
        self.finish(
            &id,
            JobStatus::Failed,
            Err(ToolError::new(
                ErrorCode::NoResult,
                "Tool produced no result",
            )),
        );
    }
}

fn interrupted() -> ToolError {
    ToolError::new(
        ErrorCode::custom("INTERRUPTED"),
        "The job was cut off by a restart of the process running it; launch it again",
    )
}

impl JobRunner for EmbeddedRunner {
    fn launch(&self, launch: JobLaunch) -> BoxFuture<'_, Result<JobHandle, ToolError>> {
        Box::pin(async move {
            let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
                ToolError::internal("jobs need a tokio runtime to run on; none is current")
            })?;
            let n = self.shared.next.fetch_add(1, Ordering::Relaxed);
            let id = format!("{}{n}", self.shared.prefix);
            let record = JobRecord::queued(id.clone(), &launch);
            let token = CancellationToken::new();
            self.persist(&record);
            self.shared.unsettled.fetch_add(1, Ordering::SeqCst);
            self.lock().insert(
                id.clone(),
                Entry {
                    record,
                    token: token.clone(),
                    ended: Arc::new(Notify::new()),
                },
            );
            let runner = self.clone();
            let job = id.clone();
            // Its own trace root, linked to the span that launched it.
            let span = crate::telemetry::job_span(&job, &launch.tool);
            runtime.spawn(tracing::Instrument::instrument(
                async move {
                    // The call's panics are contained by dispatch; this guards
                    // the runner's own bookkeeping so a job always ends.
                    let run = AssertUnwindSafe(runner.clone().run(job.clone(), launch, token));
                    if run.catch_unwind().await.is_err() {
                        let panicked = ToolError::internal("the job's task panicked");
                        runner.finish(&job, JobStatus::Failed, Err(panicked));
                    }
                },
                span,
            ));
            Ok(JobHandle::new(id))
        })
    }

    fn wait<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Option<JobRecord>> {
        self.wait_for(owner, id, timeout)
    }

    fn idle(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.wait_idle())
    }

    fn retention(&self) -> Option<Retention> {
        Some(self.shared.retention)
    }

    fn get<'a>(&'a self, owner: Option<&'a str>, id: &'a str) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(std::future::ready(self.get_now(owner, id)))
    }

    fn cancel<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(std::future::ready(self.cancel_now(owner, id)))
    }

    fn list<'a>(&'a self, owner: Option<&'a str>) -> BoxFuture<'a, Vec<JobRecord>> {
        Box::pin(std::future::ready(self.list_now(owner)))
    }

    fn answer<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
        answers: Map<String, Value>,
    ) -> BoxFuture<'a, Option<()>> {
        Box::pin(std::future::ready(self.answer_now(owner, id, answers)))
    }
}

impl EmbeddedRunner {
    fn get_now(&self, owner: Option<&str>, id: &str) -> Option<JobRecord> {
        let jobs = self.lock();
        let entry = jobs.get(id)?;
        Self::visible(entry, owner).then(|| entry.record.clone())
    }

    fn wait_for<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(async move {
            let ended = {
                let jobs = self.lock();
                let entry = jobs.get(id).filter(|e| Self::visible(e, owner))?;
                if entry.record.status.is_terminal() {
                    return Some(entry.record.clone());
                }
                Arc::clone(&entry.ended)
            };
            let notified = ended.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            // It may have ended between the look-up and enabling.
            if let Some(record) = self.get_now(owner, id).filter(|r| r.status.is_terminal()) {
                return Some(record);
            }
            let _ = tokio::time::timeout(timeout, notified).await;
            self.get_now(owner, id)
        })
    }

    fn cancel_now(&self, owner: Option<&str>, id: &str) -> Option<JobRecord> {
        let token = {
            let jobs = self.lock();
            let entry = jobs.get(id).filter(|e| Self::visible(e, owner))?;
            entry.token.clone()
        };
        token.cancel();
        // A job still queued never reaches dispatch's abort: end it here.
        let queued = self
            .get_now(owner, id)
            .is_some_and(|r| r.status == JobStatus::Queued);
        if queued {
            self.finish(id, JobStatus::Cancelled, Err(ToolError::aborted()));
        }
        self.get_now(owner, id)
    }

    fn answer_now(&self, owner: Option<&str>, id: &str, answers: Map<String, Value>) -> Option<()> {
        let mut jobs = self.lock();
        let entry = jobs.get_mut(id).filter(|e| Self::visible(e, owner))?;
        let mut waiting = self
            .shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let Some(waiting) = waiting.get_mut(id) else {
            return Some(());
        };
        for (key, answer) in answers {
            // An answer of the wrong shape leaves the question open.
            let fits = entry
                .record
                .questions
                .get(&key)
                .is_some_and(|question| question.kind.accepts(&answer));
            if !fits {
                continue;
            }
            if let Some(sender) = waiting.remove(&key) {
                entry.record.questions.remove(&key);
                let _ = sender.send(answer);
            }
        }
        entry.record.updated_at = now_rfc3339();
        Some(())
    }

    fn list_now(&self, owner: Option<&str>) -> Vec<JobRecord> {
        self.lock()
            .values()
            .rev()
            .filter(|e| Self::visible(e, owner))
            .map(|e| e.record.clone())
            .collect()
    }
}
