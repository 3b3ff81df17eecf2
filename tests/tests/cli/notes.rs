//! The notes command line, driven from outside: every test runs a real
//! binary (`notes` or `notes-testbed`, built once per test process), feeds
//! it argv, and checks stdout, stderr and the exit code. Most tests are
//! tables of [`Case`]s run in order.
//!
//! `notes-testbed` is `notes` plus diagnostic tools that make the paths
//! the notes tools never take observable: every display kind, every event
//! channel, a duplex tool, `TOOL_NOT_FOUND` from dispatch, a handler that
//! must be dropped on Ctrl-C.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use gonk_tools_tests::golden;
use gonk_tools_tests::workspace::bin;
use serde_json::{json, Value};

/// The path of workspace binary `name`, as text.
fn path_of(name: &str) -> String {
    let path = bin(name).into_os_string().into_string();
    path.expect("a UTF-8 path")
}

/// The `notes` binary.
fn notes() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| path_of("notes"))
}

/// `notes-testbed`: `notes` plus the diagnostic tools.
fn testbed() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| path_of("notes-testbed"))
}

/// The outcome of one run.
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

/// `binary` with a clean environment: no per-user data directory, no
/// saved searches, no stdin, unless a test sets them.
fn clean(binary: &str) -> Command {
    let mut command = Command::new(binary);
    command
        .env_remove("XDG_DATA_HOME")
        .env_remove("HOME")
        .env_remove("NOTES_SAVED_SEARCHES")
        .stdin(Stdio::null());
    command
}

/// Runs `binary` with `args` in a clean environment.
fn run_on(binary: &str, args: &[&str]) -> Run {
    Run::from(clean(binary).args(args).output().expect("the binary runs"))
}

/// What one output stream of a run must hold.
enum Out<'a> {
    /// Anything.
    Any,
    /// Exactly this text.
    Is(&'a str),
    /// This text somewhere.
    Has(&'a str),
    /// Starts with this text.
    Starts(&'a str),
    /// Ends with this text.
    Ends(&'a str),
    /// One JSON document equal to this value.
    Json(Value),
    /// All of these.
    All(Vec<Out<'a>>),
}

use Out::{All, Any, Ends, Has, Is, Starts};

impl Out<'_> {
    fn check(&self, stream: &str, actual: &str, args: &[&str]) {
        let ok = match self {
            Any => true,
            Is(text) => actual == *text,
            Has(text) => actual.contains(text),
            Starts(text) => actual.starts_with(text),
            Ends(text) => actual.ends_with(text),
            Out::Json(value) => serde_json::from_str::<Value>(actual).ok().as_ref() == Some(value),
            All(outs) => {
                outs.iter().for_each(|out| out.check(stream, actual, args));
                true
            }
        };
        assert!(
            ok,
            "{args:?}: {stream} does not match {self:?}:\n{actual}",
            args = shorten(args)
        );
    }
}

impl std::fmt::Debug for Out<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Any => write!(f, "anything"),
            Is(text) => write!(f, "exactly {text:?}"),
            Has(text) => write!(f, "containing {text:?}"),
            Starts(text) => write!(f, "starting with {text:?}"),
            Ends(text) => write!(f, "ending with {text:?}"),
            Out::Json(value) => write!(f, "the JSON {value}"),
            All(outs) => f.debug_list().entries(outs).finish(),
        }
    }
}

/// The first 20 characters of each argument (for messages about long argv).
fn shorten(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.chars().take(20).collect()).collect()
}

/// One run: argv in; exit code, stdout and stderr expected.
struct Case<'a> {
    args: Vec<&'a str>,
    code: i32,
    stdout: Out<'a>,
    stderr: Out<'a>,
}

/// Exit 0 with `stdout`; stderr anything.
fn ok<'a>(args: &[&'a str], stdout: Out<'a>) -> Case<'a> {
    Case {
        args: args.to_vec(),
        code: 0,
        stdout,
        stderr: Any,
    }
}

/// Exit `code` with `stderr`; stdout anything.
fn fails<'a>(args: &[&'a str], code: i32, stderr: Out<'a>) -> Case<'a> {
    Case {
        args: args.to_vec(),
        code,
        stdout: Any,
        stderr,
    }
}

impl<'a> Case<'a> {
    fn stdout(mut self, stdout: Out<'a>) -> Self {
        self.stdout = stdout;
        self
    }

    fn stderr(mut self, stderr: Out<'a>) -> Self {
        self.stderr = stderr;
        self
    }

    /// Runs `binary` with `prefix` then this case's argv, and checks it.
    fn check(&self, binary: &str, prefix: &[&str]) -> Run {
        let args: Vec<&str> = prefix.iter().chain(&self.args).copied().collect();
        let done = run_on(binary, &args);
        assert_eq!(
            done.code,
            self.code,
            "{:?}: exit code\nstdout: {}\nstderr: {}",
            shorten(&args),
            done.stdout,
            done.stderr
        );
        self.stdout.check("stdout", &done.stdout, &args);
        self.stderr.check("stderr", &done.stderr, &args);
        done
    }
}

/// Checks `cases` in order, each a run of `binary` with `prefix` first.
fn check_all(binary: &str, prefix: &[&str], cases: &[Case<'_>]) {
    for case in cases {
        case.check(binary, prefix);
    }
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
        run_on(notes(), &argv)
    }

    /// Checks `cases` in order against `notes --db <this>`.
    fn check_all(&self, cases: &[Case<'_>]) {
        check_all(notes(), &["--db", &self.arg()], cases);
    }
}

/// `--db :memory:`: a throwaway database per run.
const MEMORY: &[&str] = &["--db", ":memory:"];

#[test]
fn notes_tools_work_end_to_end_on_one_database() {
    let db = Db::new();
    db.check_all(&[ok(
        &[
            "notes.create",
            "Rust ownership",
            "--body",
            "Borrowing rules and lifetimes.",
            "--tags",
            "rust",
            "--tags",
            "lang",
        ],
        Is("Created note 1: Rust ownership\n"),
    )
    .stderr(Is(""))]);

    // --json: the result event carries the note as data.
    let second = ok(
        &[
            "--json",
            "notes.create",
            "Groceries",
            "--body",
            "milk, rust remover",
        ],
        Any,
    )
    .check(notes(), &["--db", &db.arg()]);
    let events = second.json_lines();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "result");
    assert_eq!(events[0]["data"]["id"], 2);
    assert_eq!(events[0]["data"]["tags"], json!([]));

    db.check_all(&[
        ok(
            &["notes.get", "1"],
            All(vec![
                Starts("# Rust ownership\n\nBorrowing rules and lifetimes.\n\n_note 1 · created "),
                Ends(" · tags: rust, lang_\n"),
            ]),
        ),
        ok(
            &["notes.search", "rust", "--limit", "5"],
            Is("   1  Rust ownership — Borrowing rules and lifetimes.\n   2  Groceries — milk, rust remover\n"),
        ),
        // The alias.
        ok(
            &["search", "rust", "--limit", "1"],
            Is("   1  Rust ownership — Borrowing rules and lifetimes.\n"),
        ),
        ok(
            &["notes.rename", "2", "Shopping list"],
            Is("Renamed note 2 to \"Shopping list\"\n"),
        ),
        ok(
            &["notes.archive", "2"],
            Is("Archived note 2: Shopping list\n"),
        ),
        ok(&["notes.archive", "2"], Is("Note 2 was already archived\n")),
        ok(
            &["notes.search", "rust"],
            Is("   1  Rust ownership — Borrowing rules and lifetimes.\n"),
        ),
        ok(
            &["notes.search", "rust", "--include-archived"],
            Has("   2  Shopping list (archived) — milk, rust remover\n"),
        ),
        ok(&["notes.search", "kiwi"], Is("No notes match \"kiwi\".\n")),
        // Export: progress on stderr (lines, not a terminal), the document on stdout.
        ok(
            &["notes.export", "--include-archived"],
            All(vec![
                Starts("# Rust ownership\n"),
                Has("\n\n---\n\n# Shopping list\n"),
            ]),
        )
        .stderr(Is(
            "[info] exporting 2 notes\n[progress] 50% exported 1/2\n[progress] 100% exported 2/2\n",
        )),
    ]);
    let export = db.run(&["notes.export", "--format", "json"]);
    let exported: Value = serde_json::from_str(&export.stdout).expect("pretty JSON on stdout");
    assert_eq!(exported.as_array().map(Vec::len), Some(1));
    assert_eq!(exported[0]["title"], "Rust ownership");

    // Values may start with a hyphen.
    db.check_all(&[
        ok(
            &["notes.create", "Checklist", "--body", "- tag v1\n- publish"],
            Is("Created note 3: Checklist\n"),
        ),
        ok(&["notes.get", "3"], Has("\n- tag v1\n- publish\n")),
        ok(&["notes.archive", "3"], Any),
    ]);
}

#[test]
fn db_option_goes_before_or_after_the_subcommand_and_memory_is_allowed() {
    let db = Db::new();
    let path = db.arg();
    let equals = format!("--db={path}");
    check_all(
        notes(),
        &[],
        &[
            ok(&["--db", &path, "notes.create", "Before"], Any),
            ok(&["notes.create", "After", "--db", &path], Any),
            ok(
                &["notes.search", "e", &equals],
                Is("   2  After\n   1  Before\n"),
            ),
            ok(
                &["--db", ":memory:", "notes.create", "Gone soon"],
                Is("Created note 1: Gone soon\n"),
            ),
            ok(
                &["notes.search", "Gone", "--db", ":memory:"],
                Is("No notes match \"Gone\".\n"),
            ),
        ],
    );
    assert!(!Path::new(":memory:").exists());
}

#[test]
fn the_default_database_is_per_user_and_only_created_when_used() {
    let home = tempfile::tempdir().unwrap();
    let xdg = home.path().join("xdg");
    let with_env = |key: &str, value: &Path, args: &[&str]| {
        Run::from(clean(notes()).env(key, value).args(args).output().unwrap())
    };

    let listed = with_env("XDG_DATA_HOME", &xdg, &["list"]);
    assert_eq!(listed.code, 0);
    assert!(!xdg.exists(), "`list` must not create the database");

    let created = with_env("XDG_DATA_HOME", &xdg, &["notes.create", "Stored"]);
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert!(xdg.join("gonk-notes/notes.db").is_file());

    // Without XDG_DATA_HOME: ~/.local/share.
    let created = with_env("HOME", home.path(), &["notes.create", "At home"]);
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert!(home
        .path()
        .join(".local/share/gonk-notes/notes.db")
        .is_file());

    // Neither: a clear error that asks for --db.
    fails(
        &["notes.create", "Nowhere"],
        1,
        All(vec![Starts("Error [INTERNAL]: "), Has("pass --db PATH")]),
    )
    .check(notes(), &[]);
}

#[test]
fn flags_are_typed_by_the_schema() {
    check_all(
        testbed(),
        &[],
        &[
            ok(
                &[
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
                ],
                Out::Json(json!({"text": "hi", "count": 3, "ratio": 0.5, "loud": true,
                    "level": "high", "items": [1, 2], "extra": {"a": [1]}})),
            )
            .stderr(Is("")),
            // `--flag=false`, numbers that look like integers, the text positional kept a string.
            ok(
                &["diag.echo", "42", "--loud=false", "--ratio", "2"],
                Out::Json(
                    json!({"text": "42", "count": null, "ratio": 2.0, "loud": false,
                    "level": null, "items": [], "extra": null}),
                ),
            ),
            // Typed flags reject text of the wrong type at the argv layer.
            fails(
                &["diag.echo", "x", "--count", "three"],
                2,
                Has("invalid value 'three' for '--count <INTEGER>': expected an integer"),
            ),
            fails(
                &["diag.echo", "x", "--level", "medium"],
                2,
                Has("[possible values: low, high]"),
            ),
            fails(&["diag.echo", "x", "--loud=perhaps"], 2, Any),
            fails(
                &["diag.echo", "x", "--extra", "{nope"],
                2,
                Has("expected JSON"),
            ),
        ],
    );
}

#[test]
fn input_json_gives_the_whole_input_and_arguments_override_it() {
    check_all(
        testbed(),
        &[],
        &[
            ok(
                &["diag.echo", "--input", r#"{"text": "from json", "count": 1}"#],
                Out::Json(json!({"text": "from json", "count": 1, "ratio": null, "loud": false,
                    "level": null, "items": [], "extra": null})),
            ),
            ok(
                &["diag.echo", "--input", r#"{"text": "a", "count": 1}"#, "--count", "2", "b"],
                Out::Json(json!({"text": "b", "count": 2, "ratio": null, "loud": false,
                    "level": null, "items": [], "extra": null})),
            ),
            // Invalid JSON: exit 2 with serde_json's message.
            fails(
                &["diag.echo", "--input", "{\"text\": "],
                2,
                Is("Error: --input is not valid JSON: EOF while parsing a value at line 1 column 9\n"),
            ),
            // JSON without a required field: the schema says so (exit 2).
            fails(
                &["notes.search", "--input", "{}", "--db", ":memory:"],
                2,
                All(vec![
                    Has("Error [INVALID_INPUT]: Input validation failed"),
                    Has("\"query\" is a required property"),
                ]),
            ),
        ],
    );

    // `--input -` reads the input from stdin.
    let mut child = clean(testbed())
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
}

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
            // 2: an unknown tool at the argv layer, with a suggestion.
            fails(
                &["notes.serch", "x"],
                2,
                All(vec![
                    Has("unrecognized subcommand 'notes.serch'"),
                    Has("notes.search"),
                ]),
            ),
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
            // 2: no subcommand prints the help on stderr.
            fails(&[], 2, Has("Usage: notes [OPTIONS] <COMMAND>")),
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
            ok(
                &["--version"],
                Is(concat!("notes ", env!("CARGO_PKG_VERSION"), "\n")),
            ),
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
    // stream), in order.
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
            // No display: the data, as pretty JSON.
            ok(&[], Is("{\n  \"blocks\": 0\n}\n")),
        ],
    );
}

#[test]
fn list_groups_tools_by_category_with_uncategorized_last() {
    let listed = ok(
        &["list"],
        All(vec![
            Ends("(uncategorized):\n  diag.echo          Return the input as it arrived, after argv coercion and validation.\n"),
            Has("\n  notes.search       Search notes by text"),
        ]),
    )
    .check(testbed(), &[]);
    let headings: Vec<&str> = listed.stdout.lines().filter(|l| l.ends_with(':')).collect();
    assert_eq!(
        headings,
        ["diagnostics:", "jobs:", "notes:", "(uncategorized):"]
    );
    assert!(
        !listed.stdout.contains("diag.duplex"),
        "duplex tools are not listed"
    );

    let json = run_on(testbed(), &["list", "--json"]);
    let names: Vec<String> = json
        .json_lines()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.first().map(String::as_str), Some("diag.sleep"));
    assert_eq!(names.last().map(String::as_str), Some("diag.echo"));
    assert!(names.contains(&"notes.export".to_owned()));

    // The notes binary: only the notes tools.
    let plain = ok(
        &["list"],
        All(vec![
            Starts("jobs:\n  jobs.status"),
            Has("\n\nnotes:\n  notes.create"),
        ]),
    )
    .check(notes(), &[]);
    assert!(!plain.stdout.contains("diag."));
}

#[test]
fn tool_help_matches_the_golden_file() {
    // With and without diagnostics: the help of a notes tool does not
    // depend on them, which running both binaries shows.
    for binary in [notes(), testbed()] {
        let help = run_on(binary, &["notes.search", "--help"]);
        assert_eq!(help.code, 0);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(golden::path("cli/notes.search.help.txt"), &help.stdout).unwrap();
        }
        let golden = std::fs::read_to_string(golden::path("cli/notes.search.help.txt"))
            .expect("golden file (run with UPDATE_GOLDEN=1 to create it)");
        assert_eq!(
            help.stdout, golden,
            "help changed; rerun with UPDATE_GOLDEN=1 if intended"
        );
    }
    // `-h`, `help <tool>` and an alias give the same text.
    let golden = std::fs::read_to_string(golden::path("cli/notes.search.help.txt")).unwrap();
    check_all(
        notes(),
        &[],
        &[
            ok(&["notes.search", "-h"], Is(&golden)),
            ok(&["help", "notes.search"], Is(&golden)),
            ok(&["search", "--help"], Is(&golden)),
        ],
    );
}

#[test]
fn hostile_argv_gets_errors_not_panics() {
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    // Under Linux's 128 KiB limit for one argument.
    let long = "x".repeat(100_000);
    let cases: [&[&str]; 13] = [
        &["diag.echo", "--input", &deep],
        &["diag.echo", &long],
        &["diag.echo", "--count", "99999999999999999999999"],
        &["diag.echo", "x", "--ratio", "1e999"],
        &["diag.echo", "x", "--items", ""],
        &["diag.echo", "--", "--count"],
        &["diag.echo", "x", "--count="],
        &["notes.search", "\u{7f}\u{1b}[2J", "--db", ":memory:"],
        &["diag.display", "-"],
        &["--db"],
        &["--json", "--json", "list"],
        &["help", "no-such-tool"],
        &[&long],
    ];
    for args in cases {
        // Run::from fails the test on a panic.
        let done = run_on(testbed(), args);
        assert!(
            matches!(done.code, 0..=2),
            "{:?}: exit {} {}",
            shorten(args),
            done.code,
            done.stderr
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"caf\xe9");
        let done = Run::from(clean(testbed()).arg("diag.echo").arg(bad).output().unwrap());
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

#[cfg(unix)]
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

#[test]
fn saved_searches_are_tools_made_at_run_time() {
    let db = Db::new();
    for title in ["Release checklist", "Rust ownership"] {
        assert_eq!(db.run(&["notes.create", title]).code, 0);
    }
    let saved = |spec: &str, args: &[&str]| {
        Run::from(
            clean(notes())
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
            "saved searches:\n  saved.release      Saved search: the notes that match \"release\".\n"
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
