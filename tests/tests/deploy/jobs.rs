//! Background jobs across replicas on NATS JetStream: two `notes serve`
//! processes on one database with `--shared nats://…` (the machine's NATS,
//! a prefix of this test's own, removed afterwards). A detached
//! `notes.export_file` launched on replica A and running there, then A
//! killed with SIGKILL mid-export and replica B started: NATS delivers the
//! job again after its ack wait, B runs it as attempt 2, `jobs.status` on B
//! reports it, and the file is whole (the killed attempt's half-written
//! export never became the file).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use gonk_tools::jobs::{NatsJobConfig, NatsJobRunner};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

use crate::support::call;

const NATS: &str = "nats://127.0.0.1:4222";

/// Removes this test's stream and record bucket from the machine's NATS.
struct NatsPrefix(String);

impl Drop for NatsPrefix {
    fn drop(&mut self) {
        let config = NatsJobConfig {
            prefix: self.0.clone(),
            ..NatsJobConfig::default()
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            if let Ok(runner) = NatsJobRunner::connect(NATS, config).await {
                let _ = runner.destroy().await;
            }
        });
    }
}

fn addr(server: &ServerProcess) -> SocketAddr {
    let rest = server.url.strip_prefix("http://").unwrap();
    rest.split('/').next().unwrap().parse().unwrap()
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
    let replica = |name: &str| {
        let mut command = notes_command();
        command
            .current_dir(dir.path())
            .args(["--db", db.to_str().unwrap(), "--shared", NATS])
            .env("NOTES_SHARED_PREFIX", &prefix.0)
            .args(["serve", "--port", "0", "--allow-writes", "--replica", name]);
        ServerProcess::start(command)
    };
    // A alone first, so its worker is the one that takes the job.
    let mut a = replica("a");
    let titles = ["Alpha", "Bravo", "Charlie"];
    for title in titles {
        data(
            addr(&a),
            "notes.create",
            json!({ "title": title, "body": "text" }),
        );
    }
    let launched = data(
        addr(&a),
        "notes.export_file",
        json!({ "path": "all.md", "delay_ms": 5000 }),
    );
    let id = launched["jobId"].as_str().expect("a job id").to_owned();
    let started = Instant::now();
    loop {
        let status = data(addr(&a), "jobs.status", json!({ "jobId": id }));
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

    // Bounded: NATS redelivers after its 30 s ack wait when A had the job.
    let started = Instant::now();
    let status = loop {
        let status = data(addr(&b), "jobs.status", json!({ "jobId": id }));
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
