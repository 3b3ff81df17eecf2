//! Shared by the `mcp_*` tests: the example binaries (built once per test
//! process with the workspace's features), the independent MCP clients
//! (installed once by `.ci/install-mcp-clients`), and servers started as
//! real processes.
#![allow(dead_code)] // each test file uses a part of it

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod malformed;
pub mod raw_http;
pub mod raw_stdio;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

fn build_bins() -> HashMap<String, PathBuf> {
    let mut command = Command::new(env!("CARGO"));
    command
        .args([
            "build",
            "--workspace",
            "--all-features",
            "--bins",
            "--quiet",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(root())
        .stderr(Stdio::inherit())
        .stdout(Stdio::piped());
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "building the example binaries failed"
    );
    let mut bins = HashMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        if let (Some(name), Some(exe)) = (
            message["target"]["name"].as_str(),
            message["executable"].as_str(),
        ) {
            bins.insert(name.to_owned(), PathBuf::from(exe));
        }
    }
    bins
}

/// The path of a workspace binary (`notes`, `conformance`), built once per
/// test process.
pub fn bin(name: &str) -> PathBuf {
    static BINS: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
    BINS.get_or_init(build_bins)
        .get(name)
        .unwrap_or_else(|| panic!("the workspace has no binary named {name}"))
        .clone()
}

/// The independent clients: a Python venv with `mcp`, and a Node project
/// with `@modelcontextprotocol/sdk` and `@modelcontextprotocol/conformance`.
pub struct Clients {
    /// The venv's interpreter.
    pub python: PathBuf,
    /// The Node project directory (scripts run from here to resolve the SDK).
    pub node_dir: PathBuf,
}

/// Runs an install script of `.ci/` (idempotent and locked) with its
/// target directory `target/<dir>` in the environment variable `env`, and
/// returns that directory; panics saying what the tests need when it fails.
pub fn install(script: &str, env: &str, dir: &str, needs: &str) -> PathBuf {
    let dir = root().join("target").join(dir);
    let status = Command::new("bash")
        .arg(root().join(".ci").join(script))
        .env(env, &dir)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .unwrap_or_else(|e| panic!("bash cannot run .ci/{script}: {e}"));
    assert!(
        status.success(),
        ".ci/{script} failed: {needs} (run `bash .ci/{script}` to see why)"
    );
    dir
}

/// Installs the clients (once; the script is idempotent and locked) and
/// returns where they are.
pub fn clients() -> &'static Clients {
    static CLIENTS: OnceLock<Clients> = OnceLock::new();
    CLIENTS.get_or_init(|| {
        let dir = install(
            "install-mcp-clients",
            "MCP_CLIENTS_DIR",
            "mcp-clients",
            "the MCP client tests need python3 (with venv) and node/npm",
        );
        Clients {
            python: dir.join("venv").join("bin").join("python"),
            node_dir: dir.join("node"),
        }
    })
}

/// A client script in `tests/clients/`.
pub fn client_script(name: &str) -> PathBuf {
    root().join("tests").join("clients").join(name)
}

/// Runs a Python client script; returns its output.
pub fn run_python(script: &str, args: &[&str]) -> Output {
    run_python_with(&clients().python, script, args)
}

/// Runs a Python client script with the interpreter `python` (a venv's).
pub fn run_python_with(python: &Path, script: &str, args: &[&str]) -> Output {
    Command::new(python)
        .arg(client_script(script))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the venv's python runs")
}

/// Runs a Node client script from the Node project (so it resolves the
/// installed packages); returns its output.
pub fn run_node(script: &str, args: &[&str]) -> Output {
    run_node_in(&clients().node_dir, script, args)
}

/// Runs a Node client script from the Node project `node_dir`.
pub fn run_node_in(node_dir: &Path, script: &str, args: &[&str]) -> Output {
    let copy = node_dir.join(script);
    std::fs::copy(client_script(script), &copy).expect("copy the script next to node_modules");
    Command::new("node")
        .arg(&copy)
        .args(args)
        .current_dir(node_dir)
        .stdin(Stdio::null())
        .output()
        .expect("node runs")
}

/// The one JSON object a client script printed; panics with its stderr
/// when it failed.
pub fn report(output: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the client script failed ({}):\n{stderr}",
        output.status
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or("");
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("the client printed no JSON report ({e}):\n{stdout}\n{stderr}"))
}

/// A server process that prints `... serving MCP at URL` on stderr. Killed
/// when dropped.
pub struct ServerProcess {
    child: Child,
    /// The endpoint URL it printed.
    pub url: String,
}

impl ServerProcess {
    /// Starts `command` and waits for its URL line (its stderr is then
    /// forwarded to ours).
    pub fn start(mut command: Command) -> ServerProcess {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent {
                    if let Some(url) = line.split("serving MCP at ").nth(1) {
                        let _ = tx.send(url.trim().to_owned());
                        sent = true;
                        continue;
                    }
                }
                eprintln!("[server] {line}");
            }
        });
        let url = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                panic!("the server never printed its URL");
            }
        };
        ServerProcess { child, url }
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends it SIGTERM.
    #[cfg(unix)]
    pub fn terminate(&self) {
        signal(&self.child, libc::SIGTERM);
    }

    /// Sends it `sig` (SIGKILL for a crash).
    #[cfg(unix)]
    pub fn signal(&self, sig: libc::c_int) {
        signal(&self.child, sig);
    }

    /// Waits for it to exit (see [`wait_with_bound`]).
    pub fn wait(&mut self, bound: Duration) -> std::process::ExitStatus {
        wait_with_bound(&mut self.child, bound)
    }
}

/// Sends `signal` to `child`.
#[cfg(unix)]
pub fn signal(child: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: kill(2) with a pid we spawned; no memory is involved.
    let rc = unsafe { libc::kill(pid, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal}) failed");
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `notes-testbed` (the `notes` binary plus the diagnostic tools, a test
/// fixture in `examples/notes/tests/testbed`) with no per-user data
/// directory.
pub fn notes_command() -> Command {
    let mut command = Command::new(bin("notes-testbed"));
    command
        .env_remove("NOTES_SAVED_SEARCHES")
        .env_remove("XDG_DATA_HOME")
        .env_remove("HOME");
    command
}

/// Waits (bounded) until `path` holds some text, and returns it.
pub fn wait_for_file(path: &Path, within: Duration) -> Option<String> {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if !text.is_empty() {
                return Some(text);
            }
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child` to exit; kills it and panics if it is still running
/// after `bound` (a guard against a hang, not a timing assertion).
pub fn wait_with_bound(child: &mut Child, bound: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the process did not exit within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
