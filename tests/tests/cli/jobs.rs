//! `notes.export_file` is detached: on the command line it says which job
//! it started, waits for it and reports the job's outcome as a foreground
//! call would (result on stdout, or the error and its exit code); `--wait`
//! runs it in the foreground; the `jobs.*` commands read the job back from
//! the database afterwards.

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

    // By default: a job; the command says so on stderr, waits for it and
    // prints its result like a foreground call.
    let launched = notes(dir.path(), &["notes.export_file", "all.md"]);
    assert_eq!(launched.status.code(), Some(0), "{}", stderr(&launched));
    let err = stderr(&launched);
    assert!(
        err.starts_with("notes.export_file started as background job job-"),
        "{err}"
    );
    assert!(
        err.contains("Ctrl-C cancels it; --wait runs notes.export_file in the foreground"),
        "{err}"
    );
    assert!(
        !err.contains("follow-up"),
        "the model's wording is not shown: {err}"
    );
    let id = err
        .split_whitespace()
        .find(|w| w.starts_with("job-"))
        .unwrap()
        .trim_end_matches(';')
        .to_owned();
    let out = stdout(&launched);
    assert!(out.starts_with("Exported 3 notes to "), "{out}");
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

    // --json: the launch's handle, then the job's outcome as the last line.
    let launched = notes(dir.path(), &["notes.export_file", "b.md", "--json"]);
    let lines: Vec<Value> = stdout(&launched)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["data"]["kind"], "notes.export_file");
    assert!(lines[0]["data"]["jobId"]
        .as_str()
        .unwrap()
        .starts_with("job-"));
    assert_eq!(
        (lines[1]["type"].as_str(), &lines[1]["data"]["count"]),
        (Some("result"), &Value::from(3))
    );

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

    // A job that fails fails the command: its error and its exit code, as
    // in the foreground (before, the command printed the job id and exited 0).
    let absolute = dir.path().join("abs.md");
    let refused = notes(
        dir.path(),
        &["notes.export_file", absolute.to_str().unwrap()],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let err = stderr(&refused);
    assert!(err.contains("Error [INVALID_INPUT]"), "{err}");
    assert!(
        err.contains("give a path relative to the working directory"),
        "{err}"
    );
    assert_eq!(stdout(&refused), "");
    let failing = notes(dir.path(), &["notes.export_file", "all.md", "--json"]);
    assert_eq!(failing.status.code(), Some(2), "{}", stderr(&failing));
    let failing_id = stdout(&failing)
        .lines()
        .next()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .unwrap()["data"]["jobId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(json_result(&failing)["type"], "error");
    // jobs.result reports it the same way afterwards.
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
        notice.starts_with(&format!(
            "notes.export_file started as background job {id}; waiting"
        )),
        "{notice}"
    );
    let pid = child.id() as libc::pid_t;
    // SAFETY: signalling a child process this test spawned.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    // The job's outcome is the command's: cancelled, 130.
    assert_eq!(status.code(), Some(130));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let outcome: Value = serde_json::from_str(rest.trim()).unwrap();
    assert_eq!(outcome["code"], "ABORTED", "{outcome}");
    let after = json_result(&notes(dir.path(), &["jobs.status", &id, "--json"]));
    assert_eq!(after["data"]["status"], "cancelled", "{after}");
}
