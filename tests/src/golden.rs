//! Golden files under `tests/golden/`, and the one variable that rewrites
//! them: `GONK_BLESS` (the variable `gonk_tools::surface` reads for surface
//! snapshots, with the same rule). Review the diff of a blessed file before
//! committing it.

use std::path::{Path, PathBuf};

use gonk_tools::surface::UPDATE_VAR;
use serde_json::Value;

/// The path of golden file `relative` (under `tests/golden/`).
pub fn path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(relative)
}

/// Whether this run rewrites golden files instead of checking them:
/// `GONK_BLESS` is set, not empty and not `0`.
pub fn blessing() -> bool {
    std::env::var(UPDATE_VAR).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Asserts that `value` equals the golden JSON file `relative`; with
/// `GONK_BLESS=1` the file is (re)written instead.
pub fn check(relative: &str, value: &Value) {
    let path = path(relative);
    let pretty = serde_json::to_string_pretty(value).expect("a JSON value serializes") + "\n";
    if bless(&path, &pretty) {
        return;
    }
    let text = read(&path);
    let expected: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    assert!(
        value == &expected,
        "{} differs; if the change is intended, rerun with {UPDATE_VAR}=1 and review the diff\nactual:\n{pretty}",
        path.display()
    );
}

/// Asserts that `text` equals the golden text file `relative`; with
/// `GONK_BLESS=1` the file is (re)written instead.
pub fn check_text(relative: &str, text: &str) {
    let path = path(relative);
    if bless(&path, text) {
        return;
    }
    let expected = read(&path);
    assert_eq!(
        text,
        expected,
        "{} differs; if the change is intended, rerun with {UPDATE_VAR}=1 and review the diff",
        path.display()
    );
}

/// Writes `contents` to `path` when blessing; says whether it did.
fn bless(path: &Path, contents: &str) -> bool {
    if !blessing() {
        return false;
    }
    std::fs::create_dir_all(path.parent().expect("golden files live in a directory"))
        .expect("the golden directory can be created");
    std::fs::write(path, contents).expect("the golden file can be written");
    true
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with {UPDATE_VAR}=1 to create it",
            path.display()
        )
    })
}
