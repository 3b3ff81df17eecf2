//! What a call gives back: exit codes that follow the outcome, events on
//! their channels (and as JSON lines), displays rendered per block kind, a
//! live progress bar on a terminal, and a closed stdout that is no panic.

use std::io::Read;
use std::process::Stdio;

use serde_json::json;

use super::Out::{All, Any, Has, Is, Starts};
use super::{check_all, clean, fails, notes, ok, run_on, testbed, Case, Db, Run, MEMORY};

#[test]
fn exit_codes_follow_the_outcome() {
    fn argv_error<'a>(args: &[&'a str]) -> Case<'a> {
        fails(args, 2, Starts("error: "))
    }
    // The notes tools, on a throwaway database.
    check_all(
        notes(),
        MEMORY,
        &[
            // 2: INVALID_INPUT from dispatch (schema constraints), naming the field.
            fails(
                &["notes.search", ""],
                2,
                Is("Error [INVALID_INPUT]: Input validation failed\n  /query: \"\" is shorter than 1 character\n"),
            )
            .stdout(Is("")),
            fails(
                &["notes.search", "x", "--limit", "99"],
                2,
                Has("/limit: 99 is greater than the maximum of 20"),
            ),
            // A negative id is a number (not a flag), and the schema's minimum rejects it.
            fails(
                &["notes.get", "-1"],
                2,
                Has("/id: -1 is less than the minimum of 1"),
            ),
            // 2: argv errors.
            argv_error(&["notes.search"]),
            argv_error(&["notes.search", "x", "--limit", "many"]),
            argv_error(&["notes.search", "x", "--nope"]),
            argv_error(&["notes.get", "1", "2"]),
            argv_error(&["--nope"]),
            // 2: an unknown tool at the argv layer, in the words every
            // surface uses, with a suggestion.
            fails(
                &["notes.serch", "x"],
                2,
                All(vec![
                    Starts("Unknown tool: notes.serch\n"),
                    Has("did you mean `notes.search`?"),
                    Has("`notes list` shows the tools"),
                ]),
            ),
            fails(&["ghost"], 2, Starts("Unknown tool: ghost\n")),
            // 1: any other error, with its details.
            fails(
                &["notes.get", "7"],
                1,
                Is("Error [NOT_FOUND]: No note with id 7; `notes notes.search <text>` finds ids\n{\n  \"id\": 7\n}\n"),
            ),
            // 0: ok.
            ok(&["notes.create", "ok"], Any),
        ],
    );
    check_all(
        testbed(),
        &[],
        &[
            // 0: no subcommand prints the help on stdout (asking for it is no mistake).
            ok(&[], Has("Usage: notes [OPTIONS] <COMMAND>")).stderr(Is("")),
            // 127: TOOL_NOT_FOUND reported by dispatch (a nested call to a missing tool).
            fails(
                &["diag.invoke", "no.such.tool"],
                127,
                Is("Error [TOOL_NOT_FOUND]: No such tool: no.such.tool\n"),
            ),
            // 1: a tool's own error code.
            fails(
                &["diag.fail", "--code", "QUOTA"],
                1,
                Starts("Error [QUOTA]: the diagnostic tool failed as asked\n"),
            ),
            // 3: a duplex tool is refused.
            fails(&["diag.duplex"], 3, Has("tool diag.duplex is duplex")),
            // 0: help (duplex tools hidden) and version.
            ok(&["--help"], Has("Commands:")),
            // The version alone, for scripts; `-v` too.
            ok(&["--version"], Is(concat!(env!("CARGO_PKG_VERSION"), "\n"))),
            ok(&["-v"], Is(concat!(env!("CARGO_PKG_VERSION"), "\n"))),
        ],
    );
    let help = run_on(testbed(), &["--help"]);
    assert!(
        !help.stdout.contains("diag.duplex"),
        "duplex tools are hidden"
    );
}

#[test]
fn events_go_to_their_channels() {
    // stdout: data chunks as JSON lines, then the result's display.
    // stderr: logs (context logger and stream) and progress (notify and
    // stream), in order; a percent is whole, as the bar shows it (49.6 is 50).
    ok(&["diag.events"], Is("{\"chunk\":1}\n{\"chunk\":2}\ndone\n"))
        .stderr(Is("[warn] from the context logger\n[progress] 25% notified\n[debug] debug line\n[info] info line\n[progress] 50% halfway\n"))
        .check(testbed(), &[]);

    // --json: every event, one line each, on stdout; nothing on stderr.
    let json = ok(&["diag.events", "--json"], Any)
        .stderr(Is(""))
        .check(testbed(), &[]);
    let kinds: Vec<String> = json
        .json_lines()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds,
        ["log", "progress", "log", "log", "progress", "data", "data", "result"]
    );
    assert_eq!(
        json.json_lines()[7],
        json!({"type": "result", "data": {"chunks": 2}, "display": "done"})
    );

    // --json errors are events too, and keep their exit code.
    let error = fails(&["--json", "diag.invoke", "gone"], 127, Any).check(testbed(), &[]);
    assert_eq!(
        error.json_lines(),
        [json!({"type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: gone"})]
    );
}

#[test]
fn displays_render_per_block_kind() {
    check_all(
        testbed(),
        &["diag.display"],
        &[
            ok(&["text"], Is("plain text\n")),
            ok(&["markdown"], Is("**bold** markdown\n")),
            ok(&["code"], Is("```rust\nfn main() {}\n```\n")),
            ok(&["json"], Is("{\n  \"answer\": 42\n}\n")),
            ok(&["link"], Is("Docs: https://example.invalid/docs\n")),
            ok(&["image"], Is("[image image/png — a chart]\n")),
            ok(&["audio"], Is("[audio audio/wav]\n")),
            ok(&["resource"], Is("resource text\n")),
            ok(
                &["text", "link"],
                Is("plain text\nDocs: https://example.invalid/docs\n"),
            ),
            // No display: the data, as compact JSON (one line to pipe on).
            ok(&[], Is("{\"blocks\":0}\n")),
        ],
    );
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe(2) fills two fds we then own.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both fds are open and owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read); // every write to the pipe now fails with EPIPE
    let done = Run::from(
        clean(notes())
            .args(["list"])
            .stdout(Stdio::from(write))
            .output()
            .unwrap(),
    );
    assert_eq!(done.code, 0, "{}", done.stderr);
}

/// A pseudo-terminal pair (80x24); the child gets the slave as stderr.
#[cfg(target_os = "linux")]
fn pty() -> (std::fs::File, std::os::fd::OwnedFd) {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let size = libc::winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty(3) writes two fds; name and termios may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty failed");
    // SAFETY: both fds were just opened and are owned by nobody else.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    }
}

#[cfg(target_os = "linux")]
#[test]
fn progress_is_a_live_bar_on_a_terminal_and_is_cleared_at_the_end() {
    let db = Db::new();
    for title in ["one", "two", "three"] {
        assert_eq!(db.run(&["notes.create", title]).code, 0);
    }
    let (mut master, slave) = pty();
    let mut child = clean(notes())
        .args(["--db", &db.arg(), "notes.export", "--delay-ms", "150"])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        // Reading the master ends with EIO once the child closed the slave.
        while let Ok(n) = master.read(&mut buffer) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buffer[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    drop(child);
    let terminal = reader.join().unwrap();
    assert_eq!(status.code(), Some(0), "{terminal}");
    assert!(stdout.starts_with("# one\n"), "{stdout}");
    // A bar, drawn with terminal control sequences, not `[progress]` lines.
    assert!(!terminal.contains("[progress]"), "{terminal:?}");
    assert!(terminal.contains("exported"), "{terminal:?}");
    assert!(terminal.contains('%'), "{terminal:?}");
    assert!(
        terminal.contains("\u{1b}["),
        "no control sequences: {terminal:?}"
    );
    // The last thing written clears the bar's line.
    assert!(
        terminal.ends_with("\r\u{1b}[2K"),
        "bar not cleared: {terminal:?}"
    );
}
