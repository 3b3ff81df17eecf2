//! The sealed `requestState` of `2026-07-28` multi-round-trip calls, at the
//! HTTP level with raw JSON-RPC: the real `notes serve --approval ask` asks
//! before `notes.create`, and a retry whose state was altered, already
//! used, or has expired is refused with `-32602` — nothing runs, nothing is
//! written. Consent cannot be volunteered without the question's state.
//! Two `conformance` processes that share `GONK_MCP_REQUEST_STATE_KEYS`
//! accept each other's states; with different keys they refuse them.

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use crate::support::raw_http::{exchange, Answer};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::{bin, notes_command};
use serde_json::{json, Value};

const INVALID_PARAMS: i64 = -32602;

fn addr(url: &str) -> SocketAddr {
    let authority = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("an authority");
    authority.parse().expect("an IP:port URL")
}

/// A stateless `tools/call` of `tool` from a client that can elicit, with
/// `extra` merged into its params (`inputResponses`, `requestState`).
fn call(server: SocketAddr, id: u64, tool: &str, arguments: Value, extra: Value) -> Answer {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { "elicitation": {}, "sampling": {}, "roots": {} },
        },
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    let body =
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {server}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}",
        body.len()
    );
    exchange(server, &head, body.as_bytes())
}

fn approve() -> Value {
    json!({ "action": "accept", "content": { "approve": true } })
}

/// The first round: the question and its state.
fn asked(server: SocketAddr, title: &str) -> (String, String) {
    let answer = call(
        server,
        1,
        "notes.create",
        json!({ "title": title }),
        json!({}),
    );
    let result = answer.message()["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let key = result["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .expect("one input request");
    assert_eq!(
        result["inputRequests"][&key]["method"],
        "elicitation/create"
    );
    let state = result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    (key, state)
}

fn retry(server: SocketAddr, title: &str, key: &str, state: &str) -> Value {
    call(
        server,
        2,
        "notes.create",
        json!({ "title": title }),
        json!({ "inputResponses": { key: approve() }, "requestState": state }),
    )
    .message()
}

/// How many notes titled `title` the server holds.
fn notes_titled(server: SocketAddr, title: &str) -> usize {
    let answer = call(
        server,
        9,
        "notes.search",
        json!({ "query": title }),
        json!({}),
    );
    let hits = answer.message()["result"]["structuredContent"]["hits"].clone();
    hits.as_array().map_or(0, |hits| {
        hits.iter().filter(|h| h["title"] == title).count()
    })
}

fn refused(message: &Value, why: &str) {
    assert_eq!(message["error"]["code"], INVALID_PARAMS, "{message}");
    assert_eq!(message["error"]["data"]["requestState"], why, "{message}");
}

fn notes_serve(extra: &[&str]) -> (tempfile::TempDir, ServerProcess) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let db = dir.path().join("notes.db").display().to_string();
    let mut command = notes_command();
    command
        .args(["--db", &db, "serve", "--port", "0", "--approval", "ask"])
        .args(extra);
    (dir, ServerProcess::start(command))
}

#[test]
fn a_tampered_state_is_refused_and_nothing_runs() {
    let (_dir, server) = notes_serve(&[]);
    let at = addr(&server.url);
    let (key, state) = asked(at, "tampered");
    // One character of the signed payload changed.
    let mut bytes = state.into_bytes();
    let middle = bytes.len() / 2;
    bytes[middle] = if bytes[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    refused(&retry(at, "tampered", &key, &tampered), "tampered");
    // Another input under the same state is foreign to it.
    let (key, state) = asked(at, "tampered");
    refused(&retry(at, "something else", &key, &state), "tampered");
    assert_eq!(notes_titled(at, "tampered"), 0);
    assert_eq!(notes_titled(at, "something else"), 0);
}

#[test]
fn a_state_is_good_for_one_retry() {
    let (_dir, server) = notes_serve(&[]);
    let at = addr(&server.url);
    let (key, state) = asked(at, "once");
    let done = retry(at, "once", &key, &state);
    assert_eq!(done["result"]["isError"], false, "{done}");
    refused(&retry(at, "once", &key, &state), "replayed");
    assert_eq!(notes_titled(at, "once"), 1);
}

#[test]
fn consent_cannot_be_volunteered_without_the_questions_state() {
    let (_dir, server) = notes_serve(&[]);
    let at = addr(&server.url);
    let (key, _) = asked(at, "volunteered");
    let answer = call(
        at,
        3,
        "notes.create",
        json!({ "title": "volunteered" }),
        json!({ "inputResponses": { key: approve() } }),
    )
    .message();
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    assert_eq!(notes_titled(at, "volunteered"), 0);
}

fn conformance(keys: Option<&str>, ttl: Option<&str>) -> ServerProcess {
    let mut command = Command::new(bin("conformance"));
    command.args(["--port", "0"]);
    if let Some(ttl) = ttl {
        command.args(["--request-state-ttl", ttl]);
    }
    match keys {
        Some(keys) => command.env("GONK_MCP_REQUEST_STATE_KEYS", keys),
        None => command.env_remove("GONK_MCP_REQUEST_STATE_KEYS"),
    };
    ServerProcess::start(command)
}

const TOOL: &str = "test_input_required_result_request_state";

fn ask_confirm(server: SocketAddr) -> String {
    let first = call(server, 1, TOOL, json!({}), json!({})).message();
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    first["result"]["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

fn confirm(server: SocketAddr, state: &str) -> Value {
    let answers = json!({ "confirm": { "action": "accept", "content": { "ok": true } } });
    call(
        server,
        2,
        TOOL,
        json!({}),
        json!({ "inputResponses": answers, "requestState": state }),
    )
    .message()
}

const KEY_A: &str = "a=YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=";
const KEY_B: &str = "b=YmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmI=";

#[test]
fn a_retry_lands_on_another_process_that_shares_the_keys() {
    let first = conformance(Some(KEY_A), None);
    let second = conformance(Some(KEY_A), None);
    let state = ask_confirm(addr(&first.url));
    let done = confirm(addr(&second.url), &state);
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("state-ok"), "{done}");
}

#[test]
fn a_process_with_other_keys_refuses_the_state() {
    let first = conformance(Some(KEY_A), None);
    let other = conformance(Some(KEY_B), None);
    let state = ask_confirm(addr(&first.url));
    refused(&confirm(addr(&other.url), &state), "tampered");
    // A rotated ring (B current, A previous) still opens A's states.
    let rotated = conformance(Some(&format!("{KEY_B},{KEY_A}")), None);
    let done = confirm(addr(&rotated.url), &state);
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
}

#[test]
fn an_expired_state_is_refused() {
    let server = conformance(None, Some("1"));
    let at = addr(&server.url);
    let state = ask_confirm(at);
    // Past the one-second lifetime (a bound, not a timing assertion).
    std::thread::sleep(Duration::from_millis(2500));
    refused(&confirm(at, &state), "expired");
}

/// Removes this test's keys from the binary's Redis on drop.
struct RedisPrefix(String);

impl Drop for RedisPrefix {
    fn drop(&mut self) {
        // A failed test (maybe one whose server never started) leaves its
        // keys to the binary's own server, gone when the binary exits.
        if std::thread::panicking() {
            return;
        }
        let client = redis::Client::open(gonk_tools_tests::services::redis().url()).unwrap();
        let mut connection = client.get_connection().unwrap();
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:*", self.0))
            .query(&mut connection)
            .unwrap();
        if !keys.is_empty() {
            let _: () = redis::cmd("DEL").arg(keys).query(&mut connection).unwrap();
        }
    }
}

/// Two in-process HTTP servers (replicas) sharing the key ring; each
/// remembers used states in `store(i)`. The one tool asks for a
/// confirmation and answers `state-ok` once given it.
async fn replicas(
    store: impl Fn(usize) -> Option<std::sync::Arc<dyn gonk_tools::adapters::mcp::SingleUseStore>>,
) -> Vec<gonk_tools::adapters::http::HttpServer> {
    use gonk_tools::adapters::mcp::{
        serve_http, McpHttpOptions, McpServerOptions, RequestStateKeys,
    };
    use gonk_tools::ask::InputRequest;
    use gonk_tools::prelude::*;
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder(TOOL)
                .description("Ask for a confirmation.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
                    let question = InputRequest::elicit("Please confirm", schema);
                    ctx.ask(vec![("confirm".to_owned(), question)]).await?;
                    Ok::<_, ToolError>("state-ok")
                })
                .build(),
        )
        .unwrap();
    let mut servers = Vec::new();
    for i in 0..2 {
        let mut options = McpServerOptions::new("replica", "1")
            .request_state_keys(RequestStateKeys::parse(KEY_A).unwrap());
        if let Some(store) = store(i) {
            options = options.request_state_store(store);
        }
        let server = serve_http(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            registry.clone(),
            McpHttpOptions::new(options),
        )
        .await
        .unwrap();
        servers.push(server);
    }
    servers
}

/// [`confirm`] off the async workers (the raw exchange blocks).
async fn confirm_on(server: SocketAddr, state: &str) -> Value {
    let state = state.to_owned();
    tokio::task::spawn_blocking(move || confirm(server, &state))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_used_on_one_replica_is_refused_on_another_that_shares_the_store() {
    let prefix = RedisPrefix(format!("gonk-tests:request-state:{}", std::process::id()));
    let shared = {
        let prefix = prefix.0.clone();
        move |_| {
            let store = gonk_tools::adapters::mcp::RedisSingleUseStore::new(
                &gonk_tools_tests::services::redis().url(),
                prefix.clone(),
            )
            .unwrap();
            Some(std::sync::Arc::new(store) as std::sync::Arc<_>)
        }
    };
    let servers = replicas(shared).await;
    let (one, two) = (addr(&servers[0].url()), addr(&servers[1].url()));
    let state = tokio::task::spawn_blocking(move || ask_confirm(one))
        .await
        .unwrap();
    let done = confirm_on(two, &state).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    // Used on replica 2: replica 1 (and 2 again) refuse it.
    refused(&confirm_on(one, &state).await, "replayed");
    refused(&confirm_on(two, &state).await, "replayed");

    // Each process on its own store: the replay passes on the other one —
    // what the shared store is for.
    let servers = replicas(|_| None).await;
    let (one, two) = (addr(&servers[0].url()), addr(&servers[1].url()));
    let state = tokio::task::spawn_blocking(move || ask_confirm(one))
        .await
        .unwrap();
    assert_eq!(
        confirm_on(two, &state).await["result"]["resultType"],
        "complete"
    );
    assert_eq!(
        confirm_on(one, &state).await["result"]["resultType"],
        "complete"
    );
    refused(&confirm_on(one, &state).await, "replayed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_is_refused_while_the_shared_store_is_unreachable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let down = move |_| {
        let store = gonk_tools::adapters::mcp::RedisSingleUseStore::new(
            &format!("redis://127.0.0.1:{port}"),
            "gonk-tests:down",
        )
        .unwrap();
        Some(std::sync::Arc::new(store) as std::sync::Arc<_>)
    };
    let servers = replicas(down).await;
    let one = addr(&servers[0].url());
    let state = tokio::task::spawn_blocking(move || ask_confirm(one))
        .await
        .unwrap();
    let answer = confirm_on(one, &state).await;
    refused(&answer, "unchecked");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("single-use store is unreachable"),
        "{answer}"
    );
}
