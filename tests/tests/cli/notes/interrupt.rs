//! Ctrl-C: the first cancels the running tool and its handler is dropped;
//! a second exits at once when the handler does not yield.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;

use super::{clean, run_on, testbed};

/// Waits until `reader` yields a line containing `needle`; returns all
/// lines read.
fn read_until(reader: &mut impl BufRead, needle: &str) -> String {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let n = reader.read_line(&mut line).expect("stderr readable");
        assert!(n > 0, "stderr closed before `{needle}`:\n{seen}");
        seen.push_str(&line);
        if line.contains(needle) {
            return seen;
        }
    }
}

fn interrupt(pid: u32) {
    let pid = libc::pid_t::try_from(pid).expect("pid fits");
    // SAFETY: kill(2) with a pid this test spawned and a valid signal number.
    let rc = unsafe { libc::kill(pid, libc::SIGINT) };
    assert_eq!(rc, 0, "kill(SIGINT) failed");
}

#[test]
fn ctrl_c_cancels_the_running_tool_and_its_handler_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let mut child = clean(testbed())
        .args(["diag.sleep", "--ms", "600000", "--marker"])
        .arg(&marker)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // The handler is running (it logged), so the Ctrl-C handler is installed.
    read_until(&mut stderr, "[info] sleeping for 600000 ms");
    interrupt(child.id());
    let status = child.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains("Error [ABORTED]: Tool execution aborted"),
        "{rest}"
    );
    assert_eq!(
        std::fs::read_to_string(&marker).expect("the drop guard wrote the marker"),
        "dropped"
    );

    // The same tool, not interrupted, completes (so the marker tells the two apart).
    let done = run_on(
        testbed(),
        &[
            "diag.sleep",
            "--ms",
            "1",
            "--marker",
            marker.to_str().unwrap(),
        ],
    );
    assert_eq!(done.code, 0);
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "completed");
}

#[test]
fn a_second_ctrl_c_exits_at_once_when_the_handler_does_not_yield() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let mut child = clean(testbed())
        .args(["diag.block", "--ms", "120000", "--marker"])
        .arg(&marker)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    read_until(&mut stderr, "[info] blocking for 120000 ms");
    interrupt(child.id());
    // The first Ctrl-C was handled (the token is cancelled) but the handler
    // cannot be dropped while it blocks its thread.
    read_until(&mut stderr, "press Ctrl-C again to exit at once");
    interrupt(child.id());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // It exited before the handler finished: no marker at all.
    assert!(!marker.exists(), "the handler ran to its end");
}
