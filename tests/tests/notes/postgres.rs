//! The notes on PostgreSQL (`notes --db postgres://…`), against a real
//! server, the test binary's own (`gonk_tools_tests::services`): the same behaviour cases on both backends, the
//! binary end to end, replicas migrating one fresh database at once, and
//! connections the server ends or never answers.
//!
//! Each test makes its own database and drops it when done (`TestDb`).

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use gonk_tools::prelude::*;
use notes::store::{Database, Store, MEMORY};
use serde_json::Value;
use sqlx::Connection;

use gonk_tools_tests::services;
use gonk_tools_tests::workspace::bin;

/// The database the tests connect to in order to create theirs.
fn admin_url() -> String {
    services::postgres().url("postgres")
}

/// A fresh database, dropped (with its connections) when the guard goes,
/// also when the test fails.
struct TestDb {
    name: String,
}

impl TestDb {
    async fn new() -> TestDb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!(
            "notes_test_{}_{nanos}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = sqlx::PgConnection::connect(&admin_url())
            .await
            .expect("the binary's PostgreSQL accepts connections");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .unwrap();
        TestDb { name }
    }

    fn url(&self) -> String {
        services::postgres().url(&self.name)
    }

    /// Ends every server connection to this database (as a restart would).
    async fn terminate_connections(&self) -> i64 {
        let mut admin = sqlx::PgConnection::connect(&admin_url()).await.unwrap();
        sqlx::query_scalar(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1",
        )
        .bind(&self.name)
        .fetch_one(&mut admin)
        .await
        .unwrap()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop runs inside the test's runtime: a thread with its own.
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                if let Ok(mut admin) = sqlx::PgConnection::connect(&admin_url()).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut admin)
                        .await;
                }
            });
        })
        .join()
        .unwrap();
    }
}

fn postgres_store(db: &TestDb) -> Store {
    let store = Store::new(None);
    store.set_database(Database::Postgres(db.url()));
    store
}

/// Titles of the hits of `query`.
async fn found(store: &Store, query: &str, include_archived: bool) -> Vec<String> {
    store
        .search(query.to_owned(), 10, include_archived)
        .await
        .unwrap_or_else(|e| panic!("search {query:?}: {e}"))
        .into_iter()
        .map(|hit| hit.title)
        .collect()
}

/// The same notes and the same calls on `store`; what each call answered,
/// so two backends can be compared.
async fn behaviour(store: &Store) -> Vec<(String, Value)> {
    let mut seen = Vec::new();
    let notes = [
        (
            "Rust 100%",
            "ownership_and borrowing",
            vec!["lang".to_owned()],
        ),
        ("Groceries", "milk, rust remover", vec![]),
        (
            "Say \"hi\" NEAR(the) door",
            "a OR b * c",
            vec!["x:y".to_owned()],
        ),
        ("Ünïcode Straße", "CAFÉ au lait", vec!["Tag".to_owned()]),
        ("plain", "", vec![]),
    ];
    let mut ids = Vec::new();
    for (title, body, tags) in notes {
        let note = store
            .create(title.into(), body.into(), tags.clone())
            .await
            .unwrap();
        assert_eq!((note.title.as_str(), note.tags), (title, tags));
        ids.push(note.id);
    }
    let (rust, groceries) = (ids[0], ids[1]);
    let searches = [
        "rust", "RUST", "ust", "0%", "p_a", "_", "%", "\\", "\"hi\"", "NEAR(the", "a OR b",
        "b * c", "x:y", "\"", "*", "^ca", ")", "straße", "café", "au", "lang", "ta", "nothing",
        "a\u{0}bc",
    ];
    for query in searches {
        seen.push((
            format!("search {query:?}"),
            json!(found(store, query, false).await),
        ));
    }
    let (archived, changed) = store.archive(rust).await.unwrap();
    seen.push(("archive".into(), json!([archived.archived, changed])));
    seen.push((
        "archive again".into(),
        json!(store.archive(rust).await.unwrap().1),
    ));
    seen.push((
        "search rust".into(),
        json!(found(store, "rust", false).await),
    ));
    seen.push((
        "search rust, archived too".into(),
        json!(found(store, "rust", true).await),
    ));
    seen.push(("count".into(), json!(store.count(false).await.unwrap())));
    seen.push(("count all".into(), json!(store.count(true).await.unwrap())));
    // Both stores stamp `updated_at` to the second: a rename in the second
    // of the creations ties with them, one in a later second is the most
    // recent. Start the rename in a new second, so "recent" does not
    // depend on where the clock's second falls during the run.
    let into_second = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    tokio::time::sleep(std::time::Duration::from_nanos(u64::from(
        1_000_000_000 - into_second,
    )))
    .await;
    seen.push((
        "rename".into(),
        json!(
            store
                .rename(groceries, "Shopping".into())
                .await
                .unwrap()
                .title
        ),
    ));
    seen.push((
        "recent".into(),
        json!(store
            .recent(3, false)
            .await
            .unwrap()
            .into_iter()
            .map(|n| n.title)
            .collect::<Vec<_>>()),
    ));
    seen.push((
        "page".into(),
        json!(store
            .page(ids[1], 2, true)
            .await
            .unwrap()
            .into_iter()
            .map(|n| n.title)
            .collect::<Vec<_>>()),
    ));
    for (what, error) in [
        ("get 999", store.get(999).await.unwrap_err()),
        (
            "rename 999",
            store.rename(999, "x".into()).await.unwrap_err(),
        ),
        ("archive 999", store.archive(999).await.unwrap_err()),
    ] {
        seen.push((what.into(), json!([error.code.as_str(), error.message])));
    }
    let got = store.get(rust).await.unwrap();
    seen.push((
        "get".into(),
        json!([got.title, got.body, got.tags, got.archived]),
    ));
    seen
}

#[tokio::test]
async fn the_behaviour_cases_answer_the_same_on_sqlite_and_postgres() {
    let db = TestDb::new().await;
    let sqlite = behaviour(&Store::new(Some(MEMORY.into()))).await;
    let postgres = behaviour(&postgres_store(&db)).await;
    for ((what, on_sqlite), (_, on_postgres)) in sqlite.iter().zip(&postgres) {
        assert_eq!(on_sqlite, on_postgres, "{what}");
    }
    assert_eq!(sqlite.len(), postgres.len());
    // The cases themselves find what they should (not just the same).
    let answer = |what: &str| &postgres.iter().find(|(w, _)| w == what).unwrap().1;
    assert_eq!(
        answer("search \"rust\""),
        &json!(["Rust 100%", "Groceries"])
    );
    assert_eq!(answer("search \"ust\""), &json!(["Rust 100%", "Groceries"]));
    assert_eq!(answer("search \"0%\""), &json!(["Rust 100%"]));
    assert_eq!(answer("search \"^ca\""), &json!([]));
    assert_eq!(answer("search rust"), &json!(["Groceries"]));
    assert_eq!(answer("get 999")[0], "NOT_FOUND");
    assert_eq!(
        answer("recent"),
        &json!(["Shopping", "plain", "Ünïcode Straße"])
    );
}

#[tokio::test]
async fn postgres_search_uses_the_trigram_index() {
    let db = TestDb::new().await;
    let store = postgres_store(&db);
    store.count(true).await.unwrap();
    let mut conn = sqlx::PgConnection::connect(&db.url()).await.unwrap();
    let indexes: Vec<String> =
        sqlx::query_scalar("SELECT indexdef FROM pg_indexes WHERE tablename = 'notes'")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert!(
        indexes
            .iter()
            .any(|d| d.contains("gin") && d.contains("gin_trgm_ops")),
        "{indexes:?}"
    );
    sqlx::query("SET enable_seqscan = off")
        .execute(&mut conn)
        .await
        .unwrap();
    let plan: Vec<String> = sqlx::query_scalar(
        "EXPLAIN SELECT id FROM notes WHERE title ILIKE '%needle%' OR body ILIKE '%needle%' \
         OR tags ILIKE '%needle%'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(plan.iter().any(|l| l.contains("notes_trgm")), "{plan:#?}");
}

fn cli(url: &str, args: &[&str]) -> Value {
    let output = Command::new(bin("notes"))
        .arg("--db")
        .arg(url)
        .arg("--json")
        .args(args)
        .output()
        .expect("run the notes CLI");
    assert!(output.status.success(), "{args:?}: {output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().expect("a result line");
    let result: Value = serde_json::from_str(last).unwrap();
    assert_eq!(result["type"], "result", "{stdout}");
    result["data"].clone()
}

#[tokio::test]
async fn the_notes_binary_keeps_its_notes_on_postgres() {
    let db = TestDb::new().await;
    // `postgresql://` names PostgreSQL too.
    let url = db.url().replacen("postgres://", "postgresql://", 1);
    let created = cli(
        &url,
        &[
            "notes.create",
            "Release checklist",
            "--body",
            "tag v1",
            "--tags",
            "release",
        ],
    );
    let id = created["id"].as_i64().unwrap();
    let searched = cli(&db.url(), &["notes.search", "checklist"]);
    assert_eq!(searched["hits"][0]["id"], id);
    let got = cli(&db.url(), &["notes.get", &id.to_string()]);
    assert_eq!(got["body"], "tag v1");
    let exported = cli(&db.url(), &["notes.export", "--format", "json"]);
    assert_eq!(exported["count"], 1);
    assert!(
        exported["document"]
            .as_str()
            .unwrap()
            .contains("Release checklist"),
        "{exported}"
    );
    // The rows are in PostgreSQL, not in some file.
    let mut conn = sqlx::PgConnection::connect(&db.url()).await.unwrap();
    let title: String = sqlx::query_scalar("SELECT title FROM notes WHERE id = $1")
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(title, "Release checklist");
}

#[tokio::test]
async fn replicas_starting_at_once_on_a_fresh_database_all_work() {
    let db = TestDb::new().await;
    // All started before any is waited for: they race to migrate.
    let children: Vec<_> = (0..6)
        .map(|i| {
            Command::new(bin("notes"))
                .arg("--db")
                .arg(db.url())
                .args(["notes.create", &format!("at once {i}")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
    }
    let store = postgres_store(&db);
    assert_eq!(store.count(true).await.unwrap(), 6);
    assert_eq!(found(&store, "at once", false).await.len(), 6);
}

#[tokio::test]
async fn ended_connections_are_replaced_and_an_unreachable_server_is_a_clear_error() {
    let db = TestDb::new().await;
    let store = postgres_store(&db);
    let note = store
        .create("survives".into(), "".into(), vec![])
        .await
        .unwrap();
    assert!(db.terminate_connections().await >= 1);
    assert_eq!(store.get(note.id).await.unwrap().title, "survives");

    let nowhere = Store::new(None);
    // Nothing listens on port 1: refused connections are retried for the
    // pool's acquire timeout (a server starting up), then reported.
    nowhere.set_database(Database::Postgres(
        "postgres://postgres@127.0.0.1:1/notes".into(),
    ));
    let error = nowhere.count(false).await.unwrap_err();
    assert_eq!(error.code.as_str(), "UNAVAILABLE", "{error}");
    assert!(error.message.contains("unreachable"), "{}", error.message);
}
