//! `notes-load --targets BALANCER --db postgres://…`: the load generator
//! drives the three replicas through HAProxy, then its exactly-once check
//! reads the replicas' PostgreSQL database: every acknowledged create is
//! there once (as the store itself, read by the `notes` command line,
//! agrees) and it exits 0. Pointed at a database the replicas never wrote,
//! the same check reports the creates missing and exits 1.

use std::process::{Command, Output, Stdio};

use crate::support::{stored_notes, Deployment, PgDatabase, Recipe};
use gonk_tools_tests::workspace::bin;

/// One short round of 3 sessions against `url`, checked in `db`.
fn notes_load(url: &str, db: &str) -> Output {
    Command::new(bin("notes-load"))
        .args([
            "--targets",
            url,
            "--db",
            db,
            "--seconds",
            "1",
            "--sessions",
            "3",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("notes-load runs")
}

/// The round's phase rows (`| http | 3 | PHASE | calls | errors | … |`)
/// and its database check (`  database check: CHECK`).
fn round(output: &Output) -> (Vec<String>, String) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<String> = stdout
        .lines()
        .filter(|line| line.starts_with("| http"))
        .map(str::to_owned)
        .collect();
    let check = stdout
        .lines()
        .find_map(|line| line.strip_prefix("  database check: "))
        .map(str::to_owned);
    match check {
        Some(check) if !rows.is_empty() => (rows, check),
        _ => panic!(
            "no round in notes-load's output:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

#[test]
fn notes_load_finds_every_acknowledged_create_once_in_postgresql_and_fails_when_they_are_missing() {
    let deployment = Deployment::start(Recipe {
        serve: vec!["--allow-writes".into()],
        ..Recipe::default()
    });

    let checked = notes_load(&deployment.url, &deployment.db);
    let (rows, check) = round(&checked);
    let report = format!("{}\n{check}", rows.join("\n"));
    assert!(checked.status.success(), "{report}");
    // Four phases (mixed, create, get, search), each
    // `| http | 3 | PHASE | calls | errors | calls/s | p50 | p99 | CPU |`.
    assert_eq!(rows.len(), 4, "{report}");
    for row in &rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[5], "0", "no call failed: {report}");
    }
    // `N acked, R rows, each once`
    let check = check.as_str();
    let numbers: Vec<usize> = check
        .split_whitespace()
        .filter_map(|word| word.trim_end_matches(',').parse().ok())
        .collect();
    assert!(check.ends_with("each once"), "{report}");
    let [acked, rows] = numbers[..] else {
        panic!("no counts in {check:?}");
    };
    assert!(acked > 0, "{report}");
    // A database of the test's own: it holds exactly the acknowledged notes,
    // as the store read directly (not through a replica) agrees.
    assert_eq!(rows, acked, "{report}");
    assert_eq!(stored_notes(&deployment.db).len(), acked, "{report}");

    // A database (with the notes schema) the replicas never wrote.
    let elsewhere = PgDatabase::create();
    assert!(stored_notes(&elsewhere.url()).is_empty());
    let missed = notes_load(&deployment.url, &elsewhere.url());
    let (_, check) = round(&missed);
    assert_eq!(missed.status.code(), Some(1), "{check}");
    assert!(
        check.contains("LOST OR DUPLICATED") && check.contains("is there 0 times"),
        "{check}"
    );
}
