//! The notes command line, driven from outside: every test runs a real
//! binary (`notes` or `notes-testbed`, built once per test process), feeds
//! it argv, and checks stdout, stderr and the exit code. Most tests are
//! tables of [`Case`]s run in order.
//!
//! `notes-testbed` is `notes` plus diagnostic tools that make the paths
//! the notes tools never take observable: every display kind, every event
//! channel, a duplex tool, `TOOL_NOT_FOUND` from dispatch, a handler that
//! must be dropped on Ctrl-C.

mod arguments;
mod database;
mod help;
mod interrupt;
mod output;
mod rate_limit;
mod resources;
mod tools;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use gonk_tools_tests::workspace::bin;
use serde_json::Value;

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
