//! The independent MCP clients the MCP and gateway tests drive, installed
//! once by `.ci/install-mcp-clients`: the Python SDK (`mcp`), the
//! TypeScript SDKs and the official conformance suite, and the registry
//! servers the gateway puts behind it.

use std::path::PathBuf;
use std::process::Output;
use std::sync::OnceLock;

use crate::clients::{install, run_node_in, run_python_with};

/// The independent clients: a Python venv with `mcp`, and a Node project
/// with `@modelcontextprotocol/sdk` and `@modelcontextprotocol/conformance`.
pub struct Clients {
    /// The venv's interpreter.
    pub python: PathBuf,
    /// The Node project directory (scripts run from here to resolve the SDK).
    pub node_dir: PathBuf,
    /// The directory the install script filled (`time-venv/`, …).
    pub dir: PathBuf,
    /// The interpreter of the venv with FastAPI and uvicorn (the real HTTP
    /// API of the OpenAPI tests).
    pub openapi_python: PathBuf,
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
            openapi_python: dir.join("openapi-venv").join("bin").join("python"),
            dir,
        }
    })
}

/// Runs a Python client script with the venv holding `mcp`; returns its
/// output.
pub fn run_python(script: &str, args: &[&str]) -> Output {
    run_python_with(&clients().python, script, args)
}

/// Runs a Node client script from the Node project (so it resolves the
/// installed SDK); returns its output.
pub fn run_node(script: &str, args: &[&str]) -> Output {
    run_node_in(&clients().node_dir, script, args)
}
