//! A new user's first crate: a fresh package whose dependencies are added
//! by running the README's `cargo add` lines **as written** (through `sh`,
//! with `GONK_TOOLS_GIT` — the README's "URL you cloned this repository
//! from" — set to this checkout as a `file://` git URL), then
//! `tests/fixtures/fresh_crate/main.rs` built and run. It proves the
//! README's set-up is enough for the prelude's derives (`Deserialize`,
//! `JsonSchema`) and for a tool returning `anyhow::Result`.
//!
//! gonk-tools comes from git, as for a user: the checkout's committed
//! `HEAD`, not uncommitted changes. The package lives in
//! `target/fresh-crate` (its own workspace and target directory, kept
//! between runs), starts from the workspace's `Cargo.lock`, and needs
//! crates.io (the README's commands resolve there). `.ci/run`'s publish
//! dry-run builds in the same target directory afterwards, to reuse its
//! dependencies.

use std::path::Path;
use std::process::Command;

use gonk_tools_tests::workspace::{clear_test_run_env, root};

/// Every `cargo add ...` line of the README's `sh` blocks, as written.
fn readme_cargo_adds() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut in_sh = false;
    let mut lines = Vec::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh" && !in_sh;
            continue;
        }
        if in_sh && line.trim().starts_with("cargo add ") {
            lines.push(line.trim().to_owned());
        }
    }
    lines
}

/// Runs one README line in `dir` with `sh`, as a user would paste it.
fn shell(dir: &Path, line: &str) {
    let output = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(dir)
        .env("GONK_TOOLS_GIT", format!("file://{}", root().display()))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .expect("sh runs");
    assert!(
        output.status.success(),
        "{line}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn cargo(dir: &Path, args: &[String]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO"));
    command
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"));
    clear_test_run_env(&mut command);
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {}:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn a_crate_set_up_as_the_readme_says_builds_and_runs() {
    let adds = readme_cargo_adds();
    // Not on crates.io yet: the README's first line is a git dependency.
    assert_eq!(
        adds.first().map(String::as_str),
        Some("cargo add gonk-tools --git \"$GONK_TOOLS_GIT\""),
        "{adds:?}"
    );
    let dir = root().join("target").join("fresh-crate");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    // A fresh manifest every run; its own workspace, not this one's.
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"fresh\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/fresh_crate/main.rs"),
        dir.join("src").join("main.rs"),
    )
    .unwrap();
    for add in &adds {
        shell(&dir, add);
    }
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("\ngonk-tools = { git = \"file://"),
        "gonk-tools from git:\n{manifest}"
    );
    for dependency in ["gonk-tools", "serde", "schemars", "tokio", "anyhow"] {
        assert!(
            manifest.contains(&format!("\n{dependency} = ")),
            "{dependency} missing:\n{manifest}"
        );
    }
    let run = cargo(&dir, &["run".into(), "--quiet".into()]);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "Hello, Ada! 42 `x` is not a number: invalid digit found in string\n"
    );
}
