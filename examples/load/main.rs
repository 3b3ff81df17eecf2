//! `notes-load`: a load generator for the notes server. Not a test: it
//! prints figures.
//!
//! For each session count (1, 8, 32, 64 by default) and each transport it
//! starts the real `notes` binary on a fresh database — `notes serve`
//! (streamable HTTP; each session one MCP session on kept-alive
//! connections) or `notes mcp` (stdio; the sessions are callers sharing the
//! one connection, their requests in flight together) — runs every session
//! through create → get → search for a while, prints calls/s, p50 and p99,
//! then stops the server and checks in the database that every
//! acknowledged create is there exactly once.
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
//! cargo run --release -p gonk-tools-examples --bin notes-load -- [--seconds 5] [--sessions 1,8,32,64] [--transport http,stdio]
//! cargo run --release -p gonk-tools-examples --bin notes-load -- --targets http://127.0.0.1:8800/mcp --db /tmp/notes.db
//! cargo run --release -p gonk-tools-examples --bin notes-load -- --targets http://127.0.0.1:8800/mcp --db postgres://postgres@127.0.0.1/notes
//! ```

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
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

fn args() -> Args {
    let mut args = Args {
        seconds: 5,
        sessions: vec![1, 8, 32, 64],
        transports: vec!["http".into(), "stdio".into()],
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
        let value = argv.next().unwrap_or_default();
        match flag.as_str() {
            "--seconds" => args.seconds = value.parse().expect("--seconds N"),
            "--sessions" => {
                args.sessions = value
                    .split(',')
                    .map(|n| n.parse().expect("--sessions 1,8,32"))
                    .collect()
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
            other => panic!("unknown flag {other}; see the doc comment of examples/load/main.rs"),
        }
    }
    args
}

/// What one session saw.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: Vec<String>,
    /// (title, id) of every create the server acknowledged.
    acked: Vec<(String, i64)>,
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

async fn session(client: Arc<McpClient>, run: String, n: usize, until: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut i = 0u64;
    while Instant::now() < until {
        let title = format!("{run} s{n} #{i} load");
        i += 1;
        let body = json!({ "title": title, "body": "written under load", "tags": ["load"] });
        let Some(note) = call(&client, "notes.create", body, &mut tally).await else {
            continue;
        };
        let id = note["id"].as_i64().unwrap_or_default();
        tally.acked.push((title.clone(), id));
        call(&client, "notes.get", json!({ "id": id }), &mut tally).await;
        let query = format!("s{n} #{}", i - 1);
        call(
            &client,
            "notes.search",
            json!({ "query": query, "limit": 5 }),
            &mut tally,
        )
        .await;
    }
    tally
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

/// What a round measured.
struct Measured {
    latencies: Vec<Duration>,
    errors: Vec<String>,
    acked: Vec<(String, i64)>,
    elapsed: Duration,
}

/// Runs every client as a session until the round's time is up.
async fn drive(args: &Args, clients: &[Arc<McpClient>], run: &str) -> Measured {
    let started = Instant::now();
    let until = started + Duration::from_secs(args.seconds);
    let tasks: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(n, client)| tokio::spawn(session(Arc::clone(client), run.to_owned(), n, until)))
        .collect();
    let mut measured = Measured {
        latencies: Vec::new(),
        errors: Vec::new(),
        acked: Vec::new(),
        elapsed: Duration::ZERO,
    };
    for task in tasks {
        let tally = task.await.expect("session");
        measured.latencies.extend(tally.latencies);
        measured.errors.extend(tally.errors);
        measured.acked.extend(tally.acked);
    }
    measured.elapsed = started.elapsed();
    measured
}

/// Prints a round's row of the table.
fn print_row(label: &str, sessions: usize, mut measured: Measured, checked: &str) {
    measured.latencies.sort_unstable();
    let latencies = &measured.latencies;
    println!(
        "| {label:<5} | {sessions:>3} | {:>7} | {:>6} | {:>8.0} | {:>6.2} | {:>7.2} | {checked} |",
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

async fn round(args: &Args, transport: &str, sessions: usize, dir: &Path) {
    let db = dir.join(format!("{transport}-{sessions}.db"));
    let run = format!("{transport}{sessions}");
    let (mut child, clients): (Option<Child>, Vec<Arc<McpClient>>) = match transport {
        "http" => {
            let (child, url) = serve_http(&args.notes, &db).await;
            let mut clients = Vec::new();
            for _ in 0..sessions {
                let client = McpClient::connect_http(&url, McpHttpClientOptions::new())
                    .await
                    .expect("an MCP session");
                clients.push(Arc::new(client));
            }
            (Some(child), clients)
        }
        _ => {
            let mut command = Command::new(&args.notes);
            command.arg("--db").arg(&db).arg("mcp").kill_on_drop(true);
            let client = Arc::new(McpClient::connect_stdio(command).await.expect("notes mcp"));
            (None, vec![client; sessions])
        }
    };
    let measured = drive(args, &clients, &run).await;
    drop(clients);
    if let Some(child) = child.as_mut() {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
    // stdio: the process ends when its client is dropped; give it a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let checked = checked(verify_sqlite(&db, &measured.acked), &measured.acked);
    print_row(transport, sessions, measured, &checked);
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
    let measured = drive(args, &clients, &run).await;
    drop(clients);
    let checked = match &args.db {
        Some(SharedStore::Sqlite(db)) => {
            checked(verify_sqlite(db, &measured.acked), &measured.acked)
        }
        Some(SharedStore::Postgres(url)) => {
            checked(verify_postgres(url, &measured.acked).await, &measured.acked)
        }
        None => format!("{} acked, not checked (no --db)", measured.acked.len()),
    };
    print_row("http", sessions, measured, &checked);
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("notes-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    println!(
        "notes-load: {} s per round, create → get → search per iteration, `{}`",
        args.seconds,
        args.notes.display()
    );
    if !args.targets.is_empty() {
        println!("targets: {}", args.targets.join(", "));
    }
    println!(
        "| transport | sessions | calls | errors | calls/s | p50 ms | p99 ms | database check |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
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
        std::process::exit(1);
    }
}
