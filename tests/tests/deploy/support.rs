//! A deployment of `examples/deploy/run.sh` per test (its own ports,
//! database and Redis key prefix), the Python SDK, and stateless MCP calls
//! by hand through the balancer.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use gonk_tools_tests::clients::{install, run_python_with};
use gonk_tools_tests::process::wait_with_bound;
use gonk_tools_tests::services;
use gonk_tools_tests::workspace::{bin, root};
use serde_json::{json, Value};

#[allow(dead_code)]
#[path = "../mcp/support/raw_http.rs"]
pub mod raw_http;

pub use raw_http::Answer;

/// This binary's Redis (`gonk_tools_tests::services`), shared by its
/// tests under prefixes of their own ([`RedisPrefix`]).
pub fn redis_url() -> String {
    services::redis().url()
}

/// `n` ports free right now on loopback.
pub fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("an address").port())
        .collect()
}

/// What a deployment runs with.
#[derive(Default)]
pub struct Recipe {
    /// `--shared URL` for every replica.
    pub shared: Option<String>,
    /// Arguments after `serve` for every replica.
    pub serve: Vec<String>,
    /// Environment of every replica.
    pub env: Vec<(String, String)>,
    /// The replicas' `--db`, when not a database of the deployment's own
    /// on the binary's shared server (e.g. one on a test's own
    /// [`PrivatePostgres`]).
    ///
    /// [`PrivatePostgres`]: gonk_tools_tests::services::PrivatePostgres
    pub db: Option<String>,
}

/// Three replicas and HAProxy, started by `examples/deploy/run.sh` on a
/// database of their own. Stopped (the whole process group) when dropped.
pub struct Deployment {
    child: Child,
    /// The balancer's address.
    pub addr: SocketAddr,
    /// The balancer's MCP endpoint.
    pub url: String,
    /// The `--db` value the replicas share.
    pub db: String,
    /// The process ids of r1, r2 and r3.
    pub replica_pids: Vec<u32>,
    /// The addresses of r1, r2 and r3 (to reach one replica directly).
    pub replica_addrs: Vec<SocketAddr>,
    /// The replicas' working directory (where `notes.export_file` writes).
    pub dir: PathBuf,
    _dir: tempfile::TempDir,
    // Dropped after the replicas (fields drop in order); none when the
    // recipe named its own `db`.
    _database: Option<PgDatabase>,
}

impl Deployment {
    /// Starts the recipe and waits (bounded) until the balancer answers.
    pub fn start(recipe: Recipe) -> Deployment {
        // The balancer run.sh starts, found here so that a missing one
        // fails with the installer's name.
        let haproxy = services::program("haproxy");
        let dir = tempfile::tempdir().expect("a temp dir");
        let (database, db) = match &recipe.db {
            Some(db) => (None, db.clone()),
            None => {
                let database = PgDatabase::create();
                let db = database.url();
                (Some(database), db)
            }
        };
        let ports = free_ports(4);
        let mut command = Command::new("bash");
        command
            .current_dir(dir.path())
            .arg(root().join("examples").join("deploy").join("run.sh"))
            .arg("--db")
            .arg(&db);
        if let Some(shared) = &recipe.shared {
            command.args(["--shared", shared]);
        }
        command
            .arg("--")
            .args(&recipe.serve)
            .env_remove("GONK_MCP_REQUEST_STATE_KEYS")
            .env_remove("NOTES_API_KEYS")
            .envs(recipe.env.iter().map(|(k, v)| (k, v)))
            .env("NOTES", bin("notes"))
            .env("HAPROXY", &haproxy)
            .env("DEPLOY_PORT", ports[0].to_string())
            .env(
                "DEPLOY_REPLICA_PORTS",
                format!("{},{},{}", ports[1], ports[2], ports[3]),
            )
            .env_remove("NOTES_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group: the drop stops every process in it.
            .process_group(0);
        // And a killed test binary stops it too (its EXIT trap stops the
        // replicas and HAProxy).
        services::terminate_with_spawning_thread(&mut command);
        let mut child = command.spawn().expect("run.sh starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("deploy: balancing MCP at ") {
                    let url = rest.split_whitespace().next().unwrap_or_default();
                    // `… (pids R1 R2 R3 HAPROXY)`
                    let pids: Vec<u32> = rest
                        .split("(pids ")
                        .nth(1)
                        .unwrap_or_default()
                        .trim_end_matches(')')
                        .split_whitespace()
                        .filter_map(|pid| pid.parse().ok())
                        .collect();
                    let _ = tx.send((url.to_owned(), pids));
                }
                eprintln!("[deploy] {line}");
            }
        });
        let Ok((url, pids)) = rx.recv_timeout(Duration::from_secs(60)) else {
            stop_group(&mut child);
            panic!("the deployment did not come up (see the [deploy] lines)");
        };
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .expect("an IP:port balancer");
        assert_eq!(pids.len(), 4, "run.sh names its four processes");
        Deployment {
            child,
            addr,
            url,
            db,
            replica_pids: pids[..3].to_vec(),
            replica_addrs: ports[1..]
                .iter()
                .map(|port| SocketAddr::from(([127, 0, 0, 1], *port)))
                .collect(),
            dir: dir.path().to_owned(),
            _dir: dir,
            _database: database,
        }
    }
}

/// A PostgreSQL database of one test's own on the binary's shared server
/// (trust auth), dropped with it: what a deployment's replicas share unless
/// the recipe names another `db`.
pub struct PgDatabase {
    name: String,
}

impl PgDatabase {
    /// Creates a database named after a counter (the server is this
    /// binary's alone).
    pub fn create() -> PgDatabase {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("notes_deploy_{n}");
        services::postgres().create_database(&name);
        PgDatabase { name }
    }

    /// Its URL, as user `postgres`.
    pub fn url(&self) -> String {
        services::postgres().url(&self.name)
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        services::postgres().drop_database(&self.name);
    }
}

/// SIGTERM to the script's process group (the script, the replicas and
/// HAProxy, all started by this test), then a bounded wait.
fn stop_group(child: &mut Child) {
    let group = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: kill(2) on the process group this test created; no memory.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    wait_with_bound(child, Duration::from_secs(20));
}

impl Drop for Deployment {
    fn drop(&mut self) {
        stop_group(&mut self.child);
    }
}

/// Runs a client script of `tests/clients/` with the venv holding `mcp`
/// (installed once by `.ci/install-mcp-clients`).
pub fn run_python(script: &str, args: &[&str]) -> Output {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    let python = PYTHON.get_or_init(|| {
        let dir = install(
            "install-mcp-clients",
            "MCP_CLIENTS_DIR",
            "mcp-clients",
            "the deployment tests need python3 (with venv) for the Python MCP client",
        );
        dir.join("venv").join("bin").join("python")
    });
    run_python_with(python, script, args)
}

/// Every note in `db`, read by the `notes` command line straight from the
/// store (not through a replica).
pub fn stored_notes(db: &str) -> Vec<Value> {
    let output = Command::new(bin("notes"))
        .arg("--db")
        .arg(db)
        .args(["notes.export", "--format", "json"])
        .stdin(Stdio::null())
        .output()
        .expect("notes runs");
    assert!(
        output.status.success(),
        "notes notes.export failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("a JSON array of notes")
}

/// A stateless (`2026-07-28`) `tools/call` through the balancer, by hand,
/// from a client that can elicit; `extra` is merged into the params and
/// `headers` added (e.g. `Authorization: Bearer …`).
pub fn call(
    addr: SocketAddr,
    tool: &str,
    arguments: Value,
    extra: Value,
    headers: &[&str],
) -> Answer {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} },
        },
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    let body =
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}",
        body.len()
    );
    for header in headers {
        head.push_str("\r\n");
        head.push_str(header);
    }
    raw_http::exchange(addr, &head, body.as_bytes())
}

/// The replica that answered.
pub fn replica(answer: &Answer) -> String {
    answer
        .header("x-notes-replica")
        .unwrap_or_else(|| panic!("no x-notes-replica header: {answer:?}"))
        .to_owned()
}

/// Removes this test's keys from the binary's Redis on drop.
pub struct RedisPrefix(pub String);

impl RedisPrefix {
    /// A prefix unique to `test` and this run.
    pub fn new(test: &str) -> RedisPrefix {
        RedisPrefix(format!("gonk-tests:deploy:{test}:{}", std::process::id()))
    }
}

impl Drop for RedisPrefix {
    fn drop(&mut self) {
        // A failed test (maybe one whose server never started) leaves its
        // keys to the binary's own server, gone when the binary exits.
        if std::thread::panicking() {
            return;
        }
        let Ok(client) = redis::Client::open(redis_url()) else {
            return;
        };
        let Ok(mut connection) = client.get_connection() else {
            return;
        };
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:*", self.0))
            .query(&mut connection)
            .unwrap_or_default();
        if !keys.is_empty() {
            let _: Result<(), _> = redis::cmd("DEL").arg(keys).query(&mut connection);
        }
    }
}
