//! `notes.export_file` is detached: on the command line it prints a job id
//! (and the process stays until the job ends), `--wait` runs it in the
//! foreground with the result and a normal call's exit code, and the
//! `jobs.*` commands read the job back from the database afterwards.

use std::path::Path;
use std::process::{Command, Output};

use gonk_tools_tests::workspace::bin;
use serde_json::Value;

fn notes(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin("notes"))
        .current_dir(dir)
        .env_remove("NOTES_SAVED_SEARCHES")
        .env_remove("XDG_DATA_HOME")
        .env_remove("HOME")
        .arg("--db")
        .arg(dir.join("notes.db"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json_result(output: &Output) -> Value {
    let line = stdout(output)
        .lines()
        .last()
        .map(str::to_owned)
        .unwrap_or_default();
    let event: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    event
}

#[test]
fn a_detached_command_prints_its_job_id_and_wait_prints_the_result() {
    let dir = tempfile::tempdir().unwrap();
    for title in ["One", "Two", "Three"] {
        assert!(notes(dir.path(), &["notes.create", title]).status.success());
    }

    // By default: the job's id, at once; the process stays until it ends.
    let launched = notes(dir.path(), &["notes.export_file", "all.md"]);
    assert_eq!(launched.status.code(), Some(0), "{}", stderr(&launched));
    let out = stdout(&launched);
    assert!(
        out.starts_with("notes.export_file dispatched as background job job-"),
        "{out}"
    );
    let id = out
        .split_whitespace()
        .find(|w| w.starts_with("job-"))
        .unwrap()
        .trim_end_matches(';')
        .to_owned();
    // The process stays until its job ends (the file below is complete).
    // The notice shows only when the job is still running by the time the
    // command is done, which a fast export may not be: when it shows, it
    // names this job.
    let err = stderr(&launched);
    if err.contains("Waiting for background job") {
        assert!(
            err.contains(&format!("Waiting for background job {id}")),
            "{err}"
        );
    }
    let file = std::fs::read_to_string(dir.path().join("all.md")).unwrap();
    assert_eq!(file.matches("# ").count(), 3, "{file}");

    // The job outlives its process in the database.
    let status = notes(dir.path(), &["jobs.status", &id, "--json"]);
    let status = json_result(&status);
    assert_eq!(status["data"]["status"], "succeeded", "{status}");
    let result = notes(dir.path(), &["jobs.result", &id, "--json"]);
    assert_eq!(json_result(&result)["data"]["count"], 3);
    let listed = notes(dir.path(), &["jobs.list"]);
    assert!(stdout(&listed).contains(&format!("{id} (notes.export_file): succeeded")));

    // --json: the handle as data.
    let handle = notes(dir.path(), &["notes.export_file", "b.md", "--json"]);
    let handle = json_result(&handle);
    assert_eq!(handle["data"]["kind"], "notes.export_file");
    assert!(handle["data"]["jobId"]
        .as_str()
        .unwrap()
        .starts_with("job-"));

    // --wait: in the foreground, progress and the result, no job.
    let waited = notes(
        dir.path(),
        &[
            "notes.export_file",
            "c.json",
            "--format",
            "json",
            "--wait",
            "--json",
        ],
    );
    assert_eq!(waited.status.code(), Some(0), "{}", stderr(&waited));
    let events: Vec<Value> = stdout(&waited)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.iter().any(|e| e["type"] == "progress"));
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), &last["data"]["count"]),
        (Some("result"), &Value::from(3))
    );
    assert!(!stderr(&waited).contains("Waiting for background job"));

    // --wait fails like a normal call: a handler error exits 1, bad input 2.
    let exists = notes(dir.path(), &["notes.export_file", "all.md", "--wait"]);
    assert_eq!(exists.status.code(), Some(2), "{}", stderr(&exists));
    assert!(stderr(&exists).contains("the file exists"));
    let bad = notes(
        dir.path(),
        &["notes.export_file", "x.md", "--format", "pdf"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));

    // A job that fails is reported by jobs.result with the tool's own exit code.
    let failing = notes(dir.path(), &["notes.export_file", "all.md", "--json"]);
    let failing_id = json_result(&failing)["data"]["jobId"]
        .as_str()
        .unwrap()
        .to_owned();
    let failed = notes(dir.path(), &["jobs.result", &failing_id]);
    assert_eq!(failed.status.code(), Some(2), "{}", stderr(&failed));
    assert!(stderr(&failed).contains("the file exists"));

    // Someone else's id, or none: JOB_NOT_FOUND, exit 1.
    let missing = notes(dir.path(), &["jobs.status", "job-0-0"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("No such job: job-0-0"));
}

#[test]
fn ctrl_c_while_a_command_waits_for_its_job_cancels_the_job() {
    let dir = tempfile::tempdir().unwrap();
    assert!(notes(dir.path(), &["notes.create", "One"]).status.success());
    let mut child = Command::new(bin("notes"))
        .current_dir(dir.path())
        .env_remove("XDG_DATA_HOME")
        .env_remove("HOME")
        .arg("--db")
        .arg(dir.path().join("notes.db"))
        .args([
            "notes.export_file",
            "slow.md",
            "--delay-ms",
            "10000",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The handle is printed at once; then the process waits for the job.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    let handle: Value = serde_json::from_str(&line).unwrap();
    let id = handle["data"]["jobId"].as_str().unwrap().to_owned();
    // Interrupt once the command says it waits for the job.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut notice = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut notice).unwrap();
    assert!(
        notice.starts_with(&format!("Waiting for background job {id}")),
        "{notice}"
    );
    let pid = child.id() as libc::pid_t;
    // SAFETY: signalling a child process this test spawned.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "the launch itself succeeded");
    let after = json_result(&notes(dir.path(), &["jobs.status", &id, "--json"]));
    assert_eq!(after["data"]["status"], "cancelled", "{after}");
}
