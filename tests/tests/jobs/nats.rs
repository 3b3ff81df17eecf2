//! Durable jobs on NATS JetStream (`NatsJobRunner`), against a real NATS
//! server, this binary's own (`gonk_tools_tests::services`), each test on
//! streams of its own prefix: runners in one test stand for replicas (each
//! its own connection and registry); a fixture process stands for a worker
//! replica that is killed mid-job.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gonk_tools::jobs::{self, JobStatus, NatsJobConfig, NatsJobRunner, WorkerLoss};
use gonk_tools::prelude::*;
use gonk_tools::security::{AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind};
use gonk_tools_tests::security::{alice, auth, TestPolicy};
use gonk_tools_tests::services::{self, Server};
use serde_json::Value;
use tokio::sync::Semaphore;

/// This binary's NATS with JetStream, started on first use.
fn nats_url() -> String {
    services::nats().url()
}

/// A prefix no other test or run uses.
fn prefix(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("t{}-{test}-{nanos:x}", std::process::id())
}

/// Deletes the test's stream and bucket when dropped (also on a failed
/// assertion).
struct Cleanup(Option<NatsJobRunner>);
impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(runner) = self.0.take() {
            // The test's runtime may be shutting down: use our own.
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async { runner.destroy().await.ok() });
            })
            .join()
            .ok();
        }
    }
}

fn bob() -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        "user-2",
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", "bob", AuthMethod::Oauth),
    )
}

/// What the in-process workers' tool lets a test hold and see.
struct Gate {
    /// Held runs wait for a permit; released for good (a redelivered
    /// run of the same job passes too).
    release: Semaphore,
    started: AtomicUsize,
    runs: AtomicUsize,
    dropped: AtomicBool,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            release: Semaphore::new(0),
            started: AtomicUsize::new(0),
            runs: AtomicUsize::new(0),
            dropped: AtomicBool::new(false),
        }
    }
}

struct DropFlag(Arc<Gate>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

#[derive(Deserialize, JsonSchema)]
struct Work {
    /// "hold": progress, a log line, then wait for release; "hang": never
    /// end; "whoami": answer the principal's id; "quick": answer at once.
    mode: String,
    n: Option<u64>,
}

fn work_tool(gate: Arc<Gate>) -> ToolDefinition {
    ToolDefinition::builder("work")
        .description("Work for durable-job tests.")
        .approval(ApprovalTier::Read)
        .detached()
        .stream_handler(move |input: Work, ctx: ToolContext| {
            let gate = Arc::clone(&gate);
            async move {
                gonk_tools::stream! {
                    gate.runs.fetch_add(1, Ordering::SeqCst);
                    let _flag = DropFlag(Arc::clone(&gate));
                    match input.mode.as_str() {
                        "hold" => {
                            yield ToolEvent::log(LogLevel::Info, "starting");
                            yield ToolEvent::progress(40.0, Some("halfway".to_owned()));
                            gate.started.fetch_add(1, Ordering::SeqCst);
                            let _ = gate.release.acquire().await;
                            yield ToolEvent::result(json!({ "done": true }));
                        }
                        "whoami" => {
                            let principal = ctx.auth().map(|auth| auth.principal().id.clone());
                            yield ToolEvent::result(json!({ "principal": principal }));
                        }
                        "hang" => {
                            gate.started.fetch_add(1, Ordering::SeqCst);
                            std::future::pending::<()>().await;
                        }
                        _ => {
                            yield ToolEvent::result(json!({ "n": input.n }));
                        }
                    }
                }
            }
        })
        .build()
}

/// One replica: its own connection, registry and (optionally) worker.
async fn replica(prefix: &str, gate: &Arc<Gate>, worker: bool) -> (NatsJobRunner, ToolRegistry) {
    let config = NatsJobConfig {
        prefix: prefix.to_owned(),
        ack_wait: Duration::from_secs(2),
        ..NatsJobConfig::default()
    };
    replica_with(config, gate, worker).await
}

/// [`replica`] with its own configuration.
async fn replica_with(
    config: NatsJobConfig,
    gate: &Arc<Gate>,
    worker: bool,
) -> (NatsJobRunner, ToolRegistry) {
    let runner = NatsJobRunner::connect(&nats_url(), config)
        .await
        .expect("the binary's NATS JetStream");
    let registry = ToolRegistry::new();
    registry.register(work_tool(Arc::clone(gate))).unwrap();
    jobs::install(&registry, Arc::new(runner.clone())).unwrap();
    if worker {
        runner.start_worker(registry.clone()).await.unwrap();
    }
    (runner, registry)
}

async fn as_(
    registry: &ToolRegistry,
    principal: AuthenticatedPrincipal,
    policy: &Arc<TestPolicy>,
    tool: &str,
    input: Value,
) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(
        registry.invoke(tool, input, auth(principal, policy)),
        |_| {},
    )
    .await
}

/// Polls `jobs.status` on `registry` until `done` says so (bounded).
async fn status_until(
    registry: &ToolRegistry,
    policy: &Arc<TestPolicy>,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    for _ in 0..300 {
        let status = as_(
            registry,
            alice(),
            policy,
            "jobs.status",
            json!({ "jobId": id }),
        )
        .await
        .unwrap()
        .data;
        if done(&status) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("job {id} never reached the awaited state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_launched_on_one_replica_is_answered_by_another_and_only_to_its_owner() {
    let prefix = prefix("cross");
    let gate = Arc::new(Gate::default());
    let (a, registry_a) = replica(&prefix, &gate, true).await;
    let _cleanup = Cleanup(Some(a.clone()));
    let (_b, registry_b) = replica(&prefix, &gate, false).await;
    let policy = TestPolicy::allow_all();

    let handle = as_(
        &registry_a,
        alice(),
        &policy,
        "work",
        json!({ "mode": "hold" }),
    )
    .await
    .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();

    // Progress and logs written by A's worker, read on B.
    let running = status_until(&registry_b, &policy, &id, |s| {
        s["progress"]["percent"] == 40.0
    })
    .await;
    assert_eq!(running["status"], "running");
    assert_eq!(running["progress"]["message"], "halfway");
    assert_eq!(running["logs"][0]["message"], "starting");

    // Another owner: missing on either replica, as an unknown id is.
    for registry in [&registry_a, &registry_b] {
        for tool in ["jobs.status", "jobs.result", "jobs.cancel"] {
            let error = as_(registry, bob(), &policy, tool, json!({ "jobId": id }))
                .await
                .unwrap_err();
            assert_eq!(error.code.as_str(), "JOB_NOT_FOUND", "{tool}");
        }
        let listed = as_(registry, bob(), &policy, "jobs.list", json!({}))
            .await
            .unwrap();
        assert_eq!(listed.data["jobs"], json!([]));
    }
    // Bob's cancel did nothing.
    let still = as_(
        &registry_b,
        alice(),
        &policy,
        "jobs.status",
        json!({ "jobId": id }),
    )
    .await
    .unwrap();
    assert_eq!(still.data["status"], "running");

    gate.release.add_permits(1000);
    let result = as_(
        &registry_b,
        alice(),
        &policy,
        "jobs.result",
        json!({ "jobId": id, "waitMs": 20000 }),
    )
    .await
    .unwrap();
    assert_eq!(result.data, json!({ "done": true }));
    let listed = as_(&registry_b, alice(), &policy, "jobs.list", json!({}))
        .await
        .unwrap();
    assert_eq!(listed.data["jobs"][0]["jobId"], id.as_str());
    assert_eq!(listed.data["jobs"][0]["status"], "succeeded");
    assert_eq!(gate.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_one_replica_stops_the_job_running_on_another() {
    let prefix = prefix("cancel");
    let gate = Arc::new(Gate::default());
    let (a, registry_a) = replica(&prefix, &gate, true).await;
    let _cleanup = Cleanup(Some(a.clone()));
    let (_b, registry_b) = replica(&prefix, &gate, false).await;
    let policy = TestPolicy::allow_all();

    let handle = as_(
        &registry_a,
        alice(),
        &policy,
        "work",
        json!({ "mode": "hang" }),
    )
    .await
    .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();
    status_until(&registry_b, &policy, &id, |s| s["status"] == "running").await;

    let cancelled = as_(
        &registry_b,
        alice(),
        &policy,
        "jobs.cancel",
        json!({ "jobId": id }),
    )
    .await
    .unwrap();
    assert_eq!(cancelled.data["status"], "cancelled");
    // A's handler was dropped, not left running.
    for _ in 0..250 {
        if gate.dropped.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        gate.dropped.load(Ordering::SeqCst),
        "the running handler was dropped"
    );
    let error = as_(
        &registry_a,
        alice(),
        &policy,
        "jobs.result",
        json!({ "jobId": id }),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code, ErrorCode::Aborted);
}

/// The acceptance run: 10,000 launches spread over three replicas, each
/// running a worker; every job ends once, succeeded, with its own input,
/// and no handler ran twice. Launches go 500 at a time (a client's
/// concurrency, not 10,000 requests in one burst).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_jobs_over_three_replicas_each_end_exactly_once() {
    let prefix = prefix("many");
    let gate = Arc::new(Gate::default());
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(replica(&prefix, &gate, true).await);
    }
    let _cleanup = Cleanup(Some(replicas[0].0.clone()));
    let policy = TestPolicy::allow_all();

    let count = 10_000u64;
    let mut ids = Vec::with_capacity(count as usize);
    for batch in (0..count).collect::<Vec<_>>().chunks(500) {
        let launches: Vec<_> = batch
            .iter()
            .map(|&n| {
                let registry = replicas[(n % 3) as usize].1.clone();
                let policy = Arc::clone(&policy);
                tokio::spawn(async move {
                    as_(
                        &registry,
                        alice(),
                        &policy,
                        "work",
                        json!({ "mode": "quick", "n": n }),
                    )
                    .await
                    .unwrap()
                    .data["jobId"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
            })
            .collect();
        for launch in launches {
            ids.push(launch.await.unwrap());
        }
    }
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "job ids are unique");

    // Every handler started (bounded), then every record ended.
    for _ in 0..1200 {
        if gate.runs.load(Ordering::SeqCst) >= count as usize {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let runner = &replicas[0].0;
    let mut records = Vec::new();
    for _ in 0..60 {
        records = runner.all_records().await.unwrap();
        if records.len() == ids.len() && records.iter().all(|r| r.status.is_terminal()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(records.len(), ids.len(), "one record per launch");
    let listed: std::collections::HashSet<&String> = records.iter().map(|r| &r.id).collect();
    assert_eq!(listed, unique, "the records are the launched jobs");
    assert!(records.iter().all(|r| r.status == JobStatus::Succeeded));
    let mut results: Vec<u64> = records
        .iter()
        .map(|r| r.output.as_ref().unwrap().data["n"].as_u64().unwrap())
        .collect();
    results.sort_unstable();
    assert_eq!(
        results,
        (0..count).collect::<Vec<_>>(),
        "each job its own input"
    );
    // No job ran twice (no worker died, so nothing was redelivered).
    assert_eq!(gate.runs.load(Ordering::SeqCst), count as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_runs_as_its_launching_principal_on_another_replicas_worker() {
    let prefix = prefix("principal");
    let gate = Arc::new(Gate::default());
    // A launches and answers, B only runs (its own policy).
    let (a, registry_a) = replica(&prefix, &gate, false).await;
    let _cleanup = Cleanup(Some(a.clone()));
    let (b, registry_b) = replica(&prefix, &gate, false).await;
    let worker_policy = TestPolicy::allow_all();
    b.start_worker_with_policy(registry_b.clone(), worker_policy.clone())
        .await
        .unwrap();
    let policy = TestPolicy::allow_all();

    let handle = as_(
        &registry_a,
        alice(),
        &policy,
        "work",
        json!({ "mode": "whoami" }),
    )
    .await
    .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();
    // Read on B: the owner is the launching principal there too.
    let result = as_(
        &registry_b,
        alice(),
        &policy,
        "jobs.result",
        json!({ "jobId": id, "waitMs": 20000 }),
    )
    .await
    .unwrap();
    assert_eq!(result.data, json!({ "principal": alice().id }));
    let error = as_(
        &registry_b,
        bob(),
        &policy,
        "jobs.result",
        json!({ "jobId": id }),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code.as_str(), "JOB_NOT_FOUND");
    // B's worker authorized the job's call as Alice with its own policy.
    let seen = worker_policy.seen();
    assert!(
        seen.iter()
            .any(|r| r.principal_id == alice().id && r.action == "tool.invoke"),
        "{:?}",
        worker_policy.actions()
    );

    // A launch on the trusted internal path runs without a principal (as
    // a detached tool launches: the job's own run waits).
    let launch = jobs::JobLaunch::new(
        ToolRegistry::new(),
        "work",
        json!({ "mode": "whoami", "wait": true }),
    );
    let handle = jobs::JobRunner::launch(&a, launch).await.unwrap();
    let record = jobs::JobRunner::wait(&a, None, &handle.job_id, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(
        record.output.expect("it succeeded").data,
        json!({ "principal": null })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_deliveries_run_out_ends_interrupted_instead_of_running_forever() {
    let prefix = prefix("exhausted");
    let gate = Arc::new(Gate::default());
    // One delivery at most: a worker lost mid-job uses it up.
    let config = NatsJobConfig {
        prefix: prefix.clone(),
        ack_wait: Duration::from_secs(1),
        max_deliver: 1,
        ..NatsJobConfig::default()
    };
    let (a, registry_a) = replica_with(config.clone(), &gate, true).await;
    let _cleanup = Cleanup(Some(a.clone()));
    let policy = TestPolicy::allow_all();
    let handle = as_(
        &registry_a,
        alice(),
        &policy,
        "work",
        json!({ "mode": "hang" }),
    )
    .await
    .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();
    status_until(&registry_a, &policy, &id, |s| s["status"] == "running").await;

    // B's worker (and its sweeper) joins; A's worker goes away mid-job,
    // leaving the job unacknowledged with no delivery left.
    let (_b, registry_b) = replica_with(config, &gate, true).await;
    a.stop_worker();
    let ended = status_until(&registry_b, &policy, &id, |s| s["status"] != "running").await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(ended["error"]["code"], "INTERRUPTED", "{ended}");
    let message = ended["error"]["message"].as_str().unwrap();
    assert!(message.contains("max_deliver"), "{message}");
    // Not run again.
    assert_eq!(gate.runs.load(Ordering::SeqCst), 1);
}

/// Starts the worker fixture and waits for it to take jobs.
fn worker_process(prefix: &str, ack_wait_ms: u64, policy: &str) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_jobs-worker-fixture"))
        .args([&nats_url(), prefix, &ack_wait_ms.to_string(), policy])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the worker fixture starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("worker ready") {
                let _ = tx.send(());
            }
            eprintln!("[worker] {line}");
        }
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the worker said it was ready");
    child
}

async fn wait_for(path: &Path) {
    for _ in 0..500 {
        if path.exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} never appeared", path.display());
}

/// Launches `slow` from this process (a replica without a worker), kills
/// worker 1 mid-job, starts worker 2, and gives the job's end.
async fn kill_mid_job(
    policy_name: &str,
    on_worker_loss: WorkerLoss,
) -> (Value, Option<ToolError>, tempfile::TempDir) {
    let prefix = prefix(policy_name);
    let config = NatsJobConfig {
        prefix: prefix.clone(),
        ack_wait: Duration::from_millis(1000),
        on_worker_loss,
        ..NatsJobConfig::default()
    };
    let launcher = NatsJobRunner::connect(&nats_url(), config).await.unwrap();
    let cleanup = Cleanup(Some(launcher.clone()));
    let dir = tempfile::tempdir().unwrap();

    let mut first = worker_process(&prefix, 1000, policy_name);
    let launch = jobs::JobLaunch::new(
        ToolRegistry::new(),
        "slow",
        json!({ "dir": dir.path(), "steps": 30, "wait": true }),
    );
    let handle = jobs::JobRunner::launch(&launcher, launch).await.unwrap();
    wait_for(&dir.path().join("started-1")).await;
    // SIGKILL: no clean-up, no acknowledgement, no more heartbeats.
    first.kill().unwrap();
    first.wait().unwrap();
    let mut second = worker_process(&prefix, 1000, policy_name);

    let record = jobs::JobRunner::wait(&launcher, None, &handle.job_id, Duration::from_secs(30))
        .await
        .expect("the job is still known");
    second.kill().ok();
    second.wait().ok();
    assert!(record.status.is_terminal(), "the job ended: {record:?}");
    let data = record.output.map(|o| o.data).unwrap_or(Value::Null);
    drop(cleanup);
    (data, record.error, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_whose_worker_is_killed_runs_again_on_another_worker_as_attempt_two() {
    let (data, error, dir) = kill_mid_job("retry", WorkerLoss::Retry).await;
    assert_eq!(error, None);
    assert_eq!(data["attempt"], 2, "the retry was told it is attempt 2");
    assert!(dir.path().join("started-2").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_the_interrupt_policy_a_job_whose_worker_is_killed_ends_interrupted() {
    let (_, error, dir) = kill_mid_job("interrupt", WorkerLoss::Interrupt).await;
    assert_eq!(error.expect("it failed").code.as_str(), "INTERRUPTED");
    assert!(!dir.path().join("started-2").exists(), "not run again");
}

/// A NATS server of one test's own that it can kill and start again
/// (same port and store); stopped when dropped.
struct PrivateNats {
    server: Server,
    _store: tempfile::TempDir,
}

impl PrivateNats {
    fn start() -> PrivateNats {
        let store = tempfile::tempdir().unwrap();
        PrivateNats {
            server: Server::nats(store.path()),
            _store: store,
        }
    }

    fn url(&self) -> String {
        self.server.url()
    }

    /// SIGKILL, then the same server (port and store) again.
    fn restart(&mut self) {
        self.server.kill();
        self.server.start_again();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_running_while_the_nats_server_is_killed_and_restarted_still_ends_and_new_jobs_run() {
    let mut nats = PrivateNats::start();
    let gate = Arc::new(Gate::default());
    let config = NatsJobConfig {
        prefix: "restart".to_owned(),
        ack_wait: Duration::from_secs(2),
        ..NatsJobConfig::default()
    };
    let runner = NatsJobRunner::connect(&nats.url(), config).await.unwrap();
    let registry = ToolRegistry::new();
    registry.register(work_tool(Arc::clone(&gate))).unwrap();
    jobs::install(&registry, Arc::new(runner.clone())).unwrap();
    runner.start_worker(registry.clone()).await.unwrap();
    let policy = TestPolicy::allow_all();

    let handle = as_(
        &registry,
        alice(),
        &policy,
        "work",
        json!({ "mode": "hold" }),
    )
    .await
    .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();
    status_until(&registry, &policy, &id, |s| s["status"] == "running").await;

    nats.restart();
    gate.release.add_permits(1000);
    // The client reconnects by itself; the job's end is written and read.
    let result = as_(
        &registry,
        alice(),
        &policy,
        "jobs.result",
        json!({ "jobId": id, "waitMs": 20000 }),
    )
    .await
    .unwrap();
    assert_eq!(result.data, json!({ "done": true }));

    // And the queue takes new jobs.
    let handle = as_(
        &registry,
        alice(),
        &policy,
        "work",
        json!({ "mode": "quick", "n": 7 }),
    )
    .await
    .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();
    let result = as_(
        &registry,
        alice(),
        &policy,
        "jobs.result",
        json!({ "jobId": id, "waitMs": 20000 }),
    )
    .await
    .unwrap();
    assert_eq!(result.data, json!({ "n": 7 }));
}

#[tokio::test]
async fn a_runner_without_a_reachable_nats_says_so() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("nats://127.0.0.1:{port}");
    let error = NatsJobRunner::connect(&url, NatsJobConfig::default())
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("cannot connect to NATS"),
        "{error}"
    );
    let error = NatsJobRunner::connect(
        &nats_url(),
        NatsJobConfig {
            prefix: "a.b".into(),
            ..NatsJobConfig::default()
        },
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("A-Za-z0-9_-"), "{error}");
}
