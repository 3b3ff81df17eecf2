//! Faults against the real notes server: `kill -9` in the middle of writes
//! then a restart on the same database, and two servers sharing one
//! database. No acknowledged write may be lost or duplicated.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_command;
use notes::store::Store;

fn serve(db: &Path) -> ServerProcess {
    let mut command = notes_command();
    command
        .arg("--db")
        .arg(db)
        .args(["serve", "--port", "0", "--allow-writes"]);
    ServerProcess::start(command)
}

/// Writes notes titled `{tag}-{n}` until `stop` fires or a call fails;
/// returns the titles the server acknowledged.
async fn writer(
    url: String,
    tag: String,
    stop: tokio_util::sync::CancellationToken,
) -> Vec<String> {
    let Ok(client) = McpClient::connect_http(&url, McpHttpClientOptions::new()).await else {
        return Vec::new();
    };
    let mut acked = Vec::new();
    for n in 0.. {
        if stop.is_cancelled() {
            break;
        }
        let title = format!("{tag}-{n}");
        let call = client.invoke(
            "notes.create",
            json!({ "title": title, "body": "x".repeat(512) }),
        );
        // A killed server may leave a call unanswered: give up on it.
        match tokio::time::timeout(Duration::from_secs(5), collect_tool_outcome(call, |_| {})).await
        {
            Ok(Ok(_)) => acked.push(title),
            _ => break,
        }
    }
    acked
}

/// `integrity_check`, and how often each title is stored.
fn check(db: &Path, titles: &[String]) -> (String, Vec<(String, i64)>) {
    let store = Store::new(Some(db.to_path_buf()));
    store
        .with(|conn| {
            let integrity: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .map_err(|e| ToolError::internal(e.to_string()))?;
            let mut counts = Vec::new();
            for title in titles {
                let n: i64 = conn
                    .query_row(
                        "SELECT COUNT(*) FROM notes WHERE title = ?1",
                        [title],
                        |r| r.get(0),
                    )
                    .map_err(|e| ToolError::internal(e.to_string()))?;
                counts.push((title.clone(), n));
            }
            Ok((integrity, counts))
        })
        .unwrap()
}

fn assert_each_once(counts: &[(String, i64)]) {
    let wrong: Vec<_> = counts.iter().filter(|(_, n)| *n != 1).collect();
    assert!(
        wrong.is_empty(),
        "acknowledged writes lost or duplicated: {wrong:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_write_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let mut server = serve(&db);
    let stop = tokio_util::sync::CancellationToken::new();
    let writers: Vec<_> = (0..4)
        .map(|w| tokio::spawn(writer(server.url.clone(), format!("w{w}"), stop.clone())))
        .collect();
    // Let writes pile up, then kill the server in the middle of them.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    #[cfg(unix)]
    signal_kill(&server);
    server.wait(Duration::from_secs(10));
    stop.cancel();
    let mut acked = Vec::new();
    for writer in writers {
        acked.extend(writer.await.unwrap());
    }
    assert!(acked.len() > 20, "writes were under way: {}", acked.len());

    // Restarted on the same database: intact, every acknowledged write there once.
    let restarted = serve(&db);
    let client = McpClient::connect_http(&restarted.url, McpHttpClientOptions::new())
        .await
        .unwrap();
    let after = collect_tool_outcome(
        client.invoke("notes.create", json!({ "title": "after the crash" })),
        |_| {},
    )
    .await
    .unwrap();
    assert!(after.data["id"].as_i64().unwrap() > 0);
    let found = collect_tool_outcome(
        client.invoke("notes.search", json!({ "query": acked[0] })),
        |_| {},
    )
    .await
    .unwrap();
    let hits = found.data["hits"].as_array().cloned().unwrap_or_default();
    assert!(hits.iter().any(|h| h["title"] == acked[0].as_str()));
    drop(client);
    drop(restarted);
    let (integrity, counts) = check(&db, &acked);
    assert_eq!(integrity, "ok");
    assert_each_once(&counts);
}

#[cfg(unix)]
fn signal_kill(server: &ServerProcess) {
    server.signal(libc::SIGKILL);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    let first = serve(&db);
    let second = serve(&db);
    let stop = tokio_util::sync::CancellationToken::new();
    let writers: Vec<_> = (0..6)
        .map(|w| {
            let url = if w % 2 == 0 { &first.url } else { &second.url };
            tokio::spawn(writer(
                url.clone(),
                format!("s{}-w{w}", w % 2),
                stop.clone(),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    stop.cancel();
    let mut acked = Vec::new();
    for writer in writers {
        let written = writer.await.unwrap();
        assert!(
            written.len() > 5,
            "every writer got through: {}",
            written.len()
        );
        acked.extend(written);
    }
    // Each server sees the other's writes.
    let reader = McpClient::connect_http(&second.url, McpHttpClientOptions::new())
        .await
        .unwrap();
    let from_first = acked.iter().find(|t| t.starts_with("s0-")).unwrap();
    let note = collect_tool_outcome(
        reader.invoke("notes.search", json!({ "query": from_first })),
        |_| {},
    )
    .await
    .unwrap();
    assert!(note.data["hits"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["title"] == from_first.as_str()));
    drop(reader);
    drop(first);
    drop(second);
    let (integrity, counts) = check(&db, &acked);
    assert_eq!(integrity, "ok");
    assert_each_once(&counts);
    let store = Arc::new(Store::new(Some(db.clone())));
    let rows: i64 = store
        .with(|c| {
            c.query_row("SELECT COUNT(*) FROM notes", [], |r| r.get(0))
                .map_err(|e| ToolError::internal(e.to_string()))
        })
        .unwrap();
    assert_eq!(
        rows as usize,
        acked.len(),
        "no write landed twice or unacknowledged"
    );
}
