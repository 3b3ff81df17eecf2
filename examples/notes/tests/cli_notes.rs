//! The notes command line, driven from outside: every test runs a real
//! binary (Cargo builds them for this test target and sets
//! `CARGO_BIN_EXE_<name>`), feeds it argv, and checks stdout, stderr and
//! the exit code.
//!
//! `notes-testbed` is `notes` plus diagnostic tools that make the paths
//! the notes tools never take observable: every display kind, every event
//! channel, a duplex tool, `TOOL_NOT_FOUND` from dispatch, a handler that
//! must be dropped on Ctrl-C.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

const NOTES: &str = env!("CARGO_BIN_EXE_notes");
const TESTBED: &str = env!("CARGO_BIN_EXE_notes-testbed");

/// The golden `--help` of `notes.search`.
const GOLDEN_SEARCH_HELP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/golden/cli/notes.search.help.txt"
);

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn from(output: Output) -> Run {
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert!(
            !run.stderr.contains("panicked"),
            "the CLI panicked:\n{}",
            run.stderr
        );
        run
    }

    fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
}

/// A `notes-testbed` command with a clean environment: no per-user data
/// directory unless a test sets one.
fn notes() -> Command {
    clean(TESTBED)
}

fn clean(binary: &str) -> Command {
    let mut command = Command::new(binary);
    command
        .env_remove("XDG_DATA_HOME")
        .env_remove("HOME")
        .env_remove("NOTES_SAVED_SEARCHES")
        .stdin(Stdio::null());
    command
}

fn run(args: &[&str]) -> Run {
    Run::from(notes().args(args).output().expect("notes runs"))
}

/// A temporary directory with a database path in it.
struct Db {
    dir: tempfile::TempDir,
}

impl Db {
    fn new() -> Db {
        Db {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("notes.db")
    }

    fn arg(&self) -> String {
        self.path().to_string_lossy().into_owned()
    }

    /// `notes --db <this> args..`
    fn run(&self, args: &[&str]) -> Run {
        let db = self.arg();
        let mut argv = vec!["--db", db.as_str()];
        argv.extend_from_slice(args);
        run(&argv)
    }
}

#[test]
fn notes_tools_work_end_to_end_on_one_database() {
    let db = Db::new();
    let created = db.run(&[
        "notes.create",
        "Rust ownership",
        "--body",
        "Borrowing rules and lifetimes.",
        "--tags",
        "rust",
        "--tags",
        "lang",
    ]);
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert_eq!(created.stdout, "Created note 1: Rust ownership\n");
    assert_eq!(created.stderr, "");

    // --json: the result event carries the note as data.
    let second = db.run(&[
        "--json",
        "notes.create",
        "Groceries",
        "--body",
        "milk, rust remover",
    ]);
    assert_eq!(second.code, 0);
    let events = second.json_lines();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "result");
    assert_eq!(events[0]["data"]["id"], 2);
    assert_eq!(events[0]["data"]["tags"], json!([]));

    let got = db.run(&["notes.get", "1"]);
    assert_eq!(got.code, 0);
    assert!(
        got.stdout.starts_with(
            "# Rust ownership\n\nBorrowing rules and lifetimes.\n\n_note 1 · created "
        ),
        "{}",
        got.stdout
    );
    assert!(
        got.stdout.ends_with(" · tags: rust, lang_\n"),
        "{}",
        got.stdout
    );

    let hits = db.run(&["notes.search", "rust", "--limit", "5"]);
    assert_eq!(hits.code, 0);
    assert_eq!(
        hits.stdout,
        "   1  Rust ownership — Borrowing rules and lifetimes.\n   2  Groceries — milk, rust remover\n"
    );
    let one = db.run(&["search", "rust", "--limit", "1"]);
    assert_eq!(
        one.stdout,
        "   1  Rust ownership — Borrowing rules and lifetimes.\n"
    );

    let renamed = db.run(&["notes.rename", "2", "Shopping list"]);
    assert_eq!(renamed.code, 0);
    assert_eq!(renamed.stdout, "Renamed note 2 to \"Shopping list\"\n");

    let archived = db.run(&["notes.archive", "2"]);
    assert_eq!(archived.stdout, "Archived note 2: Shopping list\n");
    let again = db.run(&["notes.archive", "2"]);
    assert_eq!(again.stdout, "Note 2 was already archived\n");
    assert_eq!(
        db.run(&["notes.search", "rust"]).stdout,
        "   1  Rust ownership — Borrowing rules and lifetimes.\n"
    );
    let all = db.run(&["notes.search", "rust", "--include-archived"]);
    assert!(
        all.stdout
            .contains("   2  Shopping list (archived) — milk, rust remover\n"),
        "{}",
        all.stdout
    );

    let none = db.run(&["notes.search", "kiwi"]);
    assert_eq!(
        (none.code, none.stdout.as_str()),
        (0, "No notes match \"kiwi\".\n")
    );

    // Export: progress on stderr (lines, not a terminal), the document on stdout.
    let export = db.run(&["notes.export", "--include-archived"]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    assert!(
        export.stdout.starts_with("# Rust ownership\n"),
        "{}",
        export.stdout
    );
    assert!(
        export.stdout.contains("\n\n---\n\n# Shopping list\n"),
        "{}",
        export.stdout
    );
    assert_eq!(
        export.stderr,
        "[info] exporting 2 notes\n[progress] 50% exported 1/2\n[progress] 100% exported 2/2\n"
    );
    let export = db.run(&["notes.export", "--format", "json"]);
    let exported: Value = serde_json::from_str(&export.stdout).expect("pretty JSON on stdout");
    assert_eq!(exported.as_array().map(Vec::len), Some(1));
    assert_eq!(exported[0]["title"], "Rust ownership");

    // Values may start with a hyphen.
    let listy = db.run(&["notes.create", "Checklist", "--body", "- tag v1\n- publish"]);
    assert_eq!(
        listy.stdout, "Created note 3: Checklist\n",
        "{}",
        listy.stderr
    );
    assert!(db
        .run(&["notes.get", "3"])
        .stdout
        .contains("\n- tag v1\n- publish\n"));
    assert_eq!(db.run(&["notes.archive", "3"]).code, 0);
}

#[test]
fn db_option_goes_before_or_after_the_subcommand_and_memory_is_allowed() {
    let db = Db::new();
    let path = db.arg();
    let before = run(&["--db", &path, "notes.create", "Before"]);
    assert_eq!(before.code, 0, "{}", before.stderr);
    let after = run(&["notes.create", "After", "--db", &path]);
    assert_eq!(after.code, 0, "{}", after.stderr);
    let equals = format!("--db={path}");
    let hits = run(&["notes.search", "e", &equals]);
    assert_eq!(hits.stdout, "   2  After\n   1  Before\n");

    let memory = run(&["--db", ":memory:", "notes.create", "Gone soon"]);
    assert_eq!(
        (memory.code, memory.stdout.as_str()),
        (0, "Created note 1: Gone soon\n")
    );
    let empty = run(&["notes.search", "Gone", "--db", ":memory:"]);
    assert_eq!(empty.stdout, "No notes match \"Gone\".\n");
    assert!(!Path::new(":memory:").exists());
}

#[test]
fn the_default_database_is_per_user_and_only_created_when_used() {
    let home = tempfile::tempdir().unwrap();
    let xdg = home.path().join("xdg");
    let listed = Run::from(
        notes()
            .env("XDG_DATA_HOME", &xdg)
            .arg("list")
            .output()
            .unwrap(),
    );
    assert_eq!(listed.code, 0);
    assert!(!xdg.exists(), "`list` must not create the database");

    let created = Run::from(
        notes()
            .env("XDG_DATA_HOME", &xdg)
            .args(["notes.create", "Stored"])
            .output()
            .unwrap(),
    );
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert!(xdg.join("gonk-notes/notes.db").is_file());

    // Without XDG_DATA_HOME: ~/.local/share.
    let created = Run::from(
        notes()
            .env("HOME", home.path())
            .args(["notes.create", "At home"])
            .output()
            .unwrap(),
    );
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert!(home
        .path()
        .join(".local/share/gonk-notes/notes.db")
        .is_file());

    // Neither: a clear error that asks for --db.
    let nowhere = run(&["notes.create", "Nowhere"]);
    assert_eq!(nowhere.code, 1);
    assert!(
        nowhere.stderr.starts_with("Error [INTERNAL]: "),
        "{}",
        nowhere.stderr
    );
    assert!(
        nowhere.stderr.contains("pass --db PATH"),
        "{}",
        nowhere.stderr
    );
}

#[test]
fn flags_are_typed_by_the_schema() {
    let echoed = run(&[
        "diag.echo",
        "hi",
        "--count",
        "3",
        "--ratio",
        "0.5",
        "--loud",
        "--level",
        "high",
        "--items",
        "1",
        "--items",
        "2",
        "--extra",
        r#"{"a":[1]}"#,
    ]);
    assert_eq!(echoed.code, 0, "{}", echoed.stderr);
    let data: Value = serde_json::from_str(&echoed.stdout).unwrap();
    assert_eq!(
        data,
        json!({"text": "hi", "count": 3, "ratio": 0.5, "loud": true, "level": "high",
               "items": [1, 2], "extra": {"a": [1]}})
    );
    // `--flag=false`, numbers that look like integers, the text positional kept a string.
    let echoed = run(&["diag.echo", "42", "--loud=false", "--ratio", "2"]);
    let data: Value = serde_json::from_str(&echoed.stdout).unwrap();
    assert_eq!(data["text"], "42");
    assert_eq!(data["loud"], false);
    assert_eq!(data["ratio"], 2.0);

    // Typed flags reject text of the wrong type at the argv layer.
    let bad = run(&["diag.echo", "x", "--count", "three"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .contains("invalid value 'three' for '--count <INTEGER>': expected an integer"),
        "{}",
        bad.stderr
    );
    let bad = run(&["diag.echo", "x", "--level", "medium"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("[possible values: low, high]"),
        "{}",
        bad.stderr
    );
    let bad = run(&["diag.echo", "x", "--loud=perhaps"]);
    assert_eq!(bad.code, 2);
    let bad = run(&["diag.echo", "x", "--extra", "{nope"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("expected JSON"), "{}", bad.stderr);
}

#[test]
fn input_json_gives_the_whole_input_and_arguments_override_it() {
    let whole = run(&[
        "diag.echo",
        "--input",
        r#"{"text": "from json", "count": 1}"#,
    ]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    let data: Value = serde_json::from_str(&whole.stdout).unwrap();
    assert_eq!(
        (data["text"].clone(), data["count"].clone()),
        (json!("from json"), json!(1))
    );

    let both = run(&[
        "diag.echo",
        "--input",
        r#"{"text": "a", "count": 1}"#,
        "--count",
        "2",
        "b",
    ]);
    let data: Value = serde_json::from_str(&both.stdout).unwrap();
    assert_eq!(
        (data["text"].clone(), data["count"].clone()),
        (json!("b"), json!(2))
    );

    let mut child = notes()
        .args(["diag.echo", "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"text": "from stdin"}"#)
        .unwrap();
    let piped = Run::from(child.wait_with_output().unwrap());
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(
        piped.stdout.contains("\"text\": \"from stdin\""),
        "{}",
        piped.stdout
    );

    // Invalid JSON: exit 2 with serde_json's message.
    let invalid = run(&["diag.echo", "--input", "{\"text\": "]);
    assert_eq!(invalid.code, 2);
    assert_eq!(
        invalid.stderr,
        "Error: --input is not valid JSON: EOF while parsing a value at line 1 column 9\n"
    );
    // JSON without a required field: the schema says so (exit 2).
    let missing = run(&["notes.search", "--input", "{}", "--db", ":memory:"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing
            .stderr
            .contains("Error [INVALID_INPUT]: Input validation failed"),
        "{}",
        missing.stderr
    );
    assert!(
        missing.stderr.contains("\"query\" is a required property"),
        "{}",
        missing.stderr
    );
}

#[test]
fn exit_codes_follow_the_outcome() {
    let mem = ["--db", ":memory:"];
    let with_mem = |args: &[&str]| {
        let mut argv = mem.to_vec();
        argv.extend_from_slice(args);
        run(&argv)
    };

    // 2: INVALID_INPUT from dispatch (schema constraints), naming the field.
    let short = with_mem(&["notes.search", ""]);
    assert_eq!(short.code, 2);
    assert_eq!(
        short.stderr,
        "Error [INVALID_INPUT]: Input validation failed\n  /query: \"\" is shorter than 1 character\n"
    );
    assert_eq!(short.stdout, "");
    let big = with_mem(&["notes.search", "x", "--limit", "99"]);
    assert_eq!(big.code, 2);
    assert!(
        big.stderr
            .contains("/limit: 99 is greater than the maximum of 20"),
        "{}",
        big.stderr
    );

    // A negative id is a number (not a flag), and the schema's minimum rejects it.
    let negative = with_mem(&["notes.get", "-1"]);
    assert_eq!(negative.code, 2);
    assert!(
        negative
            .stderr
            .contains("/id: -1 is less than the minimum of 1"),
        "{}",
        negative.stderr
    );

    // 2: argv errors.
    for argv in [
        &["notes.search"][..],
        &["notes.search", "x", "--limit", "many"],
        &["notes.search", "x", "--nope"],
        &["notes.get", "1", "2"],
        &["--nope"],
    ] {
        let failed = with_mem(argv);
        assert_eq!(failed.code, 2, "{argv:?}: {}", failed.stderr);
        assert!(
            failed.stderr.starts_with("error: "),
            "{argv:?}: {}",
            failed.stderr
        );
    }
    // 2: an unknown tool at the argv layer.
    let unknown = with_mem(&["notes.serch", "x"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown
            .stderr
            .contains("unrecognized subcommand 'notes.serch'"),
        "{}",
        unknown.stderr
    );
    assert!(
        unknown.stderr.contains("notes.search"),
        "a suggestion: {}",
        unknown.stderr
    );
    // 2: no subcommand prints the help on stderr.
    let bare = run(&[]);
    assert_eq!(bare.code, 2);
    assert!(
        bare.stderr.contains("Usage: notes [OPTIONS] <COMMAND>"),
        "{}",
        bare.stderr
    );

    // 127: TOOL_NOT_FOUND reported by dispatch (a nested call to a missing tool).
    let missing = run(&["diag.invoke", "no.such.tool"]);
    assert_eq!(missing.code, 127);
    assert_eq!(
        missing.stderr,
        "Error [TOOL_NOT_FOUND]: No such tool: no.such.tool\n"
    );

    // 1: any other error, with its details.
    let absent = with_mem(&["notes.get", "7"]);
    assert_eq!(absent.code, 1);
    assert_eq!(
        absent.stderr,
        "Error [NOT_FOUND]: No note with id 7; `notes notes.search <text>` finds ids\n{\n  \"id\": 7\n}\n"
    );
    let failed = run(&["diag.fail", "--code", "QUOTA"]);
    assert_eq!(failed.code, 1);
    assert!(failed
        .stderr
        .starts_with("Error [QUOTA]: the diagnostic tool failed as asked\n"));

    // 3: a duplex tool is refused.
    let duplex = run(&["diag.duplex"]);
    assert_eq!(duplex.code, 3);
    assert!(
        duplex.stderr.contains("tool diag.duplex is duplex"),
        "{}",
        duplex.stderr
    );

    // 0: ok, help and version.
    assert_eq!(with_mem(&["notes.create", "ok"]).code, 0);
    let help = run(&["--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("Commands:"));
    assert!(
        !help.stdout.contains("diag.duplex"),
        "duplex tools are hidden"
    );
    let version = run(&["--version"]);
    assert_eq!(
        (version.code, version.stdout.as_str()),
        (0, concat!("notes ", env!("CARGO_PKG_VERSION"), "\n"))
    );
}

#[test]
fn events_go_to_their_channels() {
    let human = run(&["diag.events"]);
    assert_eq!(human.code, 0);
    // stdout: data chunks as JSON lines, then the result's display.
    assert_eq!(human.stdout, "{\"chunk\":1}\n{\"chunk\":2}\ndone\n");
    // stderr: logs (context logger and stream) and progress (notify and stream), in order.
    assert_eq!(
        human.stderr,
        "[warn] from the context logger\n[progress] 25% notified\n[debug] debug line\n[info] info line\n[progress] 50% halfway\n"
    );

    // --json: every event, one line each, on stdout; nothing on stderr.
    let json = run(&["diag.events", "--json"]);
    assert_eq!(json.code, 0);
    assert_eq!(json.stderr, "");
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
    let error = run(&["--json", "diag.invoke", "gone"]);
    assert_eq!(error.code, 127);
    assert_eq!(
        error.json_lines(),
        [json!({"type": "error", "code": "TOOL_NOT_FOUND", "message": "No such tool: gone"})]
    );
}

#[test]
fn displays_render_per_block_kind() {
    let cases = [
        ("text", "plain text\n"),
        ("markdown", "**bold** markdown\n"),
        ("code", "```rust\nfn main() {}\n```\n"),
        ("json", "{\n  \"answer\": 42\n}\n"),
        ("link", "Docs: https://example.invalid/docs\n"),
        ("image", "[image image/png — a chart]\n"),
        ("audio", "[audio audio/wav]\n"),
        ("resource", "resource text\n"),
    ];
    for (kind, expected) in cases {
        let shown = run(&["diag.display", kind]);
        assert_eq!((shown.code, shown.stdout.as_str()), (0, expected), "{kind}");
    }
    let several = run(&["diag.display", "text", "link"]);
    assert_eq!(
        several.stdout,
        "plain text\nDocs: https://example.invalid/docs\n"
    );
    // No display: the data, as pretty JSON.
    let plain = run(&["diag.display"]);
    assert_eq!(plain.stdout, "{\n  \"blocks\": 0\n}\n");
}

#[test]
fn list_groups_tools_by_category_with_uncategorized_last() {
    let listed = run(&["list"]);
    assert_eq!(listed.code, 0);
    let headings: Vec<&str> = listed.stdout.lines().filter(|l| l.ends_with(':')).collect();
    assert_eq!(headings, ["diagnostics:", "notes:", "(uncategorized):"]);
    assert!(listed.stdout.ends_with("(uncategorized):\n  diag.echo      Return the input as it arrived, after argv coercion and validation.\n"), "{}", listed.stdout);
    assert!(
        listed
            .stdout
            .contains("\n  notes.search   Search notes by text"),
        "{}",
        listed.stdout
    );
    assert!(
        !listed.stdout.contains("diag.duplex"),
        "duplex tools are not listed"
    );

    let json = run(&["list", "--json"]);
    let names: Vec<String> = json
        .json_lines()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.first().map(String::as_str), Some("diag.sleep"));
    assert_eq!(names.last().map(String::as_str), Some("diag.echo"));
    assert!(names.contains(&"notes.export".to_owned()));

    // Without diagnostics, only the notes tools.
    let plain = Run::from(clean(NOTES).arg("list").output().unwrap());
    assert!(
        plain.stdout.starts_with("notes:\n  notes.create"),
        "{}",
        plain.stdout
    );
    assert!(!plain.stdout.contains("diag."));
}

#[test]
fn tool_help_matches_the_golden_file() {
    // With and without diagnostics: the help of a notes tool does not
    // depend on them, which running both binaries shows.
    for binary in [NOTES, TESTBED] {
        let mut command = clean(binary);
        let help = Run::from(command.args(["notes.search", "--help"]).output().unwrap());
        assert_eq!(help.code, 0);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(GOLDEN_SEARCH_HELP, &help.stdout).unwrap();
        }
        let golden = std::fs::read_to_string(GOLDEN_SEARCH_HELP)
            .expect("golden file (run with UPDATE_GOLDEN=1 to create it)");
        assert_eq!(
            help.stdout, golden,
            "help changed; rerun with UPDATE_GOLDEN=1 if intended"
        );
    }
    // `-h`, `help <tool>` and an alias give the same text.
    let short = run(&["notes.search", "-h"]);
    assert_eq!(
        short.stdout,
        std::fs::read_to_string(GOLDEN_SEARCH_HELP).unwrap()
    );
    let via_help = run(&["help", "notes.search"]);
    assert_eq!(via_help.stdout, short.stdout);
}

#[test]
fn hostile_argv_gets_errors_not_panics() {
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    // Under Linux's 128 KiB limit for one argument.
    let long = "x".repeat(100_000);
    let cases: Vec<Vec<String>> = vec![
        vec!["diag.echo".into(), "--input".into(), deep],
        vec!["diag.echo".into(), long.clone()],
        vec![
            "diag.echo".into(),
            "--count".into(),
            "99999999999999999999999".into(),
        ],
        vec![
            "diag.echo".into(),
            "x".into(),
            "--ratio".into(),
            "1e999".into(),
        ],
        vec!["diag.echo".into(), "x".into(), "--items".into(), "".into()],
        vec!["diag.echo".into(), "--".into(), "--count".into()],
        vec!["diag.echo".into(), "x".into(), "--count=".into()],
        vec![
            "notes.search".into(),
            "\u{7f}\u{1b}[2J".into(),
            "--db".into(),
            ":memory:".into(),
        ],
        vec!["diag.display".into(), "-".into()],
        vec!["--db".into()],
        vec!["--json".into(), "--json".into(), "list".into()],
        vec!["help".into(), "no-such-tool".into()],
        vec![long],
    ];
    for args in cases {
        let done = Run::from(notes().args(&args).output().unwrap());
        assert!(
            matches!(done.code, 0..=2),
            "{:?}: exit {} {}",
            args.iter()
                .map(|a| a.chars().take(20).collect::<String>())
                .collect::<Vec<_>>(),
            done.code,
            done.stderr
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"caf\xe9");
        let done = Run::from(notes().arg("diag.echo").arg(bad).output().unwrap());
        assert_eq!(done.code, 2, "{}", done.stderr);
        assert!(done.stderr.contains("invalid UTF-8"), "{}", done.stderr);
    }
}

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

#[cfg(unix)]
fn interrupt(pid: u32) {
    let pid = libc::pid_t::try_from(pid).expect("pid fits");
    // SAFETY: kill(2) with a pid this test spawned and a valid signal number.
    let rc = unsafe { libc::kill(pid, libc::SIGINT) };
    assert_eq!(rc, 0, "kill(SIGINT) failed");
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_the_running_tool_and_its_handler_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let mut child = notes()
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
    let done = run(&[
        "diag.sleep",
        "--ms",
        "1",
        "--marker",
        marker.to_str().unwrap(),
    ]);
    assert_eq!(done.code, 0);
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "completed");
}

#[cfg(unix)]
#[test]
fn a_second_ctrl_c_exits_at_once_when_the_handler_does_not_yield() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let mut child = notes()
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
        notes()
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
    let mut child = notes()
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

#[test]
fn saved_searches_are_tools_made_at_run_time() {
    let db = Db::new();
    for title in ["Release checklist", "Rust ownership"] {
        assert_eq!(db.run(&["notes.create", title]).code, 0);
    }
    let saved = |spec: &str, args: &[&str]| {
        Run::from(
            clean(NOTES)
                .env("NOTES_SAVED_SEARCHES", spec)
                .arg("--db")
                .arg(db.path())
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let spec = "release=release; rust=rust";
    let hits = saved(spec, &["saved.release"]);
    assert_eq!(
        (hits.code, hits.stdout.as_str()),
        (0, "   1  Release checklist\n"),
        "{}",
        hits.stderr
    );
    let listed = saved(spec, &["list"]);
    assert!(
        listed.stdout.contains(
            "saved searches:\n  saved.release  Saved search: the notes that match \"release\".\n"
        ),
        "{}",
        listed.stdout
    );

    // A malformed entry, or a name that is no tool name: a clear error at start-up.
    let malformed = saved("release", &["list"]);
    assert_eq!(malformed.code, 1);
    assert_eq!(
        malformed.stderr,
        "Error: NOTES_SAVED_SEARCHES: `release` is not `name=query` (entries are separated by `;`)\n"
    );
    let unnamed = saved("my search=x", &["list"]);
    assert_eq!(unnamed.code, 1);
    assert!(
        unnamed
            .stderr
            .starts_with("Error: the saved searches could not be registered: "),
        "{}",
        unnamed.stderr
    );
    assert!(
        unnamed.stderr.contains("saved.my search"),
        "{}",
        unnamed.stderr
    );
}
