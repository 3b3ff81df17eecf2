//! The independent clients the tests drive (Python and Node packages from
//! the registries, installed once by the scripts in `.ci/`), and the client
//! scripts of `tests/clients/` they run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::workspace::root;

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

/// A client script in `tests/clients/`.
pub fn client_script(name: &str) -> PathBuf {
    root().join("tests").join("clients").join(name)
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

/// Runs a Node client script from the Node project `node_dir` (so it
/// resolves the installed packages).
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
