//! The notes tools end to end on one database (create, get, search and its
//! alias, rename, archive, export with progress, values starting with a
//! hyphen), and saved searches: tools made at run time from the
//! environment.

use serde_json::{json, Value};

use super::Out::{All, Any, Ends, Has, Is, Starts};
use super::{clean, notes, ok, Db, Run};

#[test]
fn notes_tools_work_end_to_end_on_one_database() {
    let db = Db::new();
    db.check_all(&[ok(
        &[
            "notes.create",
            "Rust ownership",
            "--body",
            "Borrowing rules and lifetimes.",
            "--tags",
            "rust",
            "--tags",
            "lang",
        ],
        Is("Created note 1: Rust ownership\n"),
    )
    .stderr(Is(""))]);

    // --json: the result event carries the note as data.
    let second = ok(
        &[
            "--json",
            "notes.create",
            "Groceries",
            "--body",
            "milk, rust remover",
        ],
        Any,
    )
    .check(notes(), &["--db", &db.arg()]);
    let events = second.json_lines();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "result");
    assert_eq!(events[0]["data"]["id"], 2);
    assert_eq!(events[0]["data"]["tags"], json!([]));

    db.check_all(&[
        ok(
            &["notes.get", "1"],
            All(vec![
                Starts("# Rust ownership\n\nBorrowing rules and lifetimes.\n\n_note 1 · created "),
                Ends(" · tags: rust, lang_\n"),
            ]),
        ),
        ok(
            &["notes.search", "rust", "--limit", "5"],
            Is("   1  Rust ownership — Borrowing rules and lifetimes.\n   2  Groceries — milk, rust remover\n"),
        ),
        // The alias.
        ok(
            &["search", "rust", "--limit", "1"],
            Is("   1  Rust ownership — Borrowing rules and lifetimes.\n"),
        ),
        ok(
            &["notes.rename", "2", "Shopping list"],
            Is("Renamed note 2 to \"Shopping list\"\n"),
        ),
        ok(
            &["notes.archive", "2"],
            Is("Archived note 2: Shopping list\n"),
        ),
        ok(&["notes.archive", "2"], Is("Note 2 was already archived\n")),
        ok(
            &["notes.search", "rust"],
            Is("   1  Rust ownership — Borrowing rules and lifetimes.\n"),
        ),
        ok(
            &["notes.search", "rust", "--include-archived"],
            Has("   2  Shopping list (archived) — milk, rust remover\n"),
        ),
        ok(&["notes.search", "kiwi"], Is("No notes match \"kiwi\".\n")),
        // Export: progress on stderr (lines, not a terminal), the document on stdout.
        ok(
            &["notes.export", "--include-archived"],
            All(vec![
                Starts("# Rust ownership\n"),
                Has("\n\n---\n\n# Shopping list\n"),
            ]),
        )
        .stderr(Is(
            "[info] exporting 2 notes\n[progress] 50% exported 1/2\n[progress] 100% exported 2/2\n",
        )),
    ]);
    let export = db.run(&["notes.export", "--format", "json"]);
    let exported: Value = serde_json::from_str(&export.stdout).expect("pretty JSON on stdout");
    assert_eq!(exported.as_array().map(Vec::len), Some(1));
    assert_eq!(exported[0]["title"], "Rust ownership");

    // Values may start with a hyphen.
    db.check_all(&[
        ok(
            &["notes.create", "Checklist", "--body", "- tag v1\n- publish"],
            Is("Created note 3: Checklist\n"),
        ),
        ok(&["notes.get", "3"], Has("\n- tag v1\n- publish\n")),
        ok(&["notes.archive", "3"], Any),
    ]);
}

#[test]
fn saved_searches_are_tools_made_at_run_time() {
    let db = Db::new();
    for title in ["Release checklist", "Rust ownership"] {
        assert_eq!(db.run(&["notes.create", title]).code, 0);
    }
    let saved = |spec: &str, args: &[&str]| {
        Run::from(
            clean(notes())
                .env("NOTES_SAVED_SEARCHES", spec)
                .arg("--db")
                .arg(db.path())
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let spec = "release=release; rust=rust";
    let hits = saved(spec, &["saved.release"]);
    assert_eq!(
        (hits.code, hits.stdout.as_str()),
        (0, "   1  Release checklist\n"),
        "{}",
        hits.stderr
    );
    let listed = saved(spec, &["list"]);
    assert!(
        listed.stdout.contains(
            "saved searches:\n  saved.release      Saved search: the notes that match \"release\".\n"
        ),
        "{}",
        listed.stdout
    );

    // A malformed entry, or a name that is no tool name: a clear error at start-up.
    let malformed = saved("release", &["list"]);
    assert_eq!(malformed.code, 1);
    assert_eq!(
        malformed.stderr,
        "Error: NOTES_SAVED_SEARCHES: `release` is not `name=query` (entries are separated by `;`)\n"
    );
    let unnamed = saved("my search=x", &["list"]);
    assert_eq!(unnamed.code, 1);
    assert!(
        unnamed
            .stderr
            .starts_with("Error: the saved searches could not be registered: "),
        "{}",
        unnamed.stderr
    );
    assert!(
        unnamed.stderr.contains("saved.my search"),
        "{}",
        unnamed.stderr
    );
}
