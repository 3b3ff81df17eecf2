//! `notes-load`: a load generator for the notes server. Not a test: it
//! prints figures.
//!
//! For each session count (1, 8, 32, 64 by default) and each transport it
//! starts the real `notes` binary on a fresh database — `notes serve`
//! (streamable HTTP, `http-2025`: each session one MCP session on a
//! kept-alive connection; `http-2026`: stateless `2026-07-28` calls, no
//! session) or `notes mcp` (stdio; the sessions are callers sharing the
//! one connection, their requests in flight together) — and runs four
//! phases of `--seconds` each: every session through create → get →
//! search (`mixed`), then only `notes.create`, only `notes.get` of the
//! notes it made, only `notes.search` of their titles. Per phase it prints
//! calls/s, p50, p99 and the **server's CPU per call**: the utime + stime of
//! the server process it started (`/proc/PID/stat`) over the phase,
//! divided by the calls answered — a figure other load on the machine
//! hardly moves, unlike calls/s and latency. Then it stops the server and
//! checks in the database that every acknowledged create is there exactly
//! once.
//!
//! With `--targets URL,URL,…` it starts nothing: the sessions go to those
//! MCP endpoints in turn (several replicas, or one balancer in front of
//! them, e.g. `examples/deploy/run.sh`), and `--db` names the store they
//! share for the exactly-once check, as the servers' own `--db` does: a
//! SQLite file, or a `postgres://` URL (without `--db` the check is
//! skipped). Titles carry the run's process id, so a database used before
//! does not confuse the check.
//!
//! It exits with status 1 when a check finds an acknowledged create
//! missing or doubled, so a script (or a test) can rely on it.
//!
//! ```text
//! cargo run --release -p gonk-tools-examples --bin notes-load -- [--seconds 5] [--sessions 1,8,32,64] [--transport http-2025,http-2026,stdio]
//! cargo run --release -p gonk-tools-examples --bin notes-load -- --targets http://127.0.0.1:8800/mcp --db /tmp/notes.db
//! cargo run --release -p gonk-tools-examples --bin notes-load -- --targets http://127.0.0.1:8800/mcp --db postgres://postgres@127.0.0.1/notes
//! ```

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gonk_tools::adapters::mcp::{McpClient, McpEra, McpHttpClientOptions};
use gonk_tools::collect_tool_outcome;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

struct Args {
    seconds: u64,
    sessions: Vec<usize>,
    transports: Vec<String>,
    notes: PathBuf,
    /// Endpoints already running (`--targets`); empty: start the server.
    targets: Vec<String>,
    /// The store the targets share (`--db`), for the exactly-once check.
    db: Option<SharedStore>,
}

/// The store `--targets` share, named as the servers' `--db` names it.
enum SharedStore {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database, by its `postgres://` (or `postgresql://`) URL.
    Postgres(String),
}

impl SharedStore {
    fn parse(value: String) -> SharedStore {
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            SharedStore::Postgres(value)
        } else {
            SharedStore::Sqlite(value.into())
        }
    }
}

/// How to run it, printed for `--help` and after a bad flag.
const USAGE: &str = "usage: notes-load [--seconds N] [--sessions 1,8,32,64] \
[--transport http-2025,http-2026,stdio] [--notes PATH] [--targets URL,URL… [--db PATH|postgres://…]]";

/// The flags, or what is wrong with them.
fn args() -> Result<Args, String> {
    let mut args = Args {
        seconds: 5,
        sessions: vec![1, 8, 32, 64],
        transports: vec!["http-2025".into(), "http-2026".into(), "stdio".into()],
        // Next to this binary (cargo builds both).
        notes: std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|dir| dir.join("notes")))
            .unwrap_or_else(|| "notes".into()),
        targets: Vec::new(),
        db: None,
    };
    let mut argv = std::env::args().skip(1);
    while let Some(flag) = argv.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let Some(value) = argv.next() else {
            return Err(format!("{flag} needs a value"));
        };
        match flag.as_str() {
            "--seconds" => {
                args.seconds = value
                    .parse()
                    .map_err(|_| format!("--seconds takes a whole number, not {value:?}"))?
            }
            "--sessions" => {
                args.sessions = value
                    .split(',')
                    .map(|n| n.parse::<usize>().ok().filter(|&n| n > 0))
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("--sessions takes counts like 1,8,32, not {value:?}"))?
            }
            "--transport" => args.transports = value.split(',').map(str::to_owned).collect(),
            "--notes" => args.notes = value.into(),
            "--targets" => {
                args.targets = value
                    .split(',')
                    .filter(|url| !url.is_empty())
                    .map(str::to_owned)
                    .collect()
            }
            "--db" => args.db = Some(SharedStore::parse(value)),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

/// What one session saw in one phase.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: Vec<String>,
}

/// One session's caller, kept across the phases of a round.
struct Caller {
    client: Arc<McpClient>,
    /// Its number in the round (in titles and queries).
    n: usize,
    /// Titles made so far (each title is unique in the run).
    made: u64,
    /// (title, id) of every create the server acknowledged.
    acked: Vec<(String, i64)>,
}

/// The phases of a round, in order: the mix first, then one tool at a
/// time, so each tool's server CPU is its own.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    /// create → get → search, over and over.
    Mixed,
    /// `notes.create` only.
    Create,
    /// `notes.get` of this session's notes, in turn.
    Get,
    /// `notes.search` of this session's titles, in turn.
    Search,
}

impl Phase {
    const ALL: [Phase; 4] = [Phase::Mixed, Phase::Create, Phase::Get, Phase::Search];

    fn name(self) -> &'static str {
        match self {
            Phase::Mixed => "mixed",
            Phase::Create => "create",
            Phase::Get => "get",
            Phase::Search => "search",
        }
    }
}

async fn call(client: &McpClient, tool: &str, input: Value, tally: &mut Tally) -> Option<Value> {
    let started = Instant::now();
    let outcome = collect_tool_outcome(client.invoke(tool, input), |_| {}).await;
    tally.latencies.push(started.elapsed());
    match outcome {
        Ok(output) => Some(output.data),
        Err(error) => {
            tally
                .errors
                .push(format!("{tool}: {} {}", error.code, error.message));
            None
        }
    }
}

impl Caller {
    async fn create(&mut self, run: &str, tally: &mut Tally) -> Option<i64> {
        let title = format!("{run} s{} #{} load", self.n, self.made);
        self.made += 1;
        let body = json!({ "title": title, "body": "written under load", "tags": ["load"] });
        let note = call(&self.client, "notes.create", body, tally).await?;
        let id = note["id"].as_i64().unwrap_or_default();
        self.acked.push((title, id));
        Some(id)
    }

    async fn get(&self, id: i64, tally: &mut Tally) {
        call(&self.client, "notes.get", json!({ "id": id }), tally).await;
    }

    /// Searches for the words of the `k`th title this session made.
    async fn search(&self, k: u64, tally: &mut Tally) {
        let query = format!("s{} #{k}", self.n);
        let input = json!({ "query": query, "limit": 5 });
        call(&self.client, "notes.search", input, tally).await;
    }
}

async fn session(mut caller: Caller, run: String, phase: Phase, until: Instant) -> (Caller, Tally) {
    let mut tally = Tally::default();
    let mut turn = 0usize;
    while Instant::now() < until {
        // The get and search phases go round the notes made before.
        let made = caller.acked.len();
        match phase {
            Phase::Create => {
                caller.create(&run, &mut tally).await;
            }
            Phase::Get | Phase::Search if made == 0 => {
                caller.create(&run, &mut tally).await;
            }
            Phase::Get => caller.get(caller.acked[turn % made].1, &mut tally).await,
            Phase::Search => caller.search((turn % made) as u64, &mut tally).await,
            Phase::Mixed => {
                let k = caller.made;
                let Some(id) = caller.create(&run, &mut tally).await else {
                    continue;
                };
                caller.get(id, &mut tally).await;
                caller.search(k, &mut tally).await;
            }
        }
        turn += 1;
    }
    (caller, tally)
}

/// User + system CPU time of process `pid` so far (every thread, ended
/// ones too), in seconds; `None` when it cannot be read.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name (in parentheses): utime and stime
    // are the 14th and 15th of the line.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / clock_ticks())
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`; 100 on Linux).
fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// The id of this process's newest child named `notes` (the stdio
/// server the MCP client started).
fn notes_child() -> Option<u32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let name = stat
                .split_once(" (")
                .and_then(|(_, rest)| rest.split_once(") "));
            matches!(name, Some((comm, rest)) if comm == "notes"
                && rest.split(' ').nth(1) == Some(me.as_str()))
        })
        .max()
}

/// Starts `notes serve` on a free port; returns the process and its URL.
async fn serve_http(notes: &Path, db: &Path) -> (Child, String) {
    let mut child = Command::new(notes)
        .arg("--db")
        .arg(db)
        .args(["serve", "--port", "0", "--allow-writes"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("notes serve starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.expect("stderr") {
        if let Some(url) = line.strip_prefix("notes: serving MCP at ") {
            let url = url.split_whitespace().next().unwrap_or(url).to_owned();
            // Keep draining stderr so the server never blocks on it.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return (child, url);
        }
    }
    panic!("notes serve exited before it listened");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Every acknowledged create is in the SQLite file exactly once; returns
/// the rows there.
fn verify_sqlite(db: &Path, acked: &[(String, i64)]) -> Result<usize, String> {
    let db = rusqlite::Connection::open(db).map_err(|e| e.to_string())?;
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    if integrity != "ok" {
        return Err(format!("integrity_check: {integrity}"));
    }
    let mut count = db
        .prepare("SELECT COUNT(*), MIN(id) FROM notes WHERE title = ?1")
        .map_err(|e| e.to_string())?;
    for (title, id) in acked {
        let (n, found): (i64, Option<i64>) = count
            .query_row([title], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| e.to_string())?;
        if n != 1 || found != Some(*id) {
            return Err(format!("{title:?} (id {id}) is there {n} times"));
        }
    }
    let rows: i64 = db
        .query_row("SELECT COUNT(*) FROM notes", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    Ok(rows as usize)
}

/// Every acknowledged create is in the PostgreSQL database exactly once,
/// under the id the server answered; returns the rows there.
async fn verify_postgres(url: &str, acked: &[(String, i64)]) -> Result<usize, String> {
    use sqlx::Connection;
    let mut db = sqlx::PgConnection::connect(url)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let titles: Vec<&str> = acked.iter().map(|(title, _)| title.as_str()).collect();
    // One query for the whole run: (title, copies, lowest id) per title.
    let found: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT title, COUNT(*), MIN(id) FROM notes WHERE title = ANY($1) GROUP BY title",
    )
    .bind(&titles)
    .fetch_all(&mut db)
    .await
    .map_err(|e| e.to_string())?;
    let found: std::collections::HashMap<String, (i64, i64)> = found
        .into_iter()
        .map(|(title, n, id)| (title, (n, id)))
        .collect();
    for (title, id) in acked {
        match found.get(title) {
            Some(&(1, stored)) if stored == *id => {}
            Some(&(1, stored)) => {
                return Err(format!(
                    "{title:?} was acknowledged as id {id}, stored as {stored}"
                ))
            }
            Some(&(n, _)) => return Err(format!("{title:?} (id {id}) is there {n} times")),
            None => return Err(format!("{title:?} (id {id}) is there 0 times")),
        }
    }
    let (rows,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM notes")
        .fetch_one(&mut db)
        .await
        .map_err(|e| e.to_string())?;
    let _ = db.close().await;
    Ok(rows as usize)
}

/// What a phase measured.
struct Measured {
    latencies: Vec<Duration>,
    errors: Vec<String>,
    elapsed: Duration,
    /// The server's CPU seconds over the phase, when its process is known.
    cpu: Option<f64>,
}

/// Runs every caller through `phase` until its time is up; the callers
/// come back with what they made.
async fn drive(
    args: &Args,
    callers: Vec<Caller>,
    run: &str,
    phase: Phase,
    server: Option<u32>,
) -> (Vec<Caller>, Measured) {
    let cpu_before = server.and_then(cpu_seconds);
    let started = Instant::now();
    let until = started + Duration::from_secs(args.seconds);
    let tasks: Vec<_> = callers
        .into_iter()
        .map(|caller| tokio::spawn(session(caller, run.to_owned(), phase, until)))
        .collect();
    let mut measured = Measured {
        latencies: Vec::new(),
        errors: Vec::new(),
        elapsed: Duration::ZERO,
        cpu: None,
    };
    let mut callers = Vec::new();
    for task in tasks {
        let (caller, tally) = task.await.expect("session");
        callers.push(caller);
        measured.latencies.extend(tally.latencies);
        measured.errors.extend(tally.errors);
    }
    measured.elapsed = started.elapsed();
    measured.cpu = match (cpu_before, server.and_then(cpu_seconds)) {
        (Some(before), Some(after)) => Some(after - before),
        _ => None,
    };
    (callers, measured)
}

/// Runs the round's phases, printing a row for each; returns every
/// acknowledged create.
async fn phases(
    args: &Args,
    label: &str,
    mut callers: Vec<Caller>,
    run: &str,
    server: Option<u32>,
) -> Vec<(String, i64)> {
    let sessions = callers.len();
    let mut per_tool = Vec::new();
    for phase in Phase::ALL {
        let (back, measured) = drive(args, callers, run, phase, server).await;
        callers = back;
        if phase != Phase::Mixed {
            per_tool.extend(
                measured
                    .cpu
                    .map(|cpu| cpu / measured.latencies.len().max(1) as f64),
            );
        }
        print_row(label, sessions, phase.name(), measured);
    }
    if per_tool.len() == 3 {
        let mean = per_tool.iter().sum::<f64>() / 3.0;
        println!(
            "| {label:<9} | {sessions:>3} | mean of create, get, search | | | | | | **{:.0}** |",
            mean * 1e6
        );
    }
    callers
        .into_iter()
        .flat_map(|caller| caller.acked)
        .collect()
}

/// Prints a phase's row of the table.
fn print_row(label: &str, sessions: usize, phase: &str, mut measured: Measured) {
    measured.latencies.sort_unstable();
    let latencies = &measured.latencies;
    let cpu = match measured.cpu {
        Some(cpu) => format!("{:.0}", cpu / latencies.len().max(1) as f64 * 1e6),
        None => "—".to_owned(),
    };
    println!(
        "| {label:<9} | {sessions:>3} | {phase:<6} | {:>7} | {:>6} | {:>8.0} | {:>6.2} | {:>7.2} | {cpu:>6} |",
        latencies.len(),
        measured.errors.len(),
        latencies.len() as f64 / measured.elapsed.as_secs_f64(),
        percentile(latencies, 0.50).as_secs_f64() * 1e3,
        percentile(latencies, 0.99).as_secs_f64() * 1e3,
    );
    if let Some(first) = measured.errors.first() {
        println!("  first error: {first}");
    }
}

/// Set when a check found an acknowledged create missing or doubled: the
/// process then exits with status 1.
static CHECK_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The check's cell of the table.
fn checked(verified: Result<usize, String>, acked: &[(String, i64)]) -> String {
    match verified {
        Ok(rows) => format!("{} acked, {rows} rows, each once", acked.len()),
        Err(problem) => {
            CHECK_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
            format!("LOST OR DUPLICATED: {problem}")
        }
    }
}

/// The callers of a round: one per session, numbered.
fn callers(clients: Vec<Arc<McpClient>>) -> Vec<Caller> {
    clients
        .into_iter()
        .enumerate()
        .map(|(n, client)| Caller {
            client,
            n,
            made: 0,
            acked: Vec::new(),
        })
        .collect()
}

async fn round(args: &Args, transport: &str, sessions: usize, dir: &Path) {
    let db = dir.join(format!("{transport}-{sessions}.db"));
    let run = format!("{transport}-{sessions}");
    let (mut child, clients, server): (Option<Child>, Vec<Arc<McpClient>>, Option<u32>) =
        match transport {
            "http-2025" | "http-2026" => {
                let (child, url) = serve_http(&args.notes, &db).await;
                let era = if transport == "http-2025" {
                    McpEra::Session
                } else {
                    McpEra::Stateless
                };
                let mut clients = Vec::new();
                for _ in 0..sessions {
                    let client = McpClient::builder()
                        .era(era)
                        .connect_http(&url, McpHttpClientOptions::new())
                        .await
                        .expect("an MCP client");
                    clients.push(Arc::new(client));
                }
                let pid = child.id();
                (Some(child), clients, pid)
            }
            "stdio" => {
                let mut command = Command::new(&args.notes);
                command.arg("--db").arg(&db).arg("mcp").kill_on_drop(true);
                let client = Arc::new(McpClient::connect_stdio(command).await.expect("notes mcp"));
                (None, vec![client; sessions], notes_child())
            }
            other => panic!("unknown transport {other}: http-2025, http-2026 or stdio"),
        };
    let acked = phases(args, transport, callers(clients), &run, server).await;
    if let Some(child) = child.as_mut() {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
    // stdio: the process ends when its client is dropped; give it a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    println!(
        "  database check: {}",
        checked(verify_sqlite(&db, &acked), &acked)
    );
}

/// A round against running endpoints: session `n` talks to target
/// `n % targets`.
async fn round_on_targets(args: &Args, sessions: usize) {
    let run = format!("t{}-{sessions}", std::process::id());
    let mut clients = Vec::new();
    for n in 0..sessions {
        let url = &args.targets[n % args.targets.len()];
        let client = McpClient::connect_http(url, McpHttpClientOptions::new())
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        clients.push(Arc::new(client));
    }
    let acked = phases(args, "http", callers(clients), &run, None).await;
    let checked = match &args.db {
        Some(SharedStore::Sqlite(db)) => checked(verify_sqlite(db, &acked), &acked),
        Some(SharedStore::Postgres(url)) => checked(verify_postgres(url, &acked).await, &acked),
        None => format!("{} acked, not checked (no --db)", acked.len()),
    };
    println!("  database check: {checked}");
}

fn main() -> std::process::ExitCode {
    let args = match args() {
        Ok(args) => args,
        Err(problem) if problem.is_empty() => {
            println!("{USAGE}\n(what each flag does: the doc comment of examples/load/main.rs)");
            return std::process::ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("notes-load: {problem}\n{USAGE}");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("notes-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    println!(
        "notes-load: {} s per phase (mixed create → get → search, then each tool alone), `{}`",
        args.seconds,
        args.notes.display()
    );
    if !args.targets.is_empty() {
        println!("targets: {}", args.targets.join(", "));
    }
    println!(
        "| transport | sessions | phase | calls | errors | calls/s | p50 ms | p99 ms | server CPU µs/call |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|");
    runtime.block_on(async {
        if !args.targets.is_empty() {
            for &sessions in &args.sessions {
                round_on_targets(&args, sessions).await;
            }
            return;
        }
        for transport in &args.transports {
            for &sessions in &args.sessions {
                round(&args, transport, sessions, &dir).await;
            }
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    if CHECK_FAILED.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("notes-load: an acknowledged create is missing or doubled (see the table)");
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
