//! A new user's first crate: a fresh package whose dependencies are added
//! by running the README's `cargo add` lines (with `gonk-tools` from this
//! checkout), then `tests/fixtures/fresh_crate/main.rs` built and run. It
//! proves the README's set-up is enough for the prelude's derives
//! (`Deserialize`, `JsonSchema`) and for a tool returning `anyhow::Result`.
//!
//! The package lives in `target/fresh-crate` (its own workspace, its own
//! target directory, kept between runs) and resolves offline against the
//! workspace's `Cargo.lock`.

use std::path::Path;
use std::process::Command;

use gonk_tools_tests::workspace::root;

/// Every `cargo add ...` line of the README's `sh` blocks.
fn readme_cargo_adds() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut in_sh = false;
    let mut lines = Vec::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh" && !in_sh;
            continue;
        }
        if in_sh {
            if let Some(rest) = line.trim().strip_prefix("cargo add ") {
                lines.push(rest.split_whitespace().map(str::to_owned).collect());
            }
        }
    }
    lines
}

/// One `cargo add` line as the invocations that run it here: one per
/// crate, `gonk-tools` by path, each with its features.
fn invocations(args: &[String]) -> Vec<Vec<String>> {
    let mut crates = Vec::new();
    let mut features: Vec<String> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-F" | "--features" => {
                let list = args.next().expect("a feature list after -F");
                features.extend(list.split(',').map(str::to_owned));
            }
            flag if flag.starts_with('-') => panic!("unexpected flag in the README: {flag}"),
            name => crates.push(name.to_owned()),
        }
    }
    let single = crates.len() == 1;
    crates
        .iter()
        .map(|name| {
            let mut argv = vec!["add".to_owned(), "--offline".to_owned()];
            if name == "gonk-tools" {
                argv.push("--path".to_owned());
                argv.push(root().join("gonk-tools").display().to_string());
            } else {
                argv.push(name.clone());
            }
            let mine: Vec<String> = features
                .iter()
                .filter_map(|f| match f.split_once('/') {
                    Some((krate, feature)) if krate == name => Some(feature.to_owned()),
                    Some(_) => None,
                    None if single => Some(f.clone()),
                    None => panic!("`{f}` needs a crate prefix when several crates are added"),
                })
                .collect();
            if !mine.is_empty() {
                argv.push("-F".to_owned());
                argv.push(mine.join(","));
            }
            argv
        })
        .collect()
}

fn cargo(dir: &Path, args: &[String]) -> std::process::Output {
    let output = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .expect("cargo runs");
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
    assert!(
        adds.iter().any(|a| a.contains(&"gonk-tools".to_owned())),
        "the README adds gonk-tools: {adds:?}"
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
        for argv in invocations(add) {
            cargo(&dir, &argv);
        }
    }
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    for dependency in ["gonk-tools", "serde", "schemars", "tokio", "anyhow"] {
        assert!(
            manifest.contains(&format!("\n{dependency} = ")),
            "{dependency} missing:\n{manifest}"
        );
    }
    let run = cargo(&dir, &["run".into(), "--offline".into(), "--quiet".into()]);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "Hello, Ada! 42 `x` is not a number: invalid digit found in string\n"
    );
}
