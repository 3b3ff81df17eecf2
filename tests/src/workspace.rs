//! The workspace and its binaries: the examples (`notes`, `conformance`)
//! and the test fixtures (`tests/fixtures/`), built once per test process
//! with the workspace's features.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

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
            // With the test targets in the build, the dependencies resolve
            // the same features as `cargo test --workspace --all-features`
            // did, so the binaries it already built are fresh: without it,
            // the first test to need a binary rebuilds every binary and
            // part of the dependencies in the middle of the test run.
            "--tests",
            "--quiet",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(root())
        .stderr(Stdio::inherit())
        .stdout(Stdio::piped());
    clear_test_run_env(&mut command);
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
        // Only the binaries: the test executables are artifacts too, and a
        // test target may share a binary's name.
        if message["reason"] != "compiler-artifact"
            || message["profile"]["test"] == true
            || !message["target"]["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|kind| kind == "bin"))
        {
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

/// Removes what `cargo test` sets for a test process (`CARGO_MANIFEST_DIR`,
/// `CARGO_PKG_*`, …) from a cargo command the test runs. Build scripts
/// watch some of them (ring's reruns when `CARGO_MANIFEST_DIR` changes), so
/// a build inherited from a test would see them "changed" against the
/// `cargo test` that built everything, and rebuild ring and all that
/// depends on it in the middle of the run — then `cargo test` again after.
pub fn clear_test_run_env(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_by_cargo_test = matches!(
            name,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_MANIFEST_LINKS"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_TARGET_TMPDIR"
        ) || name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_EXE_");
        if set_by_cargo_test {
            command.env_remove(name);
        }
    }
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

/// `notes-testbed --db DB serve --port 0 --allow-writes`, then `extra`
/// (e.g. `--auth-issuer URL`): the HTTP server on a free port that the
/// end-to-end tests put their clients in front of.
pub fn notes_serve_command(db: &Path, extra: &[&str]) -> Command {
    let mut command = notes_command();
    command
        .arg("--db")
        .arg(db)
        .args(["serve", "--port", "0", "--allow-writes"])
        .args(extra);
    command
}

/// `notes-testbed` (the `notes` binary plus the diagnostic tools, a test
/// fixture in `tests/fixtures/notes_testbed`) with no per-user data
/// directory.
pub fn notes_command() -> Command {
    let mut command = Command::new(bin("notes-testbed"));
    command
        .env_remove("NOTES_SAVED_SEARCHES")
        .env_remove("XDG_DATA_HOME")
        .env_remove("HOME");
    command
}
