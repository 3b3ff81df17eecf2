//! The database option: before or after the subcommand, `:memory:`
//! allowed; the default database is per user and created only when used.

use std::path::Path;

use super::Out::{All, Any, Has, Is, Starts};
use super::{check_all, clean, fails, notes, ok, Db, Run};

#[test]
fn db_option_goes_before_or_after_the_subcommand_and_memory_is_allowed() {
    let db = Db::new();
    let path = db.arg();
    let equals = format!("--db={path}");
    check_all(
        notes(),
        &[],
        &[
            ok(&["--db", &path, "notes.create", "Before"], Any),
            ok(&["notes.create", "After", "--db", &path], Any),
            ok(
                &["notes.search", "e", &equals],
                Is("   2  After\n   1  Before\n"),
            ),
            ok(
                &["--db", ":memory:", "notes.create", "Gone soon"],
                Is("Created note 1: Gone soon\n"),
            ),
            ok(
                &["notes.search", "Gone", "--db", ":memory:"],
                Is("No notes match \"Gone\".\n"),
            ),
        ],
    );
    assert!(!Path::new(":memory:").exists());
}

#[test]
fn the_default_database_is_per_user_and_only_created_when_used() {
    let home = tempfile::tempdir().unwrap();
    let xdg = home.path().join("xdg");
    let with_env = |key: &str, value: &Path, args: &[&str]| {
        Run::from(clean(notes()).env(key, value).args(args).output().unwrap())
    };

    let listed = with_env("XDG_DATA_HOME", &xdg, &["list"]);
    assert_eq!(listed.code, 0);
    assert!(!xdg.exists(), "`list` must not create the database");

    let created = with_env("XDG_DATA_HOME", &xdg, &["notes.create", "Stored"]);
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert!(xdg.join("gonk-notes/notes.db").is_file());

    // Without XDG_DATA_HOME: ~/.local/share.
    let created = with_env("HOME", home.path(), &["notes.create", "At home"]);
    assert_eq!(created.code, 0, "{}", created.stderr);
    assert!(home
        .path()
        .join(".local/share/gonk-notes/notes.db")
        .is_file());

    // Neither: a clear error that asks for --db.
    fails(
        &["notes.create", "Nowhere"],
        1,
        All(vec![Starts("Error [INTERNAL]: "), Has("pass --db PATH")]),
    )
    .check(notes(), &[]);
}
