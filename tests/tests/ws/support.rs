//! Shared by the `notes_*` tests: the independent WebSocket clients and
//! the browser driver (installed once by `.ci/install-ws-clients`), and
//! `notes serve` started as a real process.

use std::path::PathBuf;
use std::process::Output;
use std::sync::OnceLock;

use gonk_tools_tests::clients::{install, run_node_in, run_python_with};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_command;

/// The API key the tests start `notes serve` with.
pub const KEY: &str = "ws-test-key";

/// Python with `websockets`, and a Node project with `ws` and
/// `playwright-core`.
pub struct WsClients {
    /// The venv's interpreter.
    pub python: PathBuf,
    /// The Node project directory.
    pub node_dir: PathBuf,
}

/// Installs the clients (once; the script is idempotent and locked).
pub fn ws_clients() -> &'static WsClients {
    static CLIENTS: OnceLock<WsClients> = OnceLock::new();
    CLIENTS.get_or_init(|| {
        let dir = install(
            "install-ws-clients",
            "WS_CLIENTS_DIR",
            "ws-clients",
            "the WebSocket tests need python3 (with venv), node/npm and Debian's chromium",
        );
        WsClients {
            python: dir.join("venv").join("bin").join("python"),
            node_dir: dir.join("node"),
        }
    })
}

/// Runs a Python client script with the venv holding `websockets`.
pub fn run_python(script: &str, args: &[&str]) -> Output {
    run_python_with(&ws_clients().python, script, args)
}

/// Runs a Node script from the Node project (so it resolves `ws` and
/// `playwright-core`).
pub fn run_node(script: &str, args: &[&str]) -> Output {
    run_node_in(&ws_clients().node_dir, script, args)
}

/// Starts a Node script from the Node project with its stdout piped, for
/// a test that talks to it while it runs.
pub fn spawn_node(script: &str, args: &[&str]) -> std::process::Child {
    let node_dir = &ws_clients().node_dir;
    let copy = node_dir.join(script);
    std::fs::copy(gonk_tools_tests::clients::client_script(script), &copy)
        .expect("copy the script next to node_modules");
    std::process::Command::new("node")
        .arg(&copy)
        .args(args)
        .current_dir(node_dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs")
}

/// `notes serve` on a free port, an in-memory database, with the key and
/// the write tools; the diagnostic tools are on.
pub struct NotesServer {
    process: ServerProcess,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl NotesServer {
    /// Starts it with `extra` arguments after `serve`.
    pub fn start(extra: &[&str]) -> NotesServer {
        let mut command = notes_command();
        command.args(["--db", ":memory:", "serve", "--port", "0", "--api-key", KEY]);
        command.args(extra);
        let process = ServerProcess::start(command);
        let addr = process
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        NotesServer { process, addr }
    }

    /// `http://ADDR/mcp` (MCP on the same server).
    pub fn mcp_url(&self) -> String {
        self.process.url.clone()
    }

    /// `ws://ADDR/ws`.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// `http://ADDR/` (the page).
    pub fn page_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        self.process.is_running()
    }
}
