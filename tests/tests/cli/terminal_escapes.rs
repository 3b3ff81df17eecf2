//! Stored text with terminal control characters, printed by the `notes`
//! command line: on a real terminal (a pseudo-terminal opened by the test)
//! the characters arrive escaped — no ESC, BEL, CR, C1 or bidi override
//! reaches the user's terminal — while piped output keeps the data as it
//! is. Hostile argv echoed in an error is escaped the same way. After each
//! case a fresh command succeeds.
#![cfg(target_os = "linux")]

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use gonk_tools_tests::process::wait_with_bound;
use gonk_tools_tests::workspace::bin;

/// A pseudo-terminal: (controller, the terminal end the child writes to).
fn pty() -> (File, File) {
    // SAFETY: plain libc calls on descriptors we own; ptsname_r writes at
    // most `buf.len()` bytes.
    unsafe {
        let controller = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(controller >= 0, "posix_openpt failed");
        assert_eq!(libc::grantpt(controller), 0);
        assert_eq!(libc::unlockpt(controller), 0);
        let mut buf = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(controller, buf.as_mut_ptr(), buf.len()), 0);
        let terminal = libc::open(buf.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(terminal >= 0, "opening the terminal end failed");
        (
            File::from(OwnedFd::from_raw_fd(controller)),
            File::from(OwnedFd::from_raw_fd(terminal)),
        )
    }
}

struct Run {
    code: Option<i32>,
    /// What reached the terminal (stdout and stderr together).
    output: Vec<u8>,
}

/// Runs `notes --db DB ARGS` with stdout and stderr on a terminal.
fn on_terminal(db: &Path, args: &[&str]) -> Run {
    let (mut controller, terminal) = pty();
    let mut child = Command::new(bin("notes"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null())
        .stdout(terminal.try_clone().unwrap())
        .stderr(terminal)
        .spawn()
        .expect("notes starts");
    // Read while it runs (a full terminal buffer would block it); the read
    // ends with EIO once the last terminal descriptor is closed.
    let reader = std::thread::spawn(move || {
        let mut output = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n) = controller.read(&mut chunk) {
            if n == 0 {
                break;
            }
            output.extend_from_slice(&chunk[..n]);
        }
        output
    });
    let status = wait_with_bound(&mut child, Duration::from_secs(60));
    drop(child);
    Run {
        code: status.code(),
        output: reader.join().unwrap(),
    }
}

/// Runs `notes --db DB ARGS` with stdout piped.
fn piped(db: &Path, args: &[&str]) -> (Option<i32>, Vec<u8>) {
    let output = Command::new(bin("notes"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null())
        .output()
        .expect("notes runs");
    (output.status.code(), output.stdout)
}

/// No byte or character that drives a terminal, except the CR of the
/// terminal's own CR LF line endings.
fn assert_inert(output: &[u8], case: &str) {
    let text = String::from_utf8_lossy(output);
    let bad: Vec<char> = text
        .replace("\r\n", "\n")
        .chars()
        .filter(|c| {
            (c.is_control() && *c != '\n' && *c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{case}: raw {bad:?} reached the terminal:\n{text}"
    );
}

const TITLE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[31mred\u{9b}2J\u{202e}txt";

fn fresh_command_succeeds(db: &Path, after: &str) {
    let run = on_terminal(db, &["notes.search", "red"]);
    assert_eq!(run.code, Some(0), "after {after}");
    assert_inert(&run.output, after);
}

#[test]
fn stored_control_characters_are_escaped_on_a_terminal_and_kept_in_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let (code, _) = piped(&db, &["notes.create", TITLE, "--body", "line\rover"]);
    assert_eq!(code, Some(0));

    let run = on_terminal(&db, &["notes.get", "1"]);
    assert_eq!(run.code, Some(0));
    assert_inert(&run.output, "notes.get");
    let text = String::from_utf8_lossy(&run.output);
    assert!(
        text.contains("\\u{1b}]0;pwned\\u{7}\\u{1b}[31mred\\u{9b}2J\\u{202e}txt"),
        "{text}"
    );
    assert!(text.contains("line\\rover"), "{text}");
    fresh_command_succeeds(&db, "notes.get");

    // JSON Lines on a terminal: escaped, and still the same JSON.
    let run = on_terminal(&db, &["--json", "notes.get", "1"]);
    assert_eq!(run.code, Some(0));
    assert_inert(&run.output, "--json notes.get");
    let text = String::from_utf8_lossy(&run.output);
    let line = text
        .lines()
        .find(|l| l.contains("\"result\""))
        .expect("a result line");
    let event: serde_json::Value = serde_json::from_str(line.trim_end_matches('\r')).unwrap();
    assert_eq!(event["data"]["title"], TITLE);
    fresh_command_succeeds(&db, "--json notes.get");

    // Piped, the data is the data.
    let (code, stdout) = piped(&db, &["notes.get", "1"]);
    assert_eq!(code, Some(0));
    assert!(String::from_utf8_lossy(&stdout).contains(TITLE));
}

#[test]
fn hostile_argv_echoed_in_an_error_is_escaped_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    for (case, args) in [
        ("an unknown command", vec!["\u{1b}]0;pwned\u{7}"]),
        (
            "a bad flag value",
            vec!["notes.search", "x", "--limit", "\u{1b}[2J"],
        ),
        (
            "bad --input JSON",
            vec!["notes.search", "--input", "{\"query\": \"\u{1b}[2J"],
        ),
        ("a validation error", vec!["notes.create", ""]),
    ] {
        let run = on_terminal(&db, &args);
        assert_eq!(
            run.code,
            Some(2),
            "{case}: {}",
            String::from_utf8_lossy(&run.output)
        );
        assert_inert(&run.output, case);
        fresh_command_succeeds(&db, case);
    }
}
