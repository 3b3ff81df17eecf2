//! Compile-fail and compile-pass cases for `#[tool]`, `#[tools]`, `toolset!`,
//! `#[resource]` and `#[prompt]`. One trybuild test, so trybuild builds the dependencies once.
//!
//! Regenerate the expected `.stderr` with `TRYBUILD=overwrite cargo test -p
//! gonk-tools-ui-tests`, then read every changed file.

#[test]
fn ui() {
    // `embed_skills!` cases name their folders of skills from here (trybuild
    // builds them in a crate of its own, elsewhere).
    std::env::set_var("GONK_UI_TESTS", env!("CARGO_MANIFEST_DIR"));
    one_set_of_rustflags();
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}

/// Every expected error speaks to the user: no internal paths of the
/// generated code, no lists of unrelated trait impls.
#[test]
fn no_stderr_shows_internals() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/fail");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "stderr") {
            let text = std::fs::read_to_string(&path).unwrap();
            for internal in [
                "__private",
                "_serde",
                "the following other types implement",
                "and $N others",
            ] {
                assert!(
                    !text.contains(internal),
                    "{} shows `{internal}`:\n{text}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} .stderr files found");
}

/// trybuild (1.0.122) builds the dependencies with the rustflags `--cfg
/// trybuild --verbose -A dead_code`, then the cases with
/// `--diagnostic-width=140` added, and runs the passing ones with the
/// first set again: rustflags are part of what cargo compares, so every
/// dependency was compiled twice (~35 s of `.ci/run`) and every passing
/// case again to run it. The cases' set for all of them, through
/// `CARGO_ENCODED_RUSTFLAGS` (which trybuild leaves alone and which wins
/// over its `--config`), builds each once; the cases compile with exactly
/// the flags trybuild gives them. Not when the caller sets rustflags of
/// its own (coverage): trybuild handles those.
fn one_set_of_rustflags() {
    if std::env::var_os("RUSTFLAGS").is_some()
        || std::env::var_os("CARGO_ENCODED_RUSTFLAGS").is_some()
    {
        return;
    }
    let flags = [
        "--cfg",
        "trybuild",
        "--verbose",
        "-A",
        "dead_code",
        "--diagnostic-width=140",
    ];
    std::env::set_var("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"));
}
