//! Golden files under `tests/golden/`.

use std::path::PathBuf;

use serde_json::Value;

/// The path of golden file `relative` (under `tests/golden/`).
pub fn path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(relative)
}

/// Asserts that `value` equals the golden file `relative`; with
/// `GONK_BLESS=1` the file is (re)written instead. Review the diff of a
/// blessed file before committing it.
pub fn check(relative: &str, value: &Value) {
    let path = path(relative);
    let pretty = serde_json::to_string_pretty(value).expect("a JSON value serializes") + "\n";
    if std::env::var_os("GONK_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("golden files live in a directory"))
            .expect("the golden directory can be created");
        std::fs::write(&path, pretty).expect("the golden file can be written");
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with GONK_BLESS=1 to create it",
            path.display()
        )
    });
    let expected: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    assert!(
        value == &expected,
        "{} differs; if the change is intended, rerun with GONK_BLESS=1 and review the diff\nactual:\n{pretty}",
        path.display()
    );
}
