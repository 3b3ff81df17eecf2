//! Arguments: flags typed by the schema, `--input` JSON (from argv or stdin)
//! overridden by arguments, and hostile argv answered with errors, never a
//! panic.

use std::io::Write;
use std::process::Stdio;

use serde_json::json;

use super::Out::{All, Any, Has, Is};
use super::{check_all, clean, fails, ok, run_on, shorten, testbed, Out, Run};

#[test]
fn flags_are_typed_by_the_schema() {
    check_all(
        testbed(),
        &[],
        &[
            ok(
                &[
                    "diag.echo",
                    "hi",
                    "--count",
                    "3",
                    "--ratio",
                    "0.5",
                    "--loud",
                    "--level",
                    "high",
                    "--items",
                    "1",
                    "--items",
                    "2",
                    "--extra",
                    r#"{"a":[1]}"#,
                ],
                Out::Json(json!({"text": "hi", "count": 3, "ratio": 0.5, "loud": true,
                    "level": "high", "items": [1, 2], "extra": {"a": [1]}})),
            )
            .stderr(Is("")),
            // `--flag=false`, numbers that look like integers, the text positional kept a string.
            ok(
                &["diag.echo", "42", "--loud=false", "--ratio", "2"],
                Out::Json(
                    json!({"text": "42", "count": null, "ratio": 2.0, "loud": false,
                    "level": null, "items": [], "extra": null}),
                ),
            ),
            // Typed flags reject text of the wrong type at the argv layer.
            fails(
                &["diag.echo", "x", "--count", "three"],
                2,
                Has("invalid value 'three' for '--count <INTEGER>': expected an integer"),
            ),
            fails(
                &["diag.echo", "x", "--level", "medium"],
                2,
                Has("[possible values: low, high]"),
            ),
            fails(&["diag.echo", "x", "--loud=perhaps"], 2, Any),
            fails(
                &["diag.echo", "x", "--extra", "{nope"],
                2,
                Has("expected JSON"),
            ),
        ],
    );
}

#[test]
fn input_json_gives_the_whole_input_and_arguments_override_it() {
    check_all(
        testbed(),
        &[],
        &[
            ok(
                &["diag.echo", "--input", r#"{"text": "from json", "count": 1}"#],
                Out::Json(json!({"text": "from json", "count": 1, "ratio": null, "loud": false,
                    "level": null, "items": [], "extra": null})),
            ),
            ok(
                &["diag.echo", "--input", r#"{"text": "a", "count": 1}"#, "--count", "2", "b"],
                Out::Json(json!({"text": "b", "count": 2, "ratio": null, "loud": false,
                    "level": null, "items": [], "extra": null})),
            ),
            // Invalid JSON: exit 2 with serde_json's message.
            fails(
                &["diag.echo", "--input", "{\"text\": "],
                2,
                Is("Input error: --input must be valid JSON: EOF while parsing a value at line 1 column 9\n"),
            ),
            // JSON without a required field: the schema says so (exit 2).
            fails(
                &["notes.search", "--input", "{}", "--db", ":memory:"],
                2,
                All(vec![
                    Has("Error [INVALID_INPUT]: Input validation failed"),
                    Has("\"query\" is a required property"),
                ]),
            ),
        ],
    );

    // `--input -` reads the input from stdin.
    let mut child = clean(testbed())
        .args(["diag.echo", "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"text": "from stdin"}"#)
        .unwrap();
    let piped = Run::from(child.wait_with_output().unwrap());
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(
        piped.stdout.contains("\"text\":\"from stdin\""),
        "{}",
        piped.stdout
    );
}

#[test]
fn hostile_argv_gets_errors_not_panics() {
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    // Under Linux's 128 KiB limit for one argument.
    let long = "x".repeat(100_000);
    let cases: [&[&str]; 13] = [
        &["diag.echo", "--input", &deep],
        &["diag.echo", &long],
        &["diag.echo", "--count", "99999999999999999999999"],
        &["diag.echo", "x", "--ratio", "1e999"],
        &["diag.echo", "x", "--items", ""],
        &["diag.echo", "--", "--count"],
        &["diag.echo", "x", "--count="],
        &["notes.search", "\u{7f}\u{1b}[2J", "--db", ":memory:"],
        &["diag.display", "-"],
        &["--db"],
        &["--json", "--json", "list"],
        &["help", "no-such-tool"],
        &[&long],
    ];
    for args in cases {
        // Run::from fails the test on a panic.
        let done = run_on(testbed(), args);
        assert!(
            matches!(done.code, 0..=2),
            "{:?}: exit {} {}",
            shorten(args),
            done.code,
            done.stderr
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"caf\xe9");
        let done = Run::from(clean(testbed()).arg("diag.echo").arg(bad).output().unwrap());
        assert_eq!(done.code, 2, "{}", done.stderr);
        assert!(done.stderr.contains("invalid UTF-8"), "{}", done.stderr);
    }
}
