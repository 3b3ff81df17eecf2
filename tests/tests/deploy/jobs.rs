//! Background jobs across replicas on NATS JetStream (this binary's NATS,
//! a prefix of each test's own, removed afterwards).
//!
//! * Two `notes serve` processes on one database with `--shared nats://…`:
//!   a detached `notes.export_file` launched on replica A and running
//!   there, then A killed with SIGKILL mid-export and replica B started:
//!   NATS delivers the job again after its ack wait, B runs it as attempt
//!   2, `jobs.status` on B reports it, and the file is whole (the killed
//!   attempt's half-written export never became the file).
//! * The deployment recipe (three replicas behind HAProxy): the export
//!   launched as an MCP task through replica r1 by one principal, r1 (and
//!   the replica running the export, if another) killed with SIGKILL; the
//!   task completes on a surviving replica, `tasks/get` through the
//!   balancer reports it to its owner only, and the file is whole.
//!
//! The replicas run with a 5 s ack wait ([`ACK_WAIT`]) instead of the
//! default 30 s: the redelivery is the same, a test's wait for it shorter.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use gonk_tools::jobs::{NatsJobConfig, NatsJobRunner};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::services;
use gonk_tools_tests::workspace::notes_command;
use notes::jobs::ACK_WAIT_ENV;
use serde_json::{json, Value};

use crate::support::{call, raw_http, replica, Answer, Deployment, Recipe};

/// The replicas' ack wait in seconds (`NOTES_JOBS_ACK_WAIT`): a killed
/// replica's job is delivered again this long after its last heartbeat.
const ACK_WAIT: &str = "5";

/// Removes this test's stream and record bucket from the binary's NATS.
struct NatsPrefix(String);

impl Drop for NatsPrefix {
    fn drop(&mut self) {
        // A failed test (maybe one whose server never started) leaves its
        // stream to the binary's own server, gone when the binary exits.
        if std::thread::panicking() {
            return;
        }
        let config = NatsJobConfig {
            prefix: self.0.clone(),
            ..NatsJobConfig::default()
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            if let Ok(runner) = NatsJobRunner::connect(&services::nats().url(), config).await {
                let _ = runner.destroy().await;
            }
        });
    }
}

/// The `structuredContent` of a successful call.
fn data(addr: SocketAddr, tool: &str, arguments: Value) -> Value {
    let answer = call(addr, tool, arguments, json!({}), &[]);
    let message = answer.message();
    let result = &message["result"];
    assert!(
        result["isError"] != json!(true) && result.is_object(),
        "{tool} failed: {message}"
    );
    result["structuredContent"].clone()
}

#[test]
fn an_export_launched_on_a_killed_replica_ends_on_another() {
    // NATS names allow letters, digits, `-` and `_` only.
    let prefix = NatsPrefix(format!("gonk_tests_deploy_jobs_{}", std::process::id()));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let nats = services::nats().url();
    let replica = |name: &str| {
        let mut command = notes_command();
        command
            .current_dir(dir.path())
            .args(["--db", db.to_str().unwrap(), "--shared", &nats])
            .env("NOTES_SHARED_PREFIX", &prefix.0)
            .env(ACK_WAIT_ENV, ACK_WAIT)
            .args(["serve", "--port", "0", "--allow-writes", "--replica", name]);
        ServerProcess::start(command)
    };
    // A alone first, so its worker is the one that takes the job.
    let mut a = replica("a");
    let titles = ["Alpha", "Bravo", "Charlie"];
    for title in titles {
        data(
            a.addr(),
            "notes.create",
            json!({ "title": title, "body": "text" }),
        );
    }
    let launched = data(
        a.addr(),
        "notes.export_file",
        json!({ "path": "all.md", "delay_ms": 5000 }),
    );
    let id = launched["jobId"].as_str().expect("a job id").to_owned();
    let started = Instant::now();
    loop {
        let status = data(a.addr(), "jobs.status", json!({ "jobId": id }));
        if status["status"] == "running" && status["progress"].is_object() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the export never started on A: {status}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Mid-export: the first page is written, the pause after it runs.
    a.signal(libc::SIGKILL);
    let _ = a.wait(Duration::from_secs(10));
    assert!(!dir.path().join("all.md").exists());
    let mut b = replica("b");

    // Bounded: NATS redelivers after the ack wait when A had the job.
    let started = Instant::now();
    let status = loop {
        let status = data(b.addr(), "jobs.status", json!({ "jobId": id }));
        let state = status["status"].as_str().unwrap_or_default().to_owned();
        if !matches!(state.as_str(), "queued" | "running") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the job never ended: {status}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(status["status"], "succeeded", "{status}");
    let written = std::fs::read_to_string(dir.path().join("all.md")).unwrap();
    for title in titles {
        assert_eq!(written.matches(title).count(), 1, "{written}");
    }
    assert!(b.is_running());
}

/// The tasks extension a 2026 client declares to get a task for a detached
/// call.
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A stateless (`2026-07-28`) request's `_meta`, declaring the tasks
/// extension.
fn meta_with_tasks() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": { TASKS: {} },
        },
    })
}

/// A stateless call at `addr` with `meta` as its `_meta`, its write
/// approved: the call asks (`input_required`), and the retry answers yes
/// with the sealed `requestState` (opened by any replica: they share
/// `GONK_MCP_REQUEST_STATE_KEYS`).
fn approved_call(
    addr: SocketAddr,
    tool: &str,
    arguments: Value,
    meta: Value,
    headers: &[&str],
) -> Answer {
    let asked = call(
        addr,
        tool,
        arguments.clone(),
        json!({ "_meta": meta }),
        headers,
    );
    let result = asked.message()["result"].clone();
    if result["resultType"] != "input_required" {
        return asked;
    }
    let answers: serde_json::Map<String, Value> = result["inputRequests"]
        .as_object()
        .expect("input requests")
        .keys()
        .map(|key| {
            (
                key.clone(),
                json!({ "action": "accept", "content": { "approve": true } }),
            )
        })
        .collect();
    call(
        addr,
        tool,
        arguments,
        json!({
            "_meta": meta,
            "inputResponses": answers,
            "requestState": result["requestState"],
        }),
        headers,
    )
}

/// A stateless request's `_meta` without the tasks extension (what
/// [`call`] sends).
fn plain_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} },
    })
}

/// `tasks/get` for `task` (stateless, with the tasks extension) at `addr`
/// with the bearer `key`.
fn tasks_get(addr: SocketAddr, task: &str, key: &str) -> Answer {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tasks/get",
        "params": { "taskId": task, "_meta": meta_with_tasks() },
    })
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tasks/get\r\nMcp-Name: {task}\r\nAuthorization: Bearer {key}\r\n\
         Content-Length: {}",
        body.len()
    );
    raw_http::exchange(addr, &head, body.as_bytes())
}

/// The process ids in the names of the export's partial files in `dir`
/// (`.all.md.partial-PID-N`): the replicas writing it now.
fn writers(dir: &Path) -> BTreeSet<u32> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let rest = name.strip_prefix(".all.md.partial-")?;
                    rest.split('-').next()?.parse().ok()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn sigkill(pid: u32) {
    let pid = libc::pid_t::try_from(pid).expect("a pid");
    // SAFETY: kill(2) on a replica this test's deployment started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
}

/// Waits (bounded) until nothing accepts connections at `addr`.
fn gone(addr: SocketAddr) {
    let started = Instant::now();
    while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the killed replica at {addr} still accepts connections"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_task_launched_through_a_killed_replica_completes_on_another_and_tasks_get_through_the_balancer_reports_it(
) {
    let prefix = NatsPrefix(format!("gonk_tests_deploy_tasks_{}", std::process::id()));
    let deployment = Deployment::start(Recipe {
        shared: Some(services::nats().url()),
        serve: vec!["--allow-writes".to_owned()],
        env: vec![
            ("NOTES_SHARED_PREFIX".to_owned(), prefix.0.clone()),
            (ACK_WAIT_ENV.to_owned(), ACK_WAIT.to_owned()),
            (
                "NOTES_API_KEYS".to_owned(),
                "alice=alice-key,bob=bob-key".to_owned(),
            ),
            (
                "GONK_MCP_REQUEST_STATE_KEYS".to_owned(),
                "a=YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=".to_owned(),
            ),
        ],
        ..Recipe::default()
    });
    let alice = "Authorization: Bearer alice-key";
    let titles = ["Alpha", "Bravo", "Charlie"];
    for title in titles {
        let answer = approved_call(
            deployment.addr,
            "notes.create",
            json!({ "title": title, "body": "text" }),
            plain_meta(),
            &[alice],
        );
        assert_eq!(answer.message()["result"]["isError"], false, "{answer:?}");
    }

    // Launched as a task through r1 itself (the write approved first: the
    // job's run on whichever worker replays that answer).
    let r1 = deployment.replica_addrs[0];
    let launched = approved_call(
        r1,
        "notes.export_file",
        json!({ "path": "all.md", "delay_ms": 5000 }),
        meta_with_tasks(),
        &[alice],
    );
    assert_eq!(replica(&launched), "r1");
    let created = launched.message()["result"].clone();
    assert_eq!(created["resultType"], "task", "{created}");
    let task = created["taskId"].as_str().expect("a task id").to_owned();

    // Mid-export: the first page is written, the pause after it runs.
    let started = Instant::now();
    let first = loop {
        if let Some(pid) = writers(&deployment.dir).into_iter().next() {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the export never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let runner = deployment
        .replica_pids
        .iter()
        .position(|pid| *pid == first)
        .expect("a replica writes the export");
    // r1 dies, and so does the replica running the export when another
    // took it: either way the job's worker is lost mid-job.
    sigkill(deployment.replica_pids[0]);
    if runner != 0 {
        sigkill(first);
    }
    // Until a killed process is gone, its socket can still accept a
    // connection the balancer then sees reset (a 502 for a request in
    // flight as a replica dies); the test is about what happens after.
    for i in [0, runner] {
        gone(deployment.replica_addrs[i]);
    }
    let killed: BTreeSet<String> = [0, runner].iter().map(|i| format!("r{}", i + 1)).collect();
    let survivors: BTreeSet<u32> = deployment
        .replica_pids
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 0 && *i != runner)
        .map(|(_, pid)| *pid)
        .collect();

    // `tasks/get` through the balancer, answered by the survivors, until
    // the task ends (NATS redelivers after the ack wait).
    let mut rewritten_by = BTreeSet::new();
    let started = Instant::now();
    let done = loop {
        rewritten_by.extend(writers(&deployment.dir));
        let answer = tasks_get(deployment.addr, &task, "alice-key");
        assert_eq!(answer.status, 200, "{}", answer.text());
        assert!(
            !killed.contains(&replica(&answer)),
            "a killed replica answered"
        );
        let got = answer.message()["result"].clone();
        assert!(got.is_object(), "{}", answer.text());
        if got["status"] != "working" {
            break got;
        }
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the task never ended: {got}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(done["status"], "completed", "{done}");
    assert_ne!(done["result"]["isError"], true, "{done}");
    assert_eq!(done["result"]["structuredContent"]["count"], 3, "{done}");
    assert!(
        rewritten_by.iter().any(|pid| survivors.contains(pid)),
        "a surviving replica ran the export again (writers seen: {rewritten_by:?}, survivors: {survivors:?})"
    );
    let written = std::fs::read_to_string(deployment.dir.join("all.md")).unwrap();
    for title in titles {
        assert_eq!(written.matches(title).count(), 1, "{written}");
    }

    // Another principal: no such task, on any replica.
    for _ in 0..2 {
        let answer = tasks_get(deployment.addr, &task, "bob-key");
        let error = &answer.message()["error"];
        assert_eq!(error["code"], -32602, "{}", answer.text());
    }
}
