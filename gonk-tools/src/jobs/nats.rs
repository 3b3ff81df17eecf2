//! [`NatsJobRunner`]: durable jobs on NATS JetStream, so any replica
//! launches, any replica's worker runs, and every replica answers.
//!
//! A work-queue stream delivers each job to one worker of a durable pull
//! consumer that every replica shares; a worker that stops acknowledging
//! (killed, cut off) has its job redelivered after the ack wait: delivery
//! is at least once. A key-value bucket holds the records (status,
//! progress, logs, outcome, attempts, cancel request), written by the
//! worker as the job runs and read by every query. See `docs/jobs.md`.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer, kv, stream, AckKind};
use futures::future::BoxFuture;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::record::{now_rfc3339, JobLog, JobProgress, JobRecord, JobStatus};
use super::runner::{JobLaunch, JobRunner, Retention};
use super::JobHandle;
use crate::ask::{AskError, Asker, InputKind, InputRequest};
use crate::context::ToolContext;
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::event::ToolOutput;
use crate::registry::ToolRegistry;
use crate::security::{AllowAll, AuthContext, AuthenticatedPrincipal, AuthorizationPolicy};

/// Log lines kept per job (as the embedded runner keeps).
const MAX_LOGS: usize = 50;

/// What a worker does with a job whose previous delivery never finished
/// (its worker died or was cut off mid-job).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WorkerLoss {
    /// Run it again (the default): the tool sees
    /// [`ToolContext::job_attempt`] above 1.
    #[default]
    Retry,
    /// End it as failed with the error code `INTERRUPTED` instead.
    Interrupt,
}

/// How a [`NatsJobRunner`] names and delivers its jobs.
#[derive(Clone, Debug)]
pub struct NatsJobConfig {
    /// Names the stream (`<PREFIX>_JOBS`), its subject (`<prefix>.jobs`)
    /// and the record bucket (`<prefix>_jobs`): every replica of one
    /// deployment uses the same prefix. `A-Za-z0-9_-` only.
    pub prefix: String,
    /// How long a worker may go without a heartbeat before its job is
    /// delivered to another worker (workers beat at a third of it).
    pub ack_wait: Duration,
    /// Deliveries of one job at most (the first included).
    pub max_deliver: i64,
    /// What a redelivered job does.
    pub on_worker_loss: WorkerLoss,
    /// How long a record is kept after its last change.
    pub retention: Duration,
    /// How often a running job looks for a cancel request and how often
    /// `wait` looks at a record.
    pub poll: Duration,
}

impl Default for NatsJobConfig {
    /// Prefix `gonk`, 30 s ack wait, 5 deliveries, retry, a day's records,
    /// 100 ms polling.
    fn default() -> Self {
        NatsJobConfig {
            prefix: "gonk".to_owned(),
            ack_wait: Duration::from_secs(30),
            max_deliver: 5,
            on_worker_loss: WorkerLoss::Retry,
            retention: Duration::from_secs(24 * 3600),
            poll: Duration::from_millis(100),
        }
    }
}

/// Why a [`NatsJobRunner`] could not start.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NatsJobError(String);

/// A job's record as the bucket holds it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredJob {
    record: JobRecord,
    /// Deliveries started so far.
    attempts: u32,
    cancel_requested: bool,
}

/// The durable consumer every replica's worker shares.
const WORKERS: &str = "workers";

/// What the stream carries: which job to run, and as whom.
#[derive(Serialize, Deserialize)]
struct Delivery {
    id: String,
    tool: String,
    input: Value,
    /// The launching caller's principal (`None`: the trusted internal
    /// path). An [`AuthContext`] holds a policy object, which cannot
    /// travel; the worker pairs the principal with its own policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    principal: Option<AuthenticatedPrincipal>,
    /// What the caller answered before the call detached (by question
    /// key; e.g. the approval of a write), replayed to the job's run.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    answers: Map<String, Value>,
}

/// The asker of a job's run on a worker: the caller is on another replica
/// (or gone), so only what it answered before launching is answered (the
/// run asks the same questions under the same keys: an approval given at
/// launch is not asked again); any other question is unavailable.
struct LaunchAnswers(Map<String, Value>);

impl Asker for LaunchAnswers {
    fn can_ask(&self, _kind: InputKind) -> bool {
        !self.0.is_empty()
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        let answers = questions
            .iter()
            .map(|(key, question)| {
                self.0
                    .get(key)
                    .filter(|answer| question.kind.accepts(answer))
                    .cloned()
                    .ok_or_else(|| {
                        AskError::Failed(format!(
                            "a job on NATS runs away from its caller: only questions answered \
                             before it was launched are answered, and `{key}` was not; ask it \
                             before detaching or run the call with wait: true"
                        ))
                    })
            })
            .collect();
        Box::pin(std::future::ready(answers))
    }

    fn answers(&self) -> Map<String, Value> {
        self.0.clone()
    }
}

/// What JetStream publishes when a job's message used its last delivery
/// (`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.<stream>.<consumer>`).
#[derive(Deserialize)]
struct MaxDeliveries {
    stream_seq: u64,
    deliveries: u64,
}

struct Inner {
    jetstream: jetstream::Context,
    stream: stream::Stream,
    records: kv::Store,
    subject: String,
    stream_name: String,
    bucket: String,
    config: NatsJobConfig,
    /// This runner's part of job ids (random), and the counter after it.
    id_prefix: String,
    next: AtomicU64,
    /// Stops this runner's worker, if it runs one.
    stop: CancellationToken,
}

/// A [`JobRunner`] on NATS JetStream: durable, shared by replicas,
/// delivering each job at least once.
///
/// Every replica makes one with the same [`NatsJobConfig::prefix`],
/// [`install`](super::install)s it, and calls [`start_worker`](Self::start_worker)
/// with its registry to take a share of the jobs. Queries
/// (`jobs.status`, MCP `tasks/get`, …) read the shared records, so they
/// answer on any replica; a job is visible only to its owner.
///
/// The worker runs a job's call in its own registry as the launching
/// caller: the job's message carries the caller's principal, which the
/// worker pairs with its policy ([`start_worker_with_policy`](Self::start_worker_with_policy)),
/// so the tool sees the same principal on whichever replica runs it, and
/// the owner key kept on the record guards every query.
///
/// A job whose message used its last delivery (`max_deliver`) while its
/// worker was gone is ended `INTERRUPTED` by the replicas' sweepers (one
/// per worker, started with it) instead of staying `running`.
#[derive(Clone)]
pub struct NatsJobRunner {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for NatsJobRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsJobRunner")
            .field("stream", &self.inner.stream_name)
            .field("bucket", &self.inner.bucket)
            .finish_non_exhaustive()
    }
}

fn unavailable(what: &str, error: impl std::fmt::Display) -> ToolError {
    ToolError::new(
        ErrorCode::custom("JOBS_UNAVAILABLE"),
        format!("The job queue (NATS) could not {what}: {error}; try again once it is reachable"),
    )
}

impl NatsJobRunner {
    /// Connects to the NATS server at `url` and makes (or opens) the
    /// stream, its worker consumer and the record bucket. Safe when
    /// several replicas start at once: NATS creates each once.
    pub async fn connect(url: &str, config: NatsJobConfig) -> Result<Self, NatsJobError> {
        let prefix = &config.prefix;
        if prefix.is_empty()
            || !prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(NatsJobError(format!(
                "job prefix `{prefix}` must be non-empty A-Za-z0-9_- (it names a NATS stream and bucket)"
            )));
        }
        let client = async_nats::connect(url).await.map_err(|e| {
            NatsJobError(format!(
                "cannot connect to NATS at {url}: {e}; is it running?"
            ))
        })?;
        let jetstream = jetstream::new(client);
        let stream_name = format!("{}_JOBS", prefix.to_ascii_uppercase());
        let subject = format!("{prefix}.jobs");
        let bucket = format!("{prefix}_jobs");
        let made = jetstream
            .get_or_create_stream(stream::Config {
                name: stream_name.clone(),
                subjects: vec![subject.clone()],
                retention: stream::RetentionPolicy::WorkQueue,
                ..Default::default()
            })
            .await;
        let stream = match made {
            Ok(stream) => stream,
            // Replicas starting together: another made it between our look
            // and our create (a 2.9 server answers "subjects overlap").
            Err(error) => jetstream.get_stream(&stream_name).await.map_err(|_| {
                NatsJobError(format!(
                    "cannot make stream {stream_name} (is JetStream enabled?): {error}"
                ))
            })?,
        };
        // The bucket's stream, made as `create_key_value` makes it: that
        // call first asks for account details whose shape a 2.9 server
        // (Debian's) answers differently, and fails there.
        let kv_stream = format!("KV_{bucket}");
        let made = jetstream
            .get_or_create_stream(stream::Config {
                name: kv_stream.clone(),
                subjects: vec![format!("$KV.{bucket}.>")],
                max_messages_per_subject: 1,
                max_age: config.retention,
                allow_rollup: true,
                deny_delete: true,
                allow_direct: true,
                discard: stream::DiscardPolicy::New,
                ..Default::default()
            })
            .await;
        if let Err(error) = made {
            // Made meanwhile by another replica, as the job stream above.
            jetstream
                .get_stream(&kv_stream)
                .await
                .map_err(|_| NatsJobError(format!("cannot make bucket {bucket}: {error}")))?;
        }
        let records = jetstream
            .get_key_value(&bucket)
            .await
            .map_err(|e| NatsJobError(format!("cannot open bucket {bucket}: {e}")))?;
        let seed = RandomState::new().build_hasher().finish() ^ u64::from(std::process::id());
        Ok(NatsJobRunner {
            inner: Arc::new(Inner {
                jetstream,
                stream,
                records,
                subject,
                stream_name,
                bucket,
                config,
                id_prefix: format!("job-{seed:016x}-"),
                next: AtomicU64::new(1),
                stop: CancellationToken::new(),
            }),
        })
    }

    /// Starts this replica's worker: it takes jobs from the shared stream
    /// and runs each in `registry` (tools are looked up there by name),
    /// until [`stop_worker`](Self::stop_worker) or the runtime ends. A job
    /// launched by an authenticated caller runs as that principal under
    /// [`AllowAll`]: the launching replica's policy authorized the launch,
    /// and the registry's approval settings still apply. Use
    /// [`start_worker_with_policy`](Self::start_worker_with_policy) to
    /// authorize every job's call again with a policy of the host's.
    pub async fn start_worker(&self, registry: ToolRegistry) -> Result<(), NatsJobError> {
        self.start_worker_with_policy(registry, Arc::new(AllowAll))
            .await
    }

    /// [`start_worker`](Self::start_worker), authorizing the call of a job
    /// launched by an authenticated caller with `policy` (paired with the
    /// caller's principal, carried by the job's message). Also starts this
    /// replica's sweeper: jobs whose deliveries ran out end `INTERRUPTED`.
    pub async fn start_worker_with_policy(
        &self,
        registry: ToolRegistry,
        policy: Arc<dyn AuthorizationPolicy>,
    ) -> Result<(), NatsJobError> {
        let config = &self.inner.config;
        let consumer: consumer::PullConsumer = self
            .inner
            .stream
            .get_or_create_consumer(
                WORKERS,
                consumer::pull::Config {
                    durable_name: Some(WORKERS.to_owned()),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait: config.ack_wait,
                    max_deliver: config.max_deliver,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| NatsJobError(format!("cannot make the worker consumer: {e}")))?;
        self.start_sweeper().await?;
        let mut messages = consumer
            .messages()
            .await
            .map_err(|e| NatsJobError(format!("cannot take jobs: {e}")))?;
        let runner = self.clone();
        let stop = self.inner.stop.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    _ = stop.cancelled() => return,
                    message = messages.next() => message,
                };
                match message {
                    Some(Ok(message)) => {
                        let runner = runner.clone();
                        let registry = registry.clone();
                        let policy = Arc::clone(&policy);
                        let stop = stop.clone();
                        tokio::spawn(async move {
                            runner.deliver(message, registry, policy, stop).await
                        });
                    }
                    Some(Err(error)) => {
                        tracing::warn!(target: "gonk_tools::jobs", %error, "job delivery failed; retrying");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    None => return,
                }
            }
        });
        Ok(())
    }

    /// Listens for JetStream's advisory that a job's message used its
    /// last delivery (its worker died, or its claims failed, `max_deliver`
    /// times): NATS will not deliver it again, so no worker would ever end
    /// its record. The sweeper ends it `INTERRUPTED` and removes the
    /// message. The replicas' sweepers share a queue group: one of them
    /// takes each advisory.
    async fn start_sweeper(&self) -> Result<(), NatsJobError> {
        let subject = format!(
            "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{}.{WORKERS}",
            self.inner.stream_name
        );
        let group = format!("{}-sweepers", self.inner.config.prefix);
        let mut advisories = self
            .inner
            .jetstream
            .client()
            .queue_subscribe(subject, group)
            .await
            .map_err(|e| NatsJobError(format!("cannot watch for exhausted jobs: {e}")))?;
        let runner = self.clone();
        let stop = self.inner.stop.clone();
        tokio::spawn(async move {
            loop {
                let advisory = tokio::select! {
                    _ = stop.cancelled() => return,
                    advisory = advisories.next() => advisory,
                };
                let Some(advisory) = advisory else { return };
                match serde_json::from_slice::<MaxDeliveries>(&advisory.payload) {
                    Ok(exhausted) => runner.sweep(exhausted).await,
                    Err(error) => {
                        tracing::warn!(target: "gonk_tools::jobs", %error, "unreadable max-deliveries advisory");
                    }
                }
            }
        });
        Ok(())
    }

    /// Ends the job of an exhausted message `INTERRUPTED` (unless it has
    /// ended) and deletes the message.
    async fn sweep(&self, exhausted: MaxDeliveries) {
        let sequence = exhausted.stream_seq;
        let message = match self.inner.stream.get_raw_message(sequence).await {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(target: "gonk_tools::jobs", sequence, %error, "cannot read an exhausted job's message");
                return;
            }
        };
        if let Ok(delivery) = serde_json::from_slice::<Delivery>(&message.payload) {
            let error = exhausted_error(exhausted.deliveries);
            let ended = self
                .change(&delivery.id, |job| {
                    if job.record.status.is_terminal() {
                        return false;
                    }
                    end(job, JobStatus::Failed, Err(error.clone()));
                    true
                })
                .await;
            if let Err(error) = ended {
                // Kept: the message stays, so an operator can see it.
                tracing::warn!(target: "gonk_tools::jobs", job = %delivery.id, %error, "cannot end an exhausted job");
                return;
            }
            tracing::warn!(target: "gonk_tools::jobs", job = %delivery.id, deliveries = exhausted.deliveries, "job ended INTERRUPTED: its deliveries ran out");
        }
        if let Err(error) = self.inner.stream.delete_message(sequence).await {
            tracing::warn!(target: "gonk_tools::jobs", sequence, %error, "cannot delete an exhausted job's message");
        }
    }

    /// Stops this replica's worker: it takes no more jobs, and the jobs it
    /// runs are dropped unacknowledged, so another worker takes them
    /// after the ack wait.
    pub fn stop_worker(&self) {
        self.inner.stop.cancel();
    }

    /// Deletes the stream and the bucket (every job of this prefix): for
    /// tests and tear-down.
    pub async fn destroy(&self) -> Result<(), NatsJobError> {
        self.stop_worker();
        let js = &self.inner.jetstream;
        js.delete_stream(&self.inner.stream_name)
            .await
            .map_err(|e| NatsJobError(e.to_string()))?;
        js.delete_key_value(&self.inner.bucket)
            .await
            .map_err(|e| NatsJobError(e.to_string()))?;
        Ok(())
    }

    /// How many jobs are queued or running: the messages of the stream,
    /// each removed once its job's end is written and acknowledged. For
    /// operators, load tests and draining.
    pub async fn unfinished(&self) -> Result<u64, NatsJobError> {
        let mut stream = self.inner.stream.clone();
        let info = stream.info().await.map_err(|e| {
            NatsJobError(format!(
                "cannot read stream {}: {e}",
                self.inner.stream_name
            ))
        })?;
        Ok(info.state.messages)
    }

    /// Every record of the bucket, whoever owns it: for operators and
    /// exactly-once checks.
    pub async fn all_records(&self) -> Result<Vec<JobRecord>, ToolError> {
        let keys = self
            .inner
            .records
            .keys()
            .await
            .map_err(|e| unavailable("list jobs", e))?;
        let keys: Vec<String> = keys.filter_map(|k| async move { k.ok() }).collect().await;
        let mut records = Vec::with_capacity(keys.len());
        for key in keys {
            if let Some((job, _)) = self.read(&key).await? {
                records.push(job.record);
            }
        }
        records.sort_by(|a, b| b.created_at.cmp(&a.created_at));
        Ok(records)
    }

    async fn read(&self, id: &str) -> Result<Option<(StoredJob, u64)>, ToolError> {
        let entry = self
            .inner
            .records
            .entry(id)
            .await
            .map_err(|e| unavailable("read a job", e))?;
        let Some(entry) = entry.filter(|e| e.operation == kv::Operation::Put) else {
            return Ok(None);
        };
        match serde_json::from_slice::<StoredJob>(&entry.value) {
            Ok(job) => Ok(Some((job, entry.revision))),
            Err(error) => {
                tracing::warn!(target: "gonk_tools::jobs", job = %id, %error, "unreadable job record");
                Ok(None)
            }
        }
    }

    /// Applies `change` to a record (compare-and-set on its revision,
    /// retried on a concurrent write, and while NATS is unreachable for up
    /// to the ack wait, so a reconnecting client loses no write);
    /// `change` returns whether it changed anything. The record as it is
    /// after, `None` if missing.
    async fn change(
        &self,
        id: &str,
        mut change: impl FnMut(&mut StoredJob) -> bool,
    ) -> Result<Option<StoredJob>, ToolError> {
        let give_up = tokio::time::Instant::now() + self.inner.config.ack_wait;
        loop {
            let error = match self.read(id).await {
                Ok(None) => return Ok(None),
                Ok(Some((mut job, revision))) => {
                    if !change(&mut job) {
                        return Ok(Some(job));
                    }
                    job.record.updated_at = now_rfc3339();
                    let bytes =
                        serde_json::to_vec(&job).map_err(|e| ToolError::internal(e.to_string()))?;
                    match self.inner.records.update(id, bytes.into(), revision).await {
                        Ok(_) => return Ok(Some(job)),
                        // Another writer got there first: read again at once.
                        Err(error) if error.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                            continue
                        }
                        Err(error) => unavailable("write a job", error),
                    }
                }
                Err(error) => error,
            };
            if tokio::time::Instant::now() >= give_up {
                return Err(error);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Runs one delivery of a job, acknowledging it once its record ended.
    async fn deliver(
        &self,
        message: jetstream::Message,
        registry: ToolRegistry,
        authorization: Arc<dyn AuthorizationPolicy>,
        stop: CancellationToken,
    ) {
        let attempt = message
            .info()
            .map(|info| u32::try_from(info.delivered).unwrap_or(1))
            .unwrap_or(1)
            .max(1);
        let Ok(delivery) = serde_json::from_slice::<Delivery>(&message.payload) else {
            tracing::warn!(target: "gonk_tools::jobs", "dropping an unreadable job delivery");
            let _ = message.ack_with(AckKind::Term).await;
            return;
        };
        let id = delivery.id.clone();
        let policy = self.inner.config.on_worker_loss;
        let claimed = self
            .change(&id, |job| {
                if job.record.status.is_terminal() {
                    return false;
                }
                if job.cancel_requested {
                    end(job, JobStatus::Cancelled, Err(ToolError::aborted()));
                } else if job.attempts >= 1 && policy == WorkerLoss::Interrupt {
                    end(job, JobStatus::Failed, Err(interrupted()));
                } else {
                    job.record.status = JobStatus::Running;
                    job.attempts = job.attempts.max(attempt - 1) + 1;
                }
                true
            })
            .await;
        let job = match claimed {
            Ok(Some(job)) => job,
            // Gone (expired or destroyed): nothing to run.
            Ok(None) => {
                let _ = message.ack().await;
                return;
            }
            // The bucket cannot be reached: let another delivery try.
            Err(error) => {
                tracing::warn!(target: "gonk_tools::jobs", job = %id, %error, "cannot claim job");
                let _ = message
                    .ack_with(AckKind::Nak(Some(Duration::from_secs(1))))
                    .await;
                return;
            }
        };
        if job.record.status.is_terminal() {
            let _ = message.ack().await;
            return;
        }
        let token = CancellationToken::new();
        let mut ctx = ToolContext::new()
            .with_cancellation(token.clone())
            .with_rate_limit_charged()
            .with_job_attempt(job.attempts);
        if let Some(principal) = delivery.principal {
            ctx = ctx.with_auth(AuthContext::from_shared(Arc::new(principal), authorization));
        }
        if !delivery.answers.is_empty() {
            ctx = ctx.with_asker(Arc::new(LaunchAnswers(delivery.answers)));
        }
        let mut events = registry.invoke(&delivery.tool, delivery.input, ctx);
        let config = &self.inner.config;
        let mut poll = tokio::time::interval(config.poll);
        let beat_every = config.ack_wait / 3;
        let mut last_beat = tokio::time::Instant::now();
        let ended = loop {
            let event = tokio::select! {
                // Dropped unacknowledged: another worker takes it.
                _ = stop.cancelled() => return,
                event = events.next() => event,
                _ = poll.tick() => {
                    if last_beat.elapsed() >= beat_every {
                        let _ = message.ack_with(AckKind::Progress).await;
                        last_beat = tokio::time::Instant::now();
                    }
                    if let Ok(Some((job, _))) = self.read(&id).await {
                        if job.cancel_requested {
                            token.cancel();
                        }
                    }
                    continue;
                }
            };
            match event {
                Some(ToolEvent::Progress { percent, message }) => {
                    let progress = JobProgress { percent, message };
                    let _ = self
                        .change(&id, |job| {
                            job.record.progress = Some(progress.clone());
                            true
                        })
                        .await;
                }
                Some(ToolEvent::Log { level, message, .. }) => {
                    let line = JobLog { level, message };
                    let _ = self
                        .change(&id, |job| {
                            if job.record.logs.len() >= MAX_LOGS {
                                job.record.logs.remove(0);
                            }
                            job.record.logs.push(line.clone());
                            true
                        })
                        .await;
                }
                Some(ToolEvent::Data { .. }) => {}
                Some(ToolEvent::Result { data, display }) => {
                    break (JobStatus::Succeeded, Ok(ToolOutput { data, display }));
                }
                Some(event @ ToolEvent::Error { .. }) => {
                    let error = event.as_error().expect("an error event");
                    let status = if error.code == ErrorCode::Aborted && token.is_cancelled() {
                        JobStatus::Cancelled
                    } else {
                        JobStatus::Failed
                    };
                    break (status, Err(error));
                }
                None => {
                    break (
                        JobStatus::Failed,
                        Err(ToolError::new(
                            ErrorCode::NoResult,
                            "Tool produced no result",
                        )),
                    )
                }
            }
        };
        let (status, outcome) = ended;
        // The first ending wins; only once it is written is the delivery
        // acknowledged (a failed write leaves it to be delivered again).
        match self
            .change(&id, |job| {
                if job.record.status.is_terminal() {
                    return false;
                }
                end(job, status, outcome.clone());
                true
            })
            .await
        {
            Ok(_) => {
                let _ = message.double_ack().await;
            }
            Err(error) => {
                tracing::warn!(target: "gonk_tools::jobs", job = %id, %error, "cannot record the job's end; it will be delivered again");
            }
        }
    }
}

/// Ends a stored job with `status` and `outcome`.
fn end(job: &mut StoredJob, status: JobStatus, outcome: Result<ToolOutput, ToolError>) {
    job.record.status = status;
    job.record.questions.clear();
    match outcome {
        Ok(output) => job.record.output = Some(output),
        Err(error) => job.record.error = Some(error),
    }
}

/// The error of a job whose message used its last delivery unended.
fn exhausted_error(deliveries: u64) -> ToolError {
    ToolError::new(
        ErrorCode::custom("INTERRUPTED"),
        format!(
            "The job was delivered {deliveries} time(s), the most the runner allows (max_deliver), \
             and the worker of its last delivery stopped mid-job; launch it again"
        ),
    )
}

fn interrupted() -> ToolError {
    ToolError::new(
        ErrorCode::custom("INTERRUPTED"),
        "The worker running the job stopped mid-job and the runner's policy does not retry; launch it again",
    )
}

impl JobRunner for NatsJobRunner {
    fn launch(&self, launch: JobLaunch) -> BoxFuture<'_, Result<JobHandle, ToolError>> {
        Box::pin(async move {
            let n = self.inner.next.fetch_add(1, Ordering::Relaxed);
            let id = format!("{}{n}", self.inner.id_prefix);
            let job = StoredJob {
                record: JobRecord::queued(id.clone(), &launch),
                attempts: 0,
                cancel_requested: false,
            };
            let bytes = serde_json::to_vec(&job).map_err(|e| ToolError::internal(e.to_string()))?;
            self.inner
                .records
                .create(&id, bytes.into())
                .await
                .map_err(|e| unavailable("record the job", e))?;
            let delivery = Delivery {
                id: id.clone(),
                principal: launch.auth.as_ref().map(|auth| auth.principal().clone()),
                answers: launch
                    .asking
                    .map(|asking| asking.answers)
                    .unwrap_or_default(),
                tool: launch.tool,
                input: launch.input,
            };
            let payload =
                serde_json::to_vec(&delivery).map_err(|e| ToolError::internal(e.to_string()))?;
            let published = async {
                self.inner
                    .jetstream
                    .publish(self.inner.subject.clone(), payload.into())
                    .await
                    .map_err(|e| e.to_string())?
                    .await
                    .map_err(|e| e.to_string())
            }
            .await;
            if let Err(error) = published {
                let failed = unavailable("queue the job", &error);
                let _ = self
                    .change(&id, |job| {
                        end(job, JobStatus::Failed, Err(failed.clone()));
                        true
                    })
                    .await;
                return Err(unavailable("queue the job", error));
            }
            Ok(JobHandle::new(id))
        })
    }

    fn get<'a>(&'a self, owner: Option<&'a str>, id: &'a str) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(async move {
            match self.read(id).await {
                Ok(Some((job, _))) => (job.record.owner.as_deref() == owner).then_some(job.record),
                Ok(None) => None,
                Err(error) => {
                    tracing::warn!(target: "gonk_tools::jobs", job = %id, %error, "job look-up failed");
                    None
                }
            }
        })
    }

    fn wait<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                let record = self.get(owner, id).await?;
                if record.status.is_terminal() || tokio::time::Instant::now() >= deadline {
                    return Some(record);
                }
                tokio::time::sleep(
                    self.inner
                        .config
                        .poll
                        .min(deadline - tokio::time::Instant::now()),
                )
                .await;
            }
        })
    }

    fn cancel<'a>(
        &'a self,
        owner: Option<&'a str>,
        id: &'a str,
    ) -> BoxFuture<'a, Option<JobRecord>> {
        Box::pin(async move {
            self.get(owner, id).await?;
            let changed = self
                .change(id, |job| {
                    if job.record.status.is_terminal() || job.cancel_requested {
                        return false;
                    }
                    job.cancel_requested = true;
                    // Not started: it ends here (a worker that takes it
                    // later acknowledges it unrun).
                    if job.record.status == JobStatus::Queued {
                        end(job, JobStatus::Cancelled, Err(ToolError::aborted()));
                    }
                    true
                })
                .await;
            match changed {
                Ok(job) => job.map(|job| job.record),
                Err(error) => {
                    tracing::warn!(target: "gonk_tools::jobs", job = %id, %error, "job cancel failed");
                    None
                }
            }
        })
    }

    fn list<'a>(&'a self, owner: Option<&'a str>) -> BoxFuture<'a, Vec<JobRecord>> {
        Box::pin(async move {
            match self.all_records().await {
                Ok(records) => records
                    .into_iter()
                    .filter(|r| r.owner.as_deref() == owner)
                    .collect(),
                Err(error) => {
                    tracing::warn!(target: "gonk_tools::jobs", %error, "job list failed");
                    Vec::new()
                }
            }
        })
    }

    fn retention(&self) -> Option<Retention> {
        Some(Retention {
            max_finished: usize::MAX,
            max_age: self.inner.config.retention,
        })
    }
}
