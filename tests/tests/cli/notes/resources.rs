//! Resources and prompts on the notes command line: `resource list`,
//! `resource read URI` (Markdown to stdout, `--json` the MCP contents with
//! the tags in `_meta`), `prompt list`, `prompt get summarize --id N`
//! (the note embedded), and the failures — a URI nothing matches, a
//! missing note, an unknown prompt, a missing required argument — each
//! with its message and exit code.

use serde_json::json;

use super::Out::{All, Has, Is, Starts};
use super::{check_all, fails, notes, ok, Db, MEMORY};

#[test]
fn resources_are_listed_and_read() {
    let db = Db::new();
    db.check_all(&[
        ok(
            &[
                "notes.create",
                "Groceries",
                "--body",
                "- milk",
                "--tags",
                "home",
            ],
            Is("Created note 1: Groceries\n"),
        ),
        ok(
            &["resource", "list"],
            All(vec![
                Has("notes://{id}"),
                Has("note (text/markdown) — A note as Markdown"),
                Has("notes://recent"),
                Has("notes://tag/{tag}"),
            ]),
        ),
        ok(
            &["resource", "read", "notes://1"],
            All(vec![Starts("# Groceries\n\n- milk\n"), Has("tags: home")]),
        ),
    ]);
    let read = db.run(&["--json", "resource", "read", "notes://1"]);
    assert_eq!(read.code, 0, "{}", read.stderr);
    let lines = read.json_lines();
    let contents = &lines[0]["contents"][0];
    assert_eq!(contents["uri"], "notes://1");
    assert_eq!(contents["mimeType"], "text/markdown");
    assert_eq!(
        contents["_meta"],
        json!({"tags": ["home"], "archived": false})
    );

    let recent = db.run(&["resource", "read", "notes://recent"]);
    assert_eq!(recent.code, 0, "{}", recent.stderr);
    let notes: serde_json::Value = serde_json::from_str(recent.stdout.trim()).unwrap();
    assert_eq!(notes[0]["title"], "Groceries");

    let tagged = db.run(&["resource", "read", "notes://tag/home"]);
    let notes: serde_json::Value = serde_json::from_str(tagged.stdout.trim()).unwrap();
    assert_eq!(notes.as_array().map(Vec::len), Some(1));
}

#[test]
fn bad_uris_fail_with_resource_not_found_and_exit_127() {
    check_all(
        notes(),
        MEMORY,
        &[
            fails(
                &["resource", "read", "https://example.com/"],
                127,
                All(vec![
                    Starts(
                        "Error [RESOURCE_NOT_FOUND]: Resource not found: https://example.com/\n",
                    ),
                    Has("\"uri\": \"https://example.com/\""),
                ]),
            )
            .stdout(Is("")),
            fails(
                &["resource", "read", "notes://99"],
                127,
                Starts("Error [RESOURCE_NOT_FOUND]: Resource not found: notes://99"),
            ),
            // A template matched, but the id is not a number.
            fails(
                &["resource", "read", "notes://abc"],
                2,
                Starts("Error [INVALID_INPUT]"),
            ),
            fails(&["resource", "read"], 2, Has("<URI>")),
        ],
    );
}

#[test]
fn prompts_are_listed_and_rendered_with_the_note_embedded() {
    let db = Db::new();
    db.check_all(&[
        ok(&["notes.create", "Plans", "--body", "Ship it", "--tags", "work"], Is("Created note 1: Plans\n")),
        ok(
            &["prompt", "list"],
            All(vec![
                Has("summarize  Ask for a summary of a note"),
                Has("  --id (required) The id of the note to summarize."),
                Has("  --style (optional) How:"),
            ]),
        ),
        ok(
            &["prompt", "get", "summarize", "--id", "1"],
            All(vec![
                Starts("Summary of note 1: Plans\n\n[user] [resource notes://1 (text/markdown)]\n# Plans\n\nShip it\n"),
                Has("[user] Summarize this note in one short paragraph.\n"),
            ]),
        ),
        ok(
            &["prompt", "get", "summarize", "--id", "1", "--style", "bullets"],
            Has("[user] Summarize this note as a few bullet points.\n"),
        ),
    ]);
    let got = db.run(&["--json", "prompt", "get", "summarize", "--id", "1"]);
    assert_eq!(got.code, 0, "{}", got.stderr);
    let result = &got.json_lines()[0];
    assert_eq!(result["messages"][0]["content"]["type"], "resource");
    assert_eq!(
        result["messages"][0]["content"]["resource"]["uri"],
        "notes://1"
    );
    assert_eq!(
        result["messages"][0]["content"]["resource"]["_meta"]["tags"],
        json!(["work"])
    );
}

#[test]
fn prompt_failures_say_what_is_wrong() {
    check_all(
        notes(),
        MEMORY,
        &[
            fails(
                &["prompt", "get", "nope"],
                127,
                Is("Error [PROMPT_NOT_FOUND]: Prompt not found: nope\n"),
            ),
            // clap: a required argument of the prompt is missing.
            fails(&["prompt", "get", "summarize"], 2, Has("--id <VALUE>")),
            fails(
                &["prompt", "get", "summarize", "--id", "7"],
                2,
                Has("No note with id 7"),
            ),
            fails(
                &["prompt", "get", "summarize", "--id", "x"],
                2,
                Starts("Error [INVALID_INPUT]"),
            ),
        ],
    );
}

#[test]
fn the_summarize_help_lists_its_arguments() {
    check_all(
        notes(),
        MEMORY,
        &[ok(
            &["prompt", "get", "summarize", "--help"],
            All(vec![
                Has("Ask for a summary of a note"),
                Has("--id <VALUE>"),
                Has("--style <VALUE>"),
            ]),
        )],
    );
}
