//! The tool list grouped by category, and a tool's help pinned by a golden
//! file.

use gonk_tools_tests::golden;

use super::Out::{All, Ends, Has, Is, Starts};
use super::{check_all, notes, ok, run_on, testbed};

#[test]
fn list_groups_tools_by_category_with_uncategorized_last() {
    let listed = ok(
        &["list"],
        All(vec![
            Ends("(uncategorized):\n  diag.echo          Return the input as it arrived, after argv coercion and validation.\n"),
            Has("\n  notes.search       Search notes by text"),
        ]),
    )
    .check(testbed(), &[]);
    let headings: Vec<&str> = listed.stdout.lines().filter(|l| l.ends_with(':')).collect();
    assert_eq!(
        headings,
        ["diagnostics:", "jobs:", "notes:", "(uncategorized):"]
    );
    assert!(
        !listed.stdout.contains("diag.duplex"),
        "duplex tools are not listed"
    );

    let json = run_on(testbed(), &["list", "--json"]);
    let names: Vec<String> = json
        .json_lines()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.first().map(String::as_str), Some("diag.sleep"));
    assert_eq!(names.last().map(String::as_str), Some("diag.echo"));
    assert!(names.contains(&"notes.export".to_owned()));

    // The notes binary: only the notes tools.
    let plain = ok(
        &["list"],
        All(vec![
            Starts("jobs:\n  jobs.status"),
            Has("\n\nnotes:\n  notes.create"),
        ]),
    )
    .check(notes(), &[]);
    assert!(!plain.stdout.contains("diag."));

    // The notes README shows this very listing (every tool, as printed).
    let readme = std::fs::read_to_string(
        gonk_tools_tests::workspace::root().join("examples/notes/README.md"),
    )
    .unwrap();
    let shown = readme
        .split("--bin notes -- list\n```\n\n```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README shows `notes list` in a text block");
    assert_eq!(
        shown, plain.stdout,
        "examples/notes/README.md shows another list"
    );
}

#[test]
fn tool_help_matches_the_golden_file() {
    // With and without diagnostics: the help of a notes tool does not
    // depend on them, which running both binaries shows.
    for binary in [notes(), testbed()] {
        let help = run_on(binary, &["notes.search", "--help"]);
        assert_eq!(help.code, 0);
        golden::check_text("cli/notes.search.help.txt", &help.stdout);
    }
    // `-h`, `help <tool>` and an alias give the same text.
    let golden = std::fs::read_to_string(golden::path("cli/notes.search.help.txt")).unwrap();
    check_all(
        notes(),
        &[],
        &[
            ok(&["notes.search", "-h"], Is(&golden)),
            ok(&["help", "notes.search"], Is(&golden)),
            ok(&["search", "--help"], Is(&golden)),
        ],
    );
}
