//! Change notifications across replicas: two `notes serve` processes on
//! one database, with `--shared redis://…` on the binary's Redis. A write
//! through replica B reaches a client watching that note on replica A —
//! through `subscriptions/listen` (2026-07-28) and `resources/subscribe`
//! (2025) — and without `--shared` it does not (each replica hears only
//! its own writes).

use gonk_tools_tests::clients::report;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_command;
use serde_json::Value;

use crate::support::{redis_url, run_python, RedisPrefix};

/// Replicas A and B on one SQLite file (WAL: shared by processes on one
/// machine), both on `shared` when given.
fn replicas(dir: &std::path::Path, shared: Option<&RedisPrefix>) -> [ServerProcess; 2] {
    let db = dir.join("notes.db");
    ["a", "b"].map(|name| {
        let mut command = notes_command();
        command.args(["--db", db.to_str().unwrap()]);
        if let Some(prefix) = shared {
            command
                .args(["--shared", &redis_url()])
                .env("NOTES_SHARED_PREFIX", &prefix.0);
        }
        command.args(["serve", "--port", "0", "--allow-writes", "--replica", name]);
        ServerProcess::start(command)
    })
}

fn watch_a_write_on_b(mode: &str, shared: Option<&RedisPrefix>, seconds: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let [mut a, mut b] = replicas(dir.path(), shared);
    let output = run_python("python_listen_across.py", &[mode, &a.url, &b.url, seconds]);
    let report = report(&output);
    assert_eq!(report["title_on_a"], "# Renamed on B", "{report}");
    assert!(a.is_running() && b.is_running());
    report
}

fn heard(report: &Value) -> Vec<String> {
    report["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_listen_stream_on_one_replica_hears_a_write_on_another() {
    let prefix = RedisPrefix::new("listen-across");
    let report = watch_a_write_on_b("auto", Some(&prefix), "10");
    let heard = heard(&report);
    assert!(!heard.is_empty(), "nothing heard on A: {report}");
    let note = report["note"].as_str().unwrap();
    assert!(heard.iter().all(|u| u.contains(note)), "{report}");
}

#[test]
fn a_2025_subscription_on_one_replica_hears_a_write_on_another() {
    let prefix = RedisPrefix::new("subscribe-across");
    let report = watch_a_write_on_b("legacy", Some(&prefix), "10");
    assert_eq!(
        heard(&report),
        [report["note"].as_str().unwrap()],
        "{report}"
    );
}

#[test]
fn without_shared_a_replica_hears_only_its_own_writes() {
    let report = watch_a_write_on_b("auto", None, "3");
    assert!(heard(&report).is_empty(), "{report}");
}
