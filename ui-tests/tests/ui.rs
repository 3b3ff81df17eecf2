//! Compile-fail and compile-pass cases for `#[tool]`, `#[tools]` and
//! `toolset!`. One `#[test]`, so trybuild builds the dependencies once.
//!
//! Regenerate the expected `.stderr` with `TRYBUILD=overwrite cargo test -p
//! gonk-tools-ui-tests`, then read every changed file.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
