//! PostgreSQL restarted mid-load, on a private server of the test's own
//! (the binary's shared one is never stopped): three replicas behind
//! HAProxy on it, four callers creating notes through the balancer without
//! pause. The server is stopped (as `pg_ctl stop` does, fast or immediate) and,
//! once calls have failed, started again on its port. Throughout, the
//! replica processes stay up; every call that failed got an answer, a tool
//! error with code `UNAVAILABLE` (never a dropped connection, a balancer
//! error or a hang); every call begun after the restart succeeds, on each
//! of the three replicas, none of them restarted; and every create
//! acknowledged before, during and after the outage is in the database
//! exactly once, under the id it was acknowledged with.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gonk_tools_tests::services::{PrivatePostgres, StopMode};
use serde_json::json;

use crate::support::{call, Deployment, Recipe};

/// Callers creating notes at once.
const CALLERS: usize = 4;

/// Successful creates wanted before the stop, and after the restart.
const SETTLED: usize = 12;

/// How one create ended.
#[derive(Debug)]
enum Outcome {
    /// Acknowledged with this id.
    Created(i64),
    /// A tool error: its code and message.
    Failed { code: String, message: String },
    /// Anything else (a balancer error, a JSON-RPC error): never expected.
    Other(String),
}

/// One create through the balancer.
#[derive(Debug)]
struct Call {
    started: Instant,
    finished: Instant,
    title: String,
    replica: Option<String>,
    outcome: Outcome,
}

fn create(addr: SocketAddr, title: String) -> Call {
    let started = Instant::now();
    let answer = call(
        addr,
        "notes.create",
        json!({ "title": title, "body": "written while PostgreSQL restarts" }),
        json!({}),
        &[],
    );
    let finished = Instant::now();
    let replica = answer.header("x-notes-replica").map(str::to_owned);
    let outcome = if answer.status != 200 {
        Outcome::Other(format!("HTTP {}: {}", answer.status, answer.text()))
    } else {
        let message = answer.message();
        let result = &message["result"];
        if result["isError"] == false {
            match result["structuredContent"]["id"].as_i64() {
                Some(id) => Outcome::Created(id),
                None => Outcome::Other(format!("a create without an id: {message}")),
            }
        } else if let Some(code) = result["_meta"]["gonk-tools/error"]["code"].as_str() {
            Outcome::Failed {
                code: code.to_owned(),
                message: result["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            }
        } else {
            Outcome::Other(message.to_string())
        }
    };
    Call {
        started,
        finished,
        title,
        replica,
        outcome,
    }
}

/// Waits (bounded: a guard against a hang, not a timing assertion) until
/// `done` holds for the calls so far.
fn wait_for(calls: &Mutex<Vec<Call>>, what: &str, done: impl Fn(&[Call]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if done(&calls.lock().unwrap_or_else(|p| p.into_inner())) {
            return;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn created(call: &Call) -> bool {
    matches!(call.outcome, Outcome::Created(_))
}

fn alive(pid: u32) -> bool {
    let pid = libc::pid_t::try_from(pid).expect("a pid");
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn restart_mid_load(mode: StopMode) {
    let postgres = PrivatePostgres::start();
    let db = postgres.create_database("notes_restart");
    let deployment = Deployment::start(Recipe {
        serve: vec!["--allow-writes".into()],
        db: Some(db),
        ..Recipe::default()
    });

    let calls: Arc<Mutex<Vec<Call>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..CALLERS)
        .map(|caller| {
            let (calls, stop, addr) = (Arc::clone(&calls), Arc::clone(&stop), deployment.addr);
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let done = create(addr, format!("restart c{caller} #{n}"));
                    calls.lock().unwrap_or_else(|p| p.into_inner()).push(done);
                    n += 1;
                }
            })
        })
        .collect();

    wait_for(&calls, "creates before the stop", |calls| {
        calls.iter().filter(|c| created(c)).count() >= SETTLED
    });
    let stopping = Instant::now();
    postgres.stop(mode);
    let stopped = Instant::now();
    // Every caller has had a call begun while the server was down fail.
    wait_for(&calls, "calls to fail while PostgreSQL is down", |calls| {
        calls
            .iter()
            .filter(|c| c.started >= stopped && !created(c))
            .count()
            >= CALLERS
    });
    postgres.start_again();
    let restarted = Instant::now();
    wait_for(
        &calls,
        "creates on every replica after the restart",
        |calls| {
            let after: Vec<&Call> = calls
                .iter()
                .filter(|c| c.started >= restarted && created(c))
                .collect();
            let replicas: BTreeSet<_> = after.iter().map(|c| c.replica.clone()).collect();
            after.len() >= SETTLED && replicas.len() == 3
        },
    );
    stop.store(true, Ordering::Relaxed);
    for caller in callers {
        caller.join().expect("a caller thread");
    }
    let calls = std::mem::take(&mut *calls.lock().unwrap_or_else(|p| p.into_inner()));

    // The replicas were never restarted: the processes run.sh started are
    // all still there (and all three answered after the restart, above).
    for (n, pid) in deployment.replica_pids.iter().enumerate() {
        assert!(alive(*pid), "replica r{} (pid {pid}) is gone", n + 1);
    }

    let mut failed = 0;
    for call in &calls {
        match &call.outcome {
            Outcome::Created(_) => {}
            Outcome::Failed { code, message } => {
                failed += 1;
                assert_eq!(code, "UNAVAILABLE", "{call:?}");
                assert!(message.contains("PostgreSQL"), "{call:?}");
            }
            Outcome::Other(what) => panic!("not a clean tool error: {what} ({call:?})"),
        }
        if call.finished < stopping || call.started >= restarted {
            assert!(
                created(call),
                "a call while PostgreSQL was up failed: {call:?}"
            );
        }
    }
    assert!(failed >= CALLERS, "{failed} calls failed");

    // Exactly once: every acknowledged create under its id; a create that
    // failed (its commit may have landed before the connection was cut) at
    // most once.
    let listed = postgres.psql_on(
        "notes_restart",
        "SELECT id, title FROM notes WHERE title LIKE 'restart c%'",
    );
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let mut stored: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&listed.stdout).lines() {
        let (id, title) = line.split_once('|').expect("id|title");
        stored
            .entry(title.to_owned())
            .or_default()
            .push(id.parse().expect("an id"));
    }
    for call in &calls {
        let ids = stored.get(&call.title).map_or(&[][..], Vec::as_slice);
        match call.outcome {
            Outcome::Created(id) => assert_eq!(ids, [id], "{:?}", call.title),
            _ => assert!(
                ids.len() <= 1,
                "{:?} is there {} times",
                call.title,
                ids.len()
            ),
        }
    }
    // What a caller saw during the outage (reported, not asserted).
    let messages: BTreeSet<&str> = calls
        .iter()
        .filter_map(|c| match &c.outcome {
            Outcome::Failed { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    let slowest_failure = calls
        .iter()
        .filter(|c| !created(c))
        .map(|c| c.finished - c.started)
        .max()
        .unwrap_or_default();
    eprintln!(
        "restart ({mode:?}): {} calls, {failed} failed UNAVAILABLE (the slowest after {slowest_failure:?}), \
         {} stored; messages: {messages:#?}",
        calls.len(),
        stored.len()
    );
}

#[test]
fn replicas_recover_from_a_fast_postgresql_restart_mid_load_and_lose_no_acknowledged_create() {
    restart_mid_load(StopMode::Fast);
}

#[test]
fn replicas_recover_from_an_immediate_postgresql_stop_mid_load_and_lose_no_acknowledged_create() {
    restart_mid_load(StopMode::Immediate);
}
