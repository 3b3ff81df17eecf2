//! A real HTTP API — FastAPI on uvicorn (`tests/clients/todo_api.py`),
//! whose OpenAPI 3.1 document the framework generates — imported by
//! `gonk-gateway` from its `openapiServers` config and driven by the
//! official Python MCP client, its writes asked first under `--approval
//! ask`; transforms over it (a query argument and a body field hidden);
//! hostile documents beside it; and its document, behind the API's token,
//! failing at first and imported once it answers.

use std::process::Command;

use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::clients::{client_script, report};
use gonk_tools_tests::mcp_clients::{clients, run_python};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::bin;
use serde_json::{json, Value};

const API_TOKEN: &str = "todo-api-token-0123456789abcdef";
const BOB_KEY: &str = "openapi-bob-key-0123456789abcdef";
const OPERATOR_KEY: &str = "openapi-operator-key-0123456789abcdef";

/// The todo API on a free port.
pub fn todo_api() -> ServerProcess {
    let mut command = Command::new(&clients().openapi_python);
    command.arg(client_script("todo_api.py")).arg(API_TOKEN);
    ServerProcess::start_announcing(command, "serving HTTP at ")
}

/// The gateway in front of `api` (its token from the environment), with
/// `extra` merged into the config; bob may call `todo.*`, asked first.
pub fn gateway(api: &ServerProcess, extra: Value, dir: &std::path::Path) -> ServerProcess {
    gateway_with(api, extra, dir, &[], &[])
}

/// [`gateway`] with global options (`global`, before `serve`) and
/// options of `serve` (`serving`).
fn gateway_with(
    api: &ServerProcess,
    extra: Value,
    dir: &std::path::Path,
    global: &[&str],
    serving: &[&str],
) -> ServerProcess {
    let config = dir.join("gateway.json");
    let mut body = json!({
        "openapiServers": {"todo": {
            "spec": format!("{}/openapi.json", api.url),
            "headers": {"Authorization": "Bearer ${TODO_API_TOKEN}"},
        }},
        "callers": {"bob": {"key": BOB_KEY, "tools": ["todo.*"]}},
    });
    if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
        body.extend(extra);
    }
    std::fs::write(&config, body.to_string()).unwrap();
    let mut command = Command::new(bin("gonk-gateway"));
    command
        .env("TODO_API_TOKEN", API_TOKEN)
        .arg("--config")
        .arg(&config)
        .args(global)
        .args(["serve", "--port", "0"])
        .args(serving);
    ServerProcess::start(command)
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} is listed: {}", report["tools"]))
}

fn result<'a>(report: &'a Value, index: usize, name: &str) -> &'a Value {
    let call = &report["calls"][index];
    assert_eq!(call["name"], name, "call {index}");
    &call["result"]
}

#[test]
fn the_python_client_creates_reads_lists_and_deletes_and_is_asked_under_approval_ask() {
    let api = todo_api();
    let dir = tempfile::tempdir().unwrap();
    // The operator's key: without `--approval ask` its calls would run unasked.
    let gw = gateway_with(
        &api,
        json!({}),
        dir.path(),
        &["--approval", "ask"],
        &["--api-key", OPERATOR_KEY],
    );
    let seen = report(&run_python("python_openapi.py", &[&gw.url, OPERATOR_KEY]));

    let mut names: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "todo.crash",
            "todo.create_todo",
            "todo.delete_todo",
            "todo.get_todo",
            "todo.list_todos"
        ]
    );
    // The schemas FastAPI generated, inlined, without its prose.
    let create = tool(&seen, "todo.create_todo");
    assert_eq!(
        create["description"],
        "Remote OpenAPI operation todo/create_todo"
    );
    assert_eq!(
        create["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1, "maxLength": 200},
                "done": {"type": "boolean", "default": false},
            },
            "required": ["title"],
            "additionalProperties": false,
        }),
        "the JSON body's fields, flattened beside the (no) parameters"
    );
    assert_eq!(
        create["outputSchema"]["properties"]["id"],
        json!({"type": "integer"}),
        "{}",
        create["outputSchema"]
    );
    assert_eq!(
        tool(&seen, "todo.get_todo")["inputSchema"]["properties"],
        json!({"todo_id": {"type": "integer"}})
    );
    assert_eq!(
        tool(&seen, "todo.list_todos")["inputSchema"]["properties"],
        json!({
            "done": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
            "limit": {"type": "integer", "maximum": 100, "minimum": 1, "default": 10},
        })
    );
    assert_eq!(
        tool(&seen, "todo.delete_todo")["annotations"]["destructiveHint"],
        true
    );
    assert_eq!(
        tool(&seen, "todo.get_todo")["annotations"]["readOnlyHint"],
        true
    );

    let made = result(&seen, 0, "todo.create_todo");
    assert_eq!(
        made["structuredContent"],
        json!({"id": 1, "title": "buy milk", "done": false}),
        "created with the source's bearer token: {made}"
    );
    let read = result(&seen, 1, "todo.get_todo");
    assert_eq!(read["structuredContent"]["title"], "buy milk", "{read}");
    let listed = result(&seen, 2, "todo.list_todos");
    let text = listed["content"][0]["text"].as_str().unwrap();
    let listed: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        listed,
        json!([{"id": 1, "title": "buy milk", "done": false}])
    );
    let missing = result(&seen, 3, "todo.get_todo");
    assert_eq!(missing["isError"], true);
    let message = missing["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("HTTP 404") && message.contains("no todo 999"),
        "{message}"
    );
    let crash = result(&seen, 4, "todo.crash");
    assert_eq!(crash["isError"], true);
    let message = crash["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("HTTP 500"), "{message}");
    let deleted = result(&seen, 5, "todo.delete_todo");
    assert_ne!(deleted["isError"], true, "{deleted}");
    let gone = result(&seen, 6, "todo.get_todo");
    assert_eq!(gone["isError"], true, "deleted for real: {gone}");

    // Reads ran unasked; the write and the DELETE asked first (`--approval ask`).
    assert_eq!(
        seen["asked_by"],
        json!(["todo.create_todo", "todo.delete_todo"])
    );
    let question = seen["asked"][1]["message"].as_str().unwrap_or_default();
    assert!(
        question.starts_with("Allow todo.delete_todo to run? It needs exec approval."),
        "{}",
        seen["asked"]
    );
    let question = seen["asked"][0]["message"].as_str().unwrap_or_default();
    assert!(
        question.starts_with("Allow todo.create_todo to run? It needs write approval."),
        "{}",
        seen["asked"]
    );
}

const ALICE_KEY: &str = "openapi-alice-key-0123456789abcdef";

/// The listed tool names (sorted).
async fn names(client: &McpClient) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools/list answers")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

async fn call(client: &McpClient, name: &str, input: Value) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(client.invoke(name, input), |_| {}).await
}

fn listed_todos(output: &ToolOutput) -> Value {
    // The API's JSON array comes back as the call's data (an array is not
    // structured content over MCP: the client reads it from the text).
    assert!(
        output.data.is_array(),
        "the API's JSON array: {}",
        output.data
    );
    output.data.clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transformed_tool_replaces_the_original_and_its_hidden_argument_cannot_be_overridden() {
    let api = todo_api();
    let dir = tempfile::tempdir().unwrap();
    let transformed = json!({
        "callers": {"alice": {"key": ALICE_KEY, "tools": ["todo.*"], "approval": "granted"}},
        "transforms": {"todo.list_todos": {
            "name": "todo.open_todos",
            "description": "The todos still to do.",
            "arguments": {
                "done": {"hide": true, "default": false},
                "limit": {"rename": "max", "schema": {"type": "integer", "minimum": 1, "maximum": 3}},
            },
        }},
    });
    let gw = gateway(&api, transformed, dir.path());
    let alice = McpClient::connect_http(&gw.url, McpHttpClientOptions::new().api_key(ALICE_KEY))
        .await
        .expect("the gateway accepts alice");
    for body in [
        json!({"title": "open"}),
        json!({"title": "finished", "done": true}),
    ] {
        call(&alice, "todo.create_todo", body)
            .await
            .expect("created");
    }
    let listed = names(&alice).await;
    assert!(listed.contains(&"todo.open_todos".to_owned()), "{listed:?}");
    assert!(
        !listed.contains(&"todo.list_todos".to_owned()),
        "replaced: {listed:?}"
    );
    let tools = alice.list_tools().await.unwrap();
    let open = tools.iter().find(|t| t.name == "todo.open_todos").unwrap();
    assert_eq!(open.description.as_deref(), Some("The todos still to do."));
    assert_eq!(
        Value::Object((*open.input_schema).clone()),
        json!({
            "type": "object",
            "properties": {"max": {"type": "integer", "minimum": 1, "maximum": 3}},
            "additionalProperties": false,
        })
    );

    let only_open = call(&alice, "todo.open_todos", json!({}))
        .await
        .expect("runs");
    assert_eq!(
        listed_todos(&only_open),
        json!([{"id": 1, "title": "open", "done": false}])
    );
    let one = call(&alice, "todo.open_todos", json!({"max": 1}))
        .await
        .expect("runs");
    assert_eq!(listed_todos(&one).as_array().unwrap().len(), 1);
    for (input, why) in [
        (json!({"done": true}), "the hidden argument"),
        (json!({"max": 10}), "over the narrowed maximum"),
        (
            json!({"limit": 2}),
            "the original name of a renamed argument",
        ),
    ] {
        let error = call(&alice, "todo.open_todos", input).await.expect_err(why);
        assert_eq!(error.code, ErrorCode::InvalidInput, "{why}: {error:?}");
    }
    let gone = call(&alice, "todo.list_todos", json!({}))
        .await
        .expect_err("replaced");
    assert_eq!(gone.code, ErrorCode::ToolNotFound);

    // Without the transform, after a SIGHUP, the original is back.
    let config = dir.path().join("gateway.json");
    let mut body: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    body.as_object_mut().unwrap().remove("transforms");
    std::fs::write(&config, body.to_string()).unwrap();
    gw.signal(libc::SIGHUP);
    let mut now = names(&alice).await;
    for _ in 0..200 {
        if now.contains(&"todo.list_todos".to_owned()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        now = names(&alice).await;
    }
    assert!(
        now.contains(&"todo.list_todos".to_owned()) && !now.contains(&"todo.open_todos".to_owned()),
        "{now:?}"
    );
    let all = call(&alice, "todo.list_todos", json!({}))
        .await
        .expect("the original runs");
    assert_eq!(listed_todos(&all).as_array().unwrap().len(), 2);
    alice.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transformed_tool_hides_a_body_field_whose_default_the_caller_cannot_override() {
    let api = todo_api();
    let dir = tempfile::tempdir().unwrap();
    let transformed = json!({
        "callers": {"alice": {"key": ALICE_KEY, "tools": ["todo.*"], "approval": "granted"}},
        "transforms": {"todo.create_todo": {
            "name": "todo.log_done",
            "description": "Record something already done.",
            "arguments": {"done": {"hide": true, "default": true}},
        }},
    });
    let gw = gateway(&api, transformed, dir.path());
    let alice = McpClient::connect_http(&gw.url, McpHttpClientOptions::new().api_key(ALICE_KEY))
        .await
        .expect("the gateway accepts alice");
    let listed = names(&alice).await;
    assert!(
        listed.contains(&"todo.log_done".to_owned())
            && !listed.contains(&"todo.create_todo".to_owned()),
        "{listed:?}"
    );
    let tools = alice.list_tools().await.unwrap();
    let log_done = tools.iter().find(|t| t.name == "todo.log_done").unwrap();
    assert_eq!(
        Value::Object((*log_done.input_schema).clone()),
        json!({
            "type": "object",
            "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 200}},
            "required": ["title"],
            "additionalProperties": false,
        }),
        "the body field `done` is hidden"
    );
    let made = call(&alice, "todo.log_done", json!({"title": "shipped"}))
        .await
        .expect("runs");
    assert_eq!(
        made.data,
        json!({"id": 1, "title": "shipped", "done": true}),
        "the hidden field reached the API's body with its value"
    );
    let refused = call(
        &alice,
        "todo.log_done",
        json!({"title": "not really", "done": false}),
    )
    .await
    .expect_err("the hidden field cannot be given");
    assert_eq!(refused.code, ErrorCode::InvalidInput, "{refused:?}");
    let all = call(&alice, "todo.list_todos", json!({}))
        .await
        .expect("runs");
    assert_eq!(
        listed_todos(&all),
        json!([{"id": 1, "title": "shipped", "done": true}]),
        "nothing was created by the refused call"
    );
    alice.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_protected_document_that_cannot_be_read_at_start_is_imported_once_it_can() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let api = todo_api();
    // FastAPI's own document, served behind the API's token by a server
    // that answers 503 to its first two authorized fetches.
    let document = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .get(format!("{}/openapi.json", api.url))
        .send()
        .await
        .expect("FastAPI serves its document")
        .text()
        .await
        .unwrap();
    let fetched = Arc::new(AtomicUsize::new(0));
    let unauthorized = Arc::new(AtomicUsize::new(0));
    let app = {
        let (fetched, unauthorized) = (Arc::clone(&fetched), Arc::clone(&unauthorized));
        axum::Router::new().route(
            "/openapi.json",
            axum::routing::get(move |headers: axum::http::HeaderMap| {
                let expected = format!("Bearer {API_TOKEN}");
                let authorized = headers.get("authorization").and_then(|v| v.to_str().ok())
                    == Some(expected.as_str());
                let answer = if !authorized {
                    unauthorized.fetch_add(1, Ordering::SeqCst);
                    (axum::http::StatusCode::UNAUTHORIZED, String::new())
                } else if fetched.fetch_add(1, Ordering::SeqCst) < 2 {
                    (
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        "starting".to_owned(),
                    )
                } else {
                    (axum::http::StatusCode::OK, document.clone())
                };
                std::future::ready(answer)
            }),
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let spec = format!("http://{}/openapi.json", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "callers": {"alice": {"key": ALICE_KEY, "tools": ["todo.*"], "approval": "granted"}},
        "openapiServers": {"todo": {
            "spec": spec,
            "baseUrl": api.url,
            "headers": {"Authorization": "Bearer ${TODO_API_TOKEN}"},
        }},
    });
    let gw = gateway_with(&api, config, dir.path(), &["--health-interval", "1"], &[]);
    let alice = McpClient::connect_http(&gw.url, McpHttpClientOptions::new().api_key(ALICE_KEY))
        .await
        .expect("the gateway serves without the API");
    let waiting = call(&alice, "todo.list_todos", json!({}))
        .await
        .expect_err("not imported yet");
    assert_eq!(waiting.code, ErrorCode::RemoteUnavailable, "{waiting:?}");
    assert!(waiting.message.contains("HTTP 503"), "{}", waiting.message);
    let mut listed = names(&alice).await;
    for _ in 0..300 {
        if listed.contains(&"todo.create_todo".to_owned()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        listed = names(&alice).await;
    }
    assert_eq!(listed.len(), 5, "imported once it answered: {listed:?}");
    call(&alice, "todo.create_todo", json!({"title": "late"}))
        .await
        .expect("the API is served");
    assert_eq!(fetched.load(Ordering::SeqCst), 3, "two failures, then read");
    assert_eq!(
        unauthorized.load(Ordering::SeqCst),
        0,
        "every fetch carried the source's headers"
    );
    let stderr = gw.stderr_lines().join("\n");
    assert!(stderr.contains("imported todo"), "{stderr}");
    alice.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_documents_are_refused_and_the_gateway_serves_the_rest() {
    let api = todo_api();
    let dir = tempfile::tempdir().unwrap();
    let remote_ref = json!({"openapi": "3.1.0", "servers": [{"url": api.url}], "paths": {"/x": {"post": {
        "operationId": "x",
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "https://evil.example/s.json"}}}},
        "responses": {"200": {"description": "ok"}}}}}});
    std::fs::write(dir.path().join("remote.json"), remote_ref.to_string()).unwrap();
    let mut big = json!({"openapi": "3.1.0", "servers": [{"url": api.url}], "paths": {}});
    big["info"] = json!({"description": "x".repeat(50 << 20)});
    std::fs::write(dir.path().join("big.json"), big.to_string()).unwrap();
    // A server that accepts and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}/openapi.json", silent.local_addr().unwrap());
    let token = json!({"Authorization": "Bearer ${TODO_API_TOKEN}"});
    let gw = gateway(
        &api,
        json!({
            "callers": {"alice": {"key": ALICE_KEY, "tools": ["*"], "approval": "granted"}},
            "openapiServers": {
                "todo": {"spec": format!("{}/openapi.json", api.url), "headers": token},
                "remote": {"spec": "remote.json"},
                "big": {"spec": "big.json"},
                "silent": {"spec": silent_url, "timeout": 1},
            },
        }),
        dir.path(),
    );
    let stderr = gw.stderr_lines().join("\n");
    for expected in [
        "OpenAPI source remote: document refused: POST /x: $ref \"https://evil.example/s.json\" refused: only local references",
        "OpenAPI source big: the OpenAPI document",
        "is over 16777216 bytes",
        "OpenAPI source silent: the OpenAPI document",
        "did not arrive within 1s",
    ] {
        assert!(stderr.contains(expected), "{expected:?} in:\n{stderr}");
    }
    let alice = McpClient::connect_http(&gw.url, McpHttpClientOptions::new().api_key(ALICE_KEY))
        .await
        .expect("the gateway accepts alice");
    let listed = names(&alice).await;
    assert!(listed.iter().all(|n| n.starts_with("todo.")), "{listed:?}");
    assert_eq!(listed.len(), 5, "{listed:?}");
    call(&alice, "todo.list_todos", json!({}))
        .await
        .expect("the good API is served");
    alice.close().await.unwrap();
    drop(silent);
}
