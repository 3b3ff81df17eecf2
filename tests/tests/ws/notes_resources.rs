//! Resources and prompts over the WebSocket: the real `notes serve`
//! process, read by `WsClient` — `resources/list`, `resources/read` (the
//! note as Markdown with its tags in `_meta`; a missing note
//! `RESOURCE_NOT_FOUND`), `prompts/list`, `prompts/get` with the note
//! embedded, and the typed `client.read::<R>(params)` over the socket —
//! and the projection's entry gate, which sees the resource's read
//! definition and filters listings (fail closed).

use gonk_tools::adapters::ws::{HookError, WsClient, WsClientOptions, WsHandler, WsRequest};
use gonk_tools::client::{ReadResource, Transport};
use gonk_tools::prelude::*;
use gonk_tools::resource::ResourceDefinition;
use serde_json::Value;

use crate::support::{NotesServer, KEY};

use notes::resources::NoteResource;

async fn op(client: &WsClient, name: &str, input: Value) -> Result<Value, ToolError> {
    collect_tool_outcome(client.invoke(name, input), |_| {})
        .await
        .map(|output| output.data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_resources_and_prompts_over_a_real_socket() {
    let server = NotesServer::start(&["--allow-writes"]);
    let client = WsClient::connect(&server.ws_url(), WsClientOptions::new().api_key(KEY))
        .await
        .unwrap();
    op(
        &client,
        "notes.create",
        json!({"title": "Socket note", "body": "over ws", "tags": ["ws", "demo"]}),
    )
    .await
    .unwrap();

    let listed = op(&client, "resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    // The notes board (an MCP App's page) is a resource like the others.
    assert_eq!(
        uris,
        [
            "ui://notes/board",
            "notes://{id}",
            "notes://recent",
            "notes://tag/{tag}"
        ]
    );

    let read = op(&client, "resources/read", json!({"uri": "notes://1"}))
        .await
        .unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], "notes://1");
    assert_eq!(contents["mimeType"], "text/markdown");
    assert!(contents["text"]
        .as_str()
        .unwrap()
        .starts_with("# Socket note\n\nover ws"));
    assert_eq!(contents["_meta"]["tags"], json!(["ws", "demo"]));

    let missing = op(&client, "resources/read", json!({"uri": "notes://42"}))
        .await
        .unwrap_err();
    assert_eq!(missing.code, ErrorCode::ResourceNotFound);
    let no_uri = op(&client, "resources/read", json!({})).await.unwrap_err();
    assert_eq!(no_uri.code, ErrorCode::InvalidInput);
    assert!(no_uri.message.contains("`uri`"), "{}", no_uri.message);

    let prompts = op(&client, "prompts/list", json!({})).await.unwrap();
    assert_eq!(prompts["prompts"][0]["name"], "summarize");
    assert_eq!(
        prompts["prompts"][0]["arguments"],
        json!([
            {"name": "id", "description": "The id of the note to summarize.", "required": true},
            {"name": "style", "description": "How: `brief` (one paragraph, the default), `bullets` or `detailed`.", "required": false},
        ])
    );
    let got = op(
        &client,
        "prompts/get",
        json!({"name": "summarize", "arguments": {"id": "1", "style": "bullets"}}),
    )
    .await
    .unwrap();
    assert_eq!(got["messages"][0]["content"]["type"], "resource");
    assert_eq!(
        got["messages"][0]["content"]["resource"]["uri"],
        "notes://1"
    );
    assert_eq!(
        got["messages"][1]["content"]["text"],
        "Summarize this note as a few bullet points."
    );
    let unknown = op(&client, "prompts/get", json!({"name": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::PromptNotFound);

    // The typed read: the URI from the type, the read over the socket.
    let typed = client.read::<NoteResource>(1).await.unwrap();
    assert_eq!(typed[0].uri, "notes://1");
    assert!(typed[0].as_text().unwrap().starts_with("# Socket note"));
    let typed_missing = client.read::<NoteResource>(42).await.unwrap_err();
    assert_eq!(typed_missing.code(), Some(&ErrorCode::ResourceNotFound));
    client.close().await;
}

#[tokio::test]
async fn the_entry_gate_sees_the_resource_and_filters_listings() {
    let registry = ToolRegistry::new();
    for uri in ["public://{id}", "secret://{id}"] {
        #[derive(Deserialize, JsonSchema)]
        struct Id {
            id: u32,
        }
        registry
            .register_resource(
                ResourceDefinition::builder(uri)
                    .handler(|v: Id, _| async move { Ok::<_, ToolError>(format!("item {}", v.id)) })
                    .build(),
            )
            .unwrap();
    }
    let handler = WsHandler::builder(&registry)
        .authorize(|def, _: &(), _| Ok::<_, HookError>(!def.name.starts_with("secret")))
        .build();
    let listed = handler
        .handle(WsRequest::new("resources/list", json!({})), &())
        .await
        .into_result()
        .unwrap();
    assert_eq!(listed["resources"].as_array().unwrap().len(), 1);
    assert_eq!(listed["resources"][0]["uri"], "public://{id}");
    let read = handler
        .handle(
            WsRequest::new("resources/read", json!({"uri": "public://3"})),
            &(),
        )
        .await
        .into_result()
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "item 3");
    let denied = handler
        .handle(
            WsRequest::new("resources/read", json!({"uri": "secret://3"})),
            &(),
        )
        .await
        .into_result()
        .unwrap_err();
    assert_eq!(denied.code, ErrorCode::AuthorizationDenied);
    assert_eq!(denied.message, "Not authorized to invoke resources/read");

    // A gate that fails refuses (fail closed), for a listing too.
    let failing = WsHandler::builder(&registry)
        .authorize(|_, _: &(), _| Err::<bool, _>("the session store is down"))
        .build();
    let error = failing
        .handle(WsRequest::new("resources/list", json!({})), &())
        .await
        .into_result()
        .unwrap_err();
    assert!(
        error.message.contains("the session store is down"),
        "{}",
        error.message
    );
}
