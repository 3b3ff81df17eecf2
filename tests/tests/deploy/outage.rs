//! The shared services going away and coming back under running replicas.
//! Each test starts a Redis or NATS server of its own on a free loopback
//! port (the binary's shared servers stay up for the other tests),
//! kills it with SIGKILL while `notes serve` replicas use it, and starts it
//! again on the same port:
//!
//! * Redis away: tool calls keep working and stay limited (each replica
//!   counts the budget on its own, as `docs/rate-limits.md` decides);
//!   once Redis is back the replicas share one budget again and a write on
//!   one replica reaches a `subscriptions/listen` stream on the other.
//! * NATS away: tool calls keep working, a detached launch answers
//!   `JOBS_UNAVAILABLE` at once (bounded), and once NATS is back launches
//!   run again (`docs/jobs.md`).

use std::path::Path;
use std::time::{Duration, Instant};

use gonk_tools_tests::clients::report;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::services::Server;
use gonk_tools_tests::workspace::notes_command;
use serde_json::{json, Value};

use crate::support::{call, run_python, Answer};

/// A replica of `notes serve` on the SQLite file in `dir` (WAL: shared by
/// processes on one machine), sharing `shared` under this test's prefix.
fn replica(
    dir: &Path,
    name: &str,
    shared: &str,
    env: &[(&str, String)],
    serve: &[&str],
) -> ServerProcess {
    let mut command = notes_command();
    command
        .current_dir(dir)
        .args(["--db", dir.join("notes.db").to_str().unwrap()])
        .args(["--shared", shared])
        .env(
            "NOTES_SHARED_PREFIX",
            format!("outage_{}", std::process::id()),
        )
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(["serve", "--port", "0", "--allow-writes", "--replica", name])
        .args(serve);
    ServerProcess::start(command)
}

/// A call's `result`, with its caller's key when given.
fn result(at: &ServerProcess, tool: &str, arguments: Value, key: Option<&str>) -> Value {
    let bearer = key.map(|k| format!("Authorization: Bearer {k}"));
    let headers: Vec<&str> = bearer.iter().map(String::as_str).collect();
    let answer: Answer = call(at.addr(), tool, arguments, json!({}), &headers);
    assert_eq!(answer.status, 200, "{tool}: {}", answer.text());
    answer.message()["result"].clone()
}

fn error_code(result: &Value) -> Option<&str> {
    if result["isError"] != true {
        return None;
    }
    let error = if result["_meta"]["gonk-tools/error"].is_object() {
        &result["_meta"]["gonk-tools/error"]
    } else {
        &result["structuredContent"]["error"]
    };
    error["code"].as_str()
}

fn search(at: &ServerProcess, key: &str) -> Option<String> {
    let result = result(at, "notes.search", json!({ "query": "outage" }), Some(key));
    error_code(&result).map(str::to_owned)
}

/// Each principal's budget: room for a listen scenario's calls (an
/// approved write is two: the call and its retry).
const BUDGET: usize = 10;

/// Whether `key`'s budget is one across A and B: half the calls on each
/// pass, and one more on A is refused (each replica counting alone would
/// let it pass).
fn shares_one_budget(a: &ServerProcess, b: &ServerProcess, key: &str) -> bool {
    for at in [a, b].into_iter().cycle().take(BUDGET) {
        assert_eq!(search(at, key), None, "{key}: a call within the budget");
    }
    search(a, key).as_deref() == Some("RATE_LIMITED")
}

/// What a `subscriptions/listen` stream on A heard of a rename on B
/// (`python_listen_across.py`, as `key`).
fn listen_across(a: &ServerProcess, b: &ServerProcess, seconds: &str, key: &str) -> Value {
    report(&run_python(
        "python_listen_across.py",
        &["auto", &a.url, &b.url, seconds, key],
    ))
}

#[test]
fn with_redis_gone_calls_keep_working_and_sharing_resumes_when_it_is_back() {
    let redis = Server::redis();
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..20).map(|i| format!("p{i}=key-{i}")).collect();
    let shared = redis.url();
    let start = |name| {
        let keys = ("NOTES_API_KEYS", keys.join(","));
        let rate = format!("{BUDGET}/1m");
        replica(dir.path(), name, &shared, &[keys], &["--rate-limit", &rate])
    };
    let (mut a, mut b) = (start("a"), start("b"));
    assert!(
        shares_one_budget(&a, &b, "key-0"),
        "with Redis up the replicas share one budget"
    );

    redis.kill();
    // Calls keep working, and stay limited: each replica counts a budget
    // alone (a whole budget passes on A, one more is refused; B allows
    // its own).
    for _ in 0..BUDGET {
        assert_eq!(search(&a, "key-2"), None);
    }
    assert_eq!(search(&a, "key-2").as_deref(), Some("RATE_LIMITED"));
    assert_eq!(search(&b, "key-2"), None, "B counts on its own");
    // An approved write fails closed: its retry's requestState cannot be
    // checked against the shared single-use store (docs/asking.md).
    let report = listen_across(&a, &b, "2", "key-19");
    let refused = report["write_error"].as_str().unwrap_or_default();
    assert!(
        refused.contains("requestState could not be checked"),
        "{report}"
    );
    assert!(a.is_running() && b.is_running());

    redis.start_again();
    // The limiter tries Redis again a second after it failed: within a
    // bounded number of fresh principals the budget is one again.
    let started = Instant::now();
    let mut next = 3;
    loop {
        if shares_one_budget(&a, &b, &format!("key-{next}")) {
            break;
        }
        next += 1;
        assert!(
            next < 13 && started.elapsed() < Duration::from_secs(60),
            "the replicas never shared a budget again after Redis came back"
        );
        std::thread::sleep(Duration::from_secs(1));
    }

    // The change bus reconnects too (back-off up to 5 s): a rename on B
    // reaches a listen stream on A. Each try renames again.
    let mut heard = Vec::new();
    for attempt in 0..4 {
        // A fresh principal for each try.
        let key = format!("key-{}", 13 + attempt);
        let report = listen_across(&a, &b, "8", &key);
        heard = report["updates"].as_array().cloned().unwrap_or_default();
        if !heard.is_empty() {
            break;
        }
    }
    assert!(
        !heard.is_empty(),
        "after Redis came back a write on B never reached A's listen stream"
    );
    assert!(a.is_running() && b.is_running());
}

/// The `structuredContent` of a call that must succeed.
fn data(at: &ServerProcess, tool: &str, arguments: Value) -> Value {
    let result = result(at, tool, arguments, None);
    assert_eq!(error_code(&result), None, "{tool}: {result}");
    result["structuredContent"].clone()
}

fn wait_until_ended(at: &ServerProcess, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let status = data(at, "jobs.status", json!({ "jobId": id }));
        if !matches!(status["status"].as_str(), Some("queued" | "running")) {
            return status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the job never ended: {status}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn with_nats_gone_calls_keep_working_launches_are_refused_and_resume_when_it_is_back() {
    let store = tempfile::tempdir().unwrap();
    let nats = Server::nats(store.path());
    let dir = tempfile::tempdir().unwrap();
    let a = replica(dir.path(), "a", &nats.url(), &[], &[]);
    data(
        &a,
        "notes.create",
        json!({ "title": "Before", "body": "text" }),
    );
    let launched = data(&a, "notes.export_file", json!({ "path": "before.md" }));
    let id = launched["jobId"].as_str().expect("a job id").to_owned();
    assert_eq!(wait_until_ended(&a, &id)["status"], "succeeded");

    nats.kill();
    data(
        &a,
        "notes.create",
        json!({ "title": "During", "body": "text" }),
    );
    let started = Instant::now();
    let refused = result(
        &a,
        "notes.export_file",
        json!({ "path": "during.md" }),
        None,
    );
    assert_eq!(error_code(&refused), Some("JOBS_UNAVAILABLE"), "{refused}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "a launch during the outage waited {:?}",
        started.elapsed()
    );
    assert!(!dir.path().join("during.md").exists());
    eprintln!(
        "T refused {:?} {:?}",
        std::time::SystemTime::now(),
        started.elapsed()
    );

    nats.start_again();
    // The client reconnects by itself; launches run again within a bound.
    let started = Instant::now();
    let id = loop {
        let launched = result(&a, "notes.export_file", json!({ "path": "after.md" }), None);
        match error_code(&launched) {
            None => {
                break launched["structuredContent"]["jobId"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            }
            Some("JOBS_UNAVAILABLE") => {}
            Some(other) => panic!("{other}: {launched}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "launches never ran again after NATS came back: {launched}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(wait_until_ended(&a, &id)["status"], "succeeded");
    let written = std::fs::read_to_string(dir.path().join("after.md")).unwrap();
    for title in ["Before", "During"] {
        assert_eq!(written.matches(title).count(), 1, "{written}");
    }
}
