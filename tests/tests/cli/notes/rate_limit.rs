//! `--rate-limit N/PERIOD` and `--shared redis://…`: separate `notes`
//! processes (each command is one) draw on one budget kept on the
//! test binary's own Redis, under a key prefix of this test's own
//! (`NOTES_SHARED_PREFIX`), removed afterwards; the call past the budget
//! exits 75 with `RATE_LIMITED` and when to retry. Without `--shared` each
//! process counts alone.

use super::{clean, notes, Run};

/// This binary's Redis (`gonk_tools_tests::services`), started on first use.
fn redis_url() -> String {
    gonk_tools_tests::services::redis().url()
}

/// This test's key prefix; its keys are removed on drop.
struct Prefix(String);

impl Drop for Prefix {
    fn drop(&mut self) {
        // A failed test (maybe one whose server never started) leaves its
        // keys to the binary's own server, gone when the binary exits.
        if std::thread::panicking() {
            return;
        }
        let client = redis::Client::open(redis_url()).unwrap();
        let mut connection = client.get_connection().unwrap();
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:*", self.0))
            .query(&mut connection)
            .unwrap();
        if !keys.is_empty() {
            let _: () = redis::cmd("DEL").arg(keys).query(&mut connection).unwrap();
        }
    }
}

fn search(prefix: &Prefix, args: &[&str]) -> Run {
    let mut command = clean(notes());
    command
        .env("NOTES_SHARED_PREFIX", &prefix.0)
        .args(["--db", ":memory:"])
        .args(args)
        .args(["notes.search", "anything"]);
    Run::from(command.output().expect("notes runs"))
}

#[test]
fn processes_sharing_redis_draw_on_one_budget() {
    let prefix = Prefix(format!("gonk-tests:notes-cli:{}", std::process::id()));
    let redis = redis_url();
    let limited = ["--rate-limit", "2/1m", "--shared", &redis];
    for _ in 0..2 {
        let run = search(&prefix, &limited);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let refused = search(&prefix, &limited);
    assert_eq!(refused.code, 75, "{}", refused.stderr);
    assert!(
        refused.stderr.starts_with(
            "Error [RATE_LIMITED]: Rate limit reached for anonymous: 2 calls per 1m; retry in "
        ),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("\"retryAfterMs\""),
        "{}",
        refused.stderr
    );

    // Counted in the process alone, a fresh process has its whole budget.
    let alone = search(&prefix, &["--rate-limit", "2/1m"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
}

#[test]
fn a_bad_rate_or_store_is_a_usage_error() {
    let prefix = Prefix(format!("gonk-tests:notes-cli-bad:{}", std::process::id()));
    let bad = search(&prefix, &["--rate-limit", "lots"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("write N/PERIOD"), "{}", bad.stderr);
    // nats:// is a store too (jobs); a scheme notes has no use for is not.
    let amqp = search(
        &prefix,
        &["--rate-limit", "1/s", "--shared", "amqp://127.0.0.1:5672"],
    );
    assert_eq!(amqp.code, 2, "{}", amqp.stderr);
    assert!(
        amqp.stderr.contains("give redis://HOST:PORT"),
        "{}",
        amqp.stderr
    );
}
