//! The embedded job runner and the `jobs.*` tools: launch → progress →
//! result, cancel, failure, panics, retention, persistence, owners.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use gonk_tools::jobs::{self, EmbeddedRunner, JobRecord, JobStore, Retention};
use gonk_tools::prelude::*;
use gonk_tools::security::{AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind};
use gonk_tools_tests::security::{alice, auth, options, TestPolicy};
use serde_json::Value;
use tokio::sync::Notify;

#[derive(Deserialize, JsonSchema)]
struct Work {
    /// What to do: "ok", "fail", "panic", "hang".
    mode: String,
}

/// A detached tool whose runs the test can hold and release.
struct Gate {
    release: Notify,
    dropped: AtomicBool,
    runs: AtomicUsize,
}

struct DropFlag(Arc<Gate>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

fn work_tool(gate: Arc<Gate>) -> ToolDefinition {
    ToolDefinition::builder("work")
        .description("Slow work.")
        .approval(ApprovalTier::Read)
        .detached()
        .stream_handler(move |input: Work, _ctx| {
            let gate = Arc::clone(&gate);
            async move {
                gonk_tools::stream! {
                    gate.runs.fetch_add(1, Ordering::SeqCst);
                    let _flag = DropFlag(Arc::clone(&gate));
                    match input.mode.as_str() {
                        "fail" => {
                            yield ToolEvent::error(ToolError::new(ErrorCode::custom("DISK_FULL"), "no space left"));
                        }
                        "panic" => panic!("the work blew up"),
                        "hang" => {
                            yield ToolEvent::progress(10.0, Some("started".to_owned()));
                            std::future::pending::<()>().await;
                        }
                        _ => {
                            yield ToolEvent::log(LogLevel::Info, "starting");
                            yield ToolEvent::progress(40.0, Some("halfway".to_owned()));
                            gate.release.notified().await;
                            yield ToolEvent::result(json!({ "done": input.mode }));
                        }
                    }
                }
            }
        })
        .build()
}

fn gate() -> Arc<Gate> {
    Arc::new(Gate {
        release: Notify::new(),
        dropped: AtomicBool::new(false),
        runs: AtomicUsize::new(0),
    })
}

fn registry_with(runner: EmbeddedRunner, gate: &Arc<Gate>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(work_tool(Arc::clone(gate))).unwrap();
    jobs::install(&registry, Arc::new(runner)).unwrap();
    registry
}

async fn call(registry: &ToolRegistry, tool: &str, input: Value) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(registry.invoke(tool, input, ToolContext::new()), |_| {}).await
}

/// `jobs.result`, waiting up to five seconds.
async fn result(registry: &ToolRegistry, id: &str) -> Result<ToolOutput, ToolError> {
    call(
        registry,
        "jobs.result",
        json!({ "jobId": id, "waitMs": 5000 }),
    )
    .await
}

/// `jobs.status`'s data for a job that exists.
async fn status(registry: &ToolRegistry, id: &str) -> Value {
    call(registry, "jobs.status", json!({ "jobId": id }))
        .await
        .unwrap()
        .data
}

async fn launch(registry: &ToolRegistry, mode: &str) -> String {
    let handle = call(registry, "work", json!({ "mode": mode }))
        .await
        .unwrap();
    handle.data["jobId"].as_str().unwrap().to_owned()
}

async fn status_until(registry: &ToolRegistry, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..500 {
        let status = call(registry, "jobs.status", json!({ "jobId": id }))
            .await
            .unwrap()
            .data;
        if done(&status) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("job {id} never reached the awaited state");
}

#[tokio::test]
async fn launch_progress_result() {
    let gate = gate();
    let registry = registry_with(EmbeddedRunner::new(), &gate);
    let handle = call(&registry, "work", json!({ "mode": "ok" }))
        .await
        .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();
    assert_eq!(handle.data["kind"], "work");
    assert!(handle.data["message"].as_str().unwrap().contains(&id));

    let running = status_until(&registry, &id, |s| s["progress"]["percent"] == 40.0).await;
    assert_eq!(running["status"], "running");
    assert_eq!(running["progress"]["message"], "halfway");
    assert_eq!(running["logs"][0]["message"], "starting");

    // Not finished: JOB_PENDING, with the status in the details.
    let pending = call(&registry, "jobs.result", json!({ "jobId": id }))
        .await
        .unwrap_err();
    assert_eq!(pending.code.as_str(), "JOB_PENDING");
    assert_eq!(pending.details.unwrap()["status"], "running");

    gate.release.notify_one();
    let result = result(&registry, &id).await.unwrap();
    assert_eq!(result.data, json!({ "done": "ok" }));
    let done = status(&registry, &id).await;
    assert_eq!(done["status"], "succeeded");
    assert_eq!(gate.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn wait_runs_inline_with_its_events() {
    let gate = gate();
    let registry = registry_with(EmbeddedRunner::new(), &gate);
    let events = registry.invoke(
        "work",
        json!({ "mode": "ok", "wait": true }),
        ToolContext::new(),
    );
    let mut events = std::pin::pin!(events);
    let mut kinds = Vec::new();
    while let Some(event) = events.next().await {
        if matches!(event, ToolEvent::Progress { .. }) {
            gate.release.notify_one();
        }
        kinds.push(event.kind());
        if let ToolEvent::Result { data, .. } = &event {
            assert_eq!(data, &json!({ "done": "ok" }));
        }
    }
    assert_eq!(kinds, ["log", "progress", "result"]);
    let listed = call(&registry, "jobs.list", json!({})).await.unwrap();
    assert_eq!(listed.data["jobs"], json!([]), "waiting made no job");
}

#[tokio::test]
async fn without_a_runner_it_runs_inline_and_says_so() {
    let gate = gate();
    let registry = ToolRegistry::new();
    registry.register(work_tool(Arc::clone(&gate))).unwrap();
    gate.release.notify_one();
    let output = call(&registry, "work", json!({ "mode": "ok" }))
        .await
        .unwrap();
    assert_eq!(
        output.data,
        json!({ "done": "ok", "ranSyncFallback": true })
    );
    gate.release.notify_one();
    let waited = call(&registry, "work", json!({ "mode": "ok", "sync": true }))
        .await
        .unwrap();
    assert_eq!(waited.data, json!({ "done": "ok" }));
}

#[tokio::test]
async fn cancel_drops_the_handler() {
    let gate = gate();
    let registry = registry_with(EmbeddedRunner::new(), &gate);
    let id = launch(&registry, "hang").await;
    status_until(&registry, &id, |s| {
        s["status"] == "running" && s["progress"].is_object()
    })
    .await;
    assert!(!gate.dropped.load(Ordering::SeqCst));

    let cancelled = call(&registry, "jobs.cancel", json!({ "jobId": id }))
        .await
        .unwrap();
    assert_eq!(cancelled.data["status"], "cancelled");
    assert!(
        gate.dropped.load(Ordering::SeqCst),
        "the handler was dropped"
    );
    let result = call(&registry, "jobs.result", json!({ "jobId": id }))
        .await
        .unwrap_err();
    assert_eq!(result.code, ErrorCode::Aborted);
    // Cancelling again changes nothing.
    let again = call(&registry, "jobs.cancel", json!({ "jobId": id }))
        .await
        .unwrap();
    assert_eq!(again.data["status"], "cancelled");
}

#[tokio::test]
async fn failure_is_a_failed_job_with_the_tools_error() {
    let gate = gate();
    let registry = registry_with(EmbeddedRunner::new(), &gate);
    let id = launch(&registry, "fail").await;
    let error = result(&registry, &id).await.unwrap_err();
    assert_eq!(error.code.as_str(), "DISK_FULL");
    assert_eq!(error.message, "no space left");
    let status = status(&registry, &id).await;
    assert_eq!(status["status"], "failed");
    assert_eq!(status["error"]["code"], "DISK_FULL");
}

#[tokio::test]
async fn a_panicking_job_fails_and_the_runner_keeps_serving() {
    let gate = gate();
    let registry = registry_with(EmbeddedRunner::new(), &gate);
    let id = launch(&registry, "panic").await;
    let error = result(&registry, &id).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Internal);
    let status = status(&registry, &id).await;
    assert_eq!(status["status"], "failed");

    let next = launch(&registry, "ok").await;
    status_until(&registry, &next, |s| s["status"] == "running").await;
    gate.release.notify_one();
    let result = result(&registry, &next).await;
    assert_eq!(result.unwrap().data, json!({ "done": "ok" }));
}

#[tokio::test]
async fn retention_evicts_the_oldest_finished_jobs() {
    let gate = gate();
    let runner = EmbeddedRunner::with_retention(Retention {
        max_finished: 2,
        max_age: Duration::from_secs(3600),
    });
    let registry = registry_with(runner, &gate);
    let mut ids = Vec::new();
    for _ in 0..4 {
        let id = launch(&registry, "fail").await;
        let _ = result(&registry, &id).await;
        ids.push(id);
    }
    for (i, id) in ids.iter().enumerate() {
        let status = call(&registry, "jobs.status", json!({ "jobId": id })).await;
        if i < 2 {
            assert_eq!(
                status.unwrap_err().code.as_str(),
                "JOB_NOT_FOUND",
                "job {i}"
            );
        } else {
            assert_eq!(status.unwrap().data["status"], "failed", "job {i}");
        }
    }
    // A running job is never evicted, whatever the limits.
    let runner = EmbeddedRunner::with_retention(Retention {
        max_finished: 0,
        max_age: Duration::ZERO,
    });
    let registry = registry_with(runner, &gate);
    let running = launch(&registry, "hang").await;
    let finished = launch(&registry, "fail").await;
    status_until(&registry, &running, |s| s["status"] == "running").await;
    for _ in 0..500 {
        if call(&registry, "jobs.status", json!({ "jobId": finished }))
            .await
            .is_err()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let gone = call(&registry, "jobs.status", json!({ "jobId": finished })).await;
    assert_eq!(gone.unwrap_err().code.as_str(), "JOB_NOT_FOUND");
    assert_eq!(status(&registry, &running).await["status"], "running");
}

/// A store in memory, standing for a database that outlives the runner.
#[derive(Default)]
struct MemoryStore(Mutex<BTreeMap<String, JobRecord>>);

impl JobStore for MemoryStore {
    fn load(&self) -> Result<Vec<JobRecord>, String> {
        Ok(self.0.lock().unwrap().values().cloned().collect())
    }
    fn save(&self, record: &JobRecord) -> Result<(), String> {
        self.0
            .lock()
            .unwrap()
            .insert(record.id.clone(), record.clone());
        Ok(())
    }
    fn remove(&self, id: &str) -> Result<(), String> {
        self.0.lock().unwrap().remove(id);
        Ok(())
    }
}

#[tokio::test]
async fn finished_jobs_survive_a_restart_and_running_ones_are_interrupted() {
    let store = Arc::new(MemoryStore::default());
    let gate = gate();
    let first = registry_with(
        EmbeddedRunner::with_store(Retention::default(), store.clone()),
        &gate,
    );
    let done = launch(&first, "fail").await;
    call(
        &first,
        "jobs.result",
        json!({ "jobId": done, "waitMs": 5000 }),
    )
    .await
    .unwrap_err();
    let cut_off = launch(&first, "hang").await;
    status_until(&first, &cut_off, |s| s["status"] == "running").await;
    drop(first);

    // A new registry and runner over the same store.
    let second = registry_with(
        EmbeddedRunner::with_store(Retention::default(), store.clone()),
        &gate,
    );
    let error = call(&second, "jobs.result", json!({ "jobId": done }))
        .await
        .unwrap_err();
    assert_eq!(error.code.as_str(), "DISK_FULL");
    let interrupted = call(&second, "jobs.result", json!({ "jobId": cut_off }))
        .await
        .unwrap_err();
    assert_eq!(interrupted.code.as_str(), "INTERRUPTED");
    assert_eq!(store.load().unwrap().len(), 2);
    // The store is not rewritten: a live process that shares it still
    // lands its final write.
    let stored = store.load().unwrap();
    assert!(stored
        .iter()
        .any(|r| r.id == cut_off && r.status == jobs::JobStatus::Running));
    // Ids of the new runner do not collide with the stored ones.
    let fresh = launch(&second, "fail").await;
    assert!(fresh != done && fresh != cut_off);
}

fn bob() -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        "user-2",
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", "bob", AuthMethod::Oauth),
    )
    .with_tenant("acme")
    .with_workspace("ws-1")
}

#[tokio::test]
async fn a_job_is_visible_only_to_the_principal_that_launched_it() {
    let gate = gate();
    let registry = ToolRegistry::builder().security(options()).build();
    registry.register(work_tool(Arc::clone(&gate))).unwrap();
    jobs::install(&registry, Arc::new(EmbeddedRunner::new())).unwrap();
    let policy = TestPolicy::allow_all();
    let as_ = |principal: AuthenticatedPrincipal, tool: &str, input: Value| {
        collect_tool_outcome(
            registry.invoke(tool, input, auth(principal, &policy)),
            |_| {},
        )
    };

    let handle = as_(alice(), "work", json!({ "mode": "hang" }))
        .await
        .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();
    // The job's own call was authorized as alice: discover + invoke of
    // `work` twice (the launching call, then the job's), never as anyone else.
    for _ in 0..500 {
        if policy
            .seen()
            .iter()
            .filter(|r| r.action == "tool.invoke")
            .count()
            >= 2
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let invokes: Vec<_> = policy
        .seen()
        .into_iter()
        .filter(|r| r.action == "tool.invoke")
        .collect();
    assert_eq!(invokes.len(), 2);
    assert!(invokes.iter().all(|r| r.principal_id == "user-1"));

    let mine = as_(alice(), "jobs.status", json!({ "jobId": id }))
        .await
        .unwrap();
    assert_eq!(mine.data["jobId"], id.as_str());

    // Bob: the same answer as for an id that never existed.
    let theirs = as_(bob(), "jobs.status", json!({ "jobId": id }))
        .await
        .unwrap_err();
    let never = as_(bob(), "jobs.status", json!({ "jobId": "job-0-0" }))
        .await
        .unwrap_err();
    assert_eq!(theirs.code.as_str(), "JOB_NOT_FOUND");
    assert_eq!(
        serde_json::to_value(&theirs).unwrap(),
        serde_json::to_value(&never)
            .unwrap()
            .as_object()
            .map(|o| {
                let mut o = o.clone();
                o.insert(
                    "message".into(),
                    json!(format!("No such job: {id}; `jobs.list` shows yours")),
                );
                o.insert("details".into(), json!({ "jobId": id }));
                Value::Object(o)
            })
            .unwrap()
    );
    for tool in ["jobs.result", "jobs.cancel"] {
        let error = as_(bob(), tool, json!({ "jobId": id })).await.unwrap_err();
        assert_eq!(error.code.as_str(), "JOB_NOT_FOUND", "{tool}");
    }
    let listed = as_(bob(), "jobs.list", json!({})).await.unwrap();
    assert_eq!(listed.data["jobs"], json!([]));
    // The unauthenticated path does not see alice's job either.
    let internal = call(&registry, "jobs.status", json!({ "jobId": id }))
        .await
        .unwrap_err();
    assert_eq!(internal.code.as_str(), "JOB_NOT_FOUND");
    // Still running for alice: bob's cancel did nothing.
    let status = as_(alice(), "jobs.status", json!({ "jobId": id }))
        .await
        .unwrap();
    assert_eq!(status.data["status"], "running");
    as_(alice(), "jobs.cancel", json!({ "jobId": id }))
        .await
        .unwrap();
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Counted {
    /// How many.
    count: u32,
}

/// A detached tool whose output is checked strictly against `Counted`.
fn strict_counter() -> ToolDefinition {
    ToolDefinition::builder("count")
        .description("Count, in the background.")
        .approval(ApprovalTier::Read)
        .output_schema_for::<Counted>()
        .validate_output(ValidateOutput::Strict)
        .detached()
        .handler(|_: Value, _ctx| async move { Ok::<_, ToolError>(json!({ "count": 3 })) })
        .build()
}

#[tokio::test]
async fn a_detached_tool_advertises_and_passes_both_of_its_answers() {
    // The advertised output schema is the result or the job handle, so a
    // strict tool's handle is no OUTPUT_INVALID (it was, checked against
    // the result alone), and neither is its waited result.
    let registry = ToolRegistry::new();
    registry.register(strict_counter()).unwrap();
    jobs::install(&registry, Arc::new(EmbeddedRunner::new())).unwrap();
    let def = registry.get("count").unwrap();
    let schema = def.output_schema.as_ref().unwrap();
    assert_eq!(schema["type"], "object");
    let branches = schema["anyOf"].as_array().unwrap();
    assert_eq!(branches[0]["required"], json!(["count"]));
    assert_eq!(branches[1]["required"], json!(["jobId", "kind", "message"]));

    let handle = collect_tool_outcome(
        registry.invoke("count", json!({}), ToolContext::new()),
        |_| {},
    )
    .await
    .unwrap();
    let id = handle.data["jobId"].as_str().unwrap().to_owned();
    let result = collect_tool_outcome(
        registry.invoke(
            "jobs.result",
            json!({ "jobId": id, "waitMs": 10000 }),
            ToolContext::new(),
        ),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(result.data, json!({ "count": 3 }));
    let waited = collect_tool_outcome(
        registry.invoke("count", json!({ "wait": true }), ToolContext::new()),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(waited.data, json!({ "count": 3 }));

    // Without a runner the inline fallback's `ranSyncFallback` passes too,
    // even against a result schema that allows no other property.
    let registry = ToolRegistry::new();
    registry.register(strict_counter()).unwrap();
    let fallback = collect_tool_outcome(
        registry.invoke("count", json!({}), ToolContext::new()),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(
        fallback.data,
        json!({ "count": 3, "ranSyncFallback": true })
    );
}

#[tokio::test]
async fn a_jobs_run_is_counted_with_its_launch_not_again() {
    use gonk_tools::rate_limit::{LocalRateLimiter, RateLimits};
    let gate = gate();
    let limits =
        RateLimits::new(Arc::new(LocalRateLimiter::new())).per_principal("2/1m".parse().unwrap());
    let registry = ToolRegistry::builder().rate_limits(limits).build();
    registry.register(work_tool(Arc::clone(&gate))).unwrap();
    jobs::install(&registry, Arc::new(EmbeddedRunner::new())).unwrap();

    // Call 1: the launch. The job's run is part of it.
    let id = launch(&registry, "ok").await;
    gate.release.notify_one();
    // Call 2: its result — the job ran, and was not refused as a 2nd call.
    let done = result(&registry, &id).await.unwrap();
    assert_eq!(done.data, json!({ "done": "ok" }));
    assert_eq!(gate.runs.load(Ordering::SeqCst), 1);
    // Call 3 is past the budget.
    let refused = call(&registry, "jobs.status", json!({ "jobId": id }))
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::RateLimited);
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Doubling {
    n: i64,
}

/// Doubles `n`, as a background job unless the caller waits.
#[tool(name = "doubled", approval = "read", detached, type_name = Doubled)]
async fn doubled(input: Doubling) -> i64 {
    input.n * 2
}

#[tokio::test]
async fn a_typed_call_of_a_detached_tool_waits_for_its_output_in_process_and_composed() {
    let registry = ToolRegistry::new();
    registry.register(Doubled::definition()).unwrap();
    registry
        .register(
            ToolDefinition::builder("doubled.via")
                .description("Calls doubled, typed.")
                .handler(|input: Doubling, ctx: ToolContext| async move {
                    ctx.call::<Doubled>(Doubling { n: input.n }).await
                })
                .build(),
        )
        .unwrap();
    jobs::install(&registry, Arc::new(EmbeddedRunner::new())).unwrap();

    // Untyped and without `wait`, a detached tool answers with a job handle.
    let handle = call(&registry, "doubled", json!({ "n": 4 })).await.unwrap();
    assert!(handle.data["jobId"].is_string(), "{}", handle.data);
    // A typed caller wants the output: the typed client and a composing
    // tool's `ctx.call` both wait for it.
    let client = gonk_tools::client::InProcess::new(registry.clone());
    let typed = gonk_tools::client::call::<Doubled>(&client, Doubling { n: 4 }).await;
    assert_eq!(typed.unwrap(), 8);
    let composed = call(&registry, "doubled.via", json!({ "n": 5 })).await;
    assert_eq!(composed.unwrap().data, 10);
}
