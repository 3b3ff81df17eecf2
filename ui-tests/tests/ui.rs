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
