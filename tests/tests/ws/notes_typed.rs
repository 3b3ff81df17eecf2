//! The generated typed notes client (`NotesToolsClient`, from the notes
//! example's `toolset!`) over `WsClient`, against the real `notes serve`
//! process: every tool by type across a socket, errors with their codes,
//! progress before the result, and a second connection's broadcast.

use std::time::Duration;

use crate::support::{NotesServer, KEY};
use gonk_tools::adapters::ws::{WsClient, WsClientOptions};
use gonk_tools::client::call_with_events;
use gonk_tools::prelude::*;
use notes::tools::{
    CreateNote, ExportFormat, ExportNotes, ListNotes, NoteId, NotesExport, NotesToolsClient,
    RenameNote, SearchNotes,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typed_notes_client_works_over_a_websocket() {
    let server = NotesServer::start(&["--allow-writes"]);
    let url = server.ws_url();
    let connect = || WsClient::connect(&url, WsClientOptions::new().api_key(KEY));
    let notes = NotesToolsClient::new(connect().await.unwrap());
    let watcher = connect().await.unwrap();
    let mut broadcasts = watcher.broadcasts();

    let created = notes
        .notes_create(CreateNote {
            title: "Typed over ws".into(),
            body: "a socket in between".into(),
            tags: vec!["ws".into()],
        })
        .await
        .unwrap();
    assert_eq!((created.id, created.title.as_str()), (1, "Typed over ws"));
    let seen = tokio::time::timeout(Duration::from_secs(30), broadcasts.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seen.op, "notes.create");
    assert_eq!(seen.payload["id"], 1);

    assert_eq!(notes.notes_get(NoteId { id: 1 }).await.unwrap(), created);
    let found = notes
        .notes_search(SearchNotes {
            query: "socket".into(),
            limit: 5,
            include_archived: false,
        })
        .await
        .unwrap();
    assert_eq!(found.hits.len(), 1);
    assert_eq!(found.hits[0].title, "Typed over ws");
    let renamed = notes
        .notes_rename(RenameNote {
            id: 1,
            title: "Renamed over ws".into(),
        })
        .await
        .unwrap();
    assert_eq!(renamed.title, "Renamed over ws");
    let listed = notes
        .notes_list(ListNotes {
            limit: 10,
            include_archived: false,
        })
        .await
        .unwrap();
    assert_eq!(listed.notes, [renamed]);

    // Progress events arrive before the typed result.
    let mut progress = Vec::new();
    let export = call_with_events::<NotesExport>(
        notes.transport(),
        ExportNotes {
            format: ExportFormat::Json,
            include_archived: false,
            delay_ms: 0,
        },
        |event| {
            if let ToolEvent::Progress { percent, .. } = event {
                progress.push(percent.unwrap_or_default());
            }
        },
    )
    .await
    .unwrap();
    assert_eq!(export.count, 1);
    assert_eq!(progress, [100.0]);

    let archived = notes.notes_archive(NoteId { id: 1 }).await.unwrap();
    assert!(archived.archived);

    // A tool's own error and a schema violation keep their codes.
    let missing = notes.notes_get(NoteId { id: 999 }).await.unwrap_err();
    assert_eq!(missing.code().map(ErrorCode::as_str), Some("NOT_FOUND"));
    let invalid = notes.notes_get(NoteId { id: 0 }).await.unwrap_err();
    assert_eq!(invalid.code(), Some(&ErrorCode::InvalidInput));
    assert_eq!(invalid.tool_error().unwrap().issues()[0].path, "/id");

    notes.transport().close().await;
    assert!(notes.transport().is_closed());
    let after_close = notes.notes_get(NoteId { id: 1 }).await.unwrap_err();
    assert!(
        after_close
            .to_string()
            .contains("WebSocket transport failed"),
        "{after_close}"
    );
}
