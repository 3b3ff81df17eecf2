//! The replay model of `2026-07-28` multi-round-trip calls, observed from
//! outside: the retry runs the tool's body again with the recorded
//! answers, so work inside `ctx.once` runs once however many rounds the
//! call takes, while work left before a question outside it runs once per
//! round — which is why the docs say: ask before you act, or use `once`.
//! An in-process `serve_http` server, raw JSON-RPC over HTTP.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::raw_http::exchange;
use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::ask::Elicited;
use gonk_tools::prelude::*;
use serde_json::{json, Value};

#[derive(Deserialize, JsonSchema)]
struct Proceed {
    /// Go on?
    proceed: bool,
}

static GUARDED: AtomicUsize = AtomicUsize::new(0);
static UNGUARDED: AtomicUsize = AtomicUsize::new(0);

/// Counts a side effect inside `ctx.once`, then asks twice.
#[tool(approval = "read")]
async fn guarded_effect(ctx: &ToolContext) -> Result<String, ToolError> {
    let ran = ctx
        .once("effect", async {
            Ok::<_, ToolError>(GUARDED.fetch_add(1, Ordering::SeqCst) + 1)
        })
        .await?;
    let first = ctx.elicit::<Proceed>("First question").await?;
    let second = ctx.elicit::<Proceed>("Second question").await?;
    let yes =
        |answer: Elicited<Proceed>| matches!(answer, Elicited::Accepted(Proceed { proceed: true }));
    Ok(format!(
        "effect #{ran}, answers {} {}",
        yes(first),
        yes(second)
    ))
}

/// Counts a side effect before its question, outside `ctx.once`.
#[tool(approval = "read")]
async fn unguarded_effect(ctx: &ToolContext) -> Result<String, ToolError> {
    UNGUARDED.fetch_add(1, Ordering::SeqCst);
    ctx.elicit::<Proceed>("Go on?").await?;
    Ok("done".to_owned())
}

fn call(server: SocketAddr, tool: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} },
        },
    });
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    let body =
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {server}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}",
        body.len()
    );
    exchange(server, &head, body.as_bytes()).message()["result"].clone()
}

/// Answers every round's questions with `proceed: true` until the call
/// completes; returns the final result and how many rounds it took.
fn run_to_completion(server: SocketAddr, tool: &str) -> (Value, usize) {
    let mut result = call(server, tool, json!({}));
    let mut rounds = 1;
    while result["resultType"] == "input_required" {
        let answers: serde_json::Map<String, Value> = result["inputRequests"]
            .as_object()
            .expect("input requests")
            .keys()
            .map(|key| {
                (
                    key.clone(),
                    json!({ "action": "accept", "content": { "proceed": true } }),
                )
            })
            .collect();
        result = call(
            server,
            tool,
            json!({ "inputResponses": answers, "requestState": result["requestState"] }),
        );
        rounds += 1;
        assert!(rounds < 10, "the call never completed: {result}");
    }
    (result, rounds)
}

async fn server() -> SocketAddr {
    let registry = ToolRegistry::new();
    registry.register(GuardedEffect::definition()).unwrap();
    registry.register(UnguardedEffect::definition()).unwrap();
    let options = McpHttpOptions::new(McpServerOptions::new("replay", "1.0.0"));
    let server = serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry, options)
        .await
        .expect("serves");
    let addr = server.local_addr();
    // Serves until the test's runtime ends.
    tokio::spawn(async move { server.wait().await });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_inside_once_runs_once_across_rounds() {
    let addr = server().await;
    let (result, rounds) =
        tokio::task::spawn_blocking(move || run_to_completion(addr, "guarded_effect"))
            .await
            .unwrap();
    assert_eq!(
        rounds, 3,
        "one round per question, then the result: {result}"
    );
    // A string result without a display is its JSON text.
    assert_eq!(
        result["content"][0]["text"], "\"effect #1, answers true true\"",
        "{result}"
    );
    assert_eq!(GUARDED.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_before_a_question_outside_once_runs_each_round() {
    let addr = server().await;
    let (result, rounds) =
        tokio::task::spawn_blocking(move || run_to_completion(addr, "unguarded_effect"))
            .await
            .unwrap();
    assert_eq!(result["content"][0]["text"], "\"done\"", "{result}");
    assert_eq!(rounds, 2);
    // The replay model, stated: the body ran once per round.
    assert_eq!(UNGUARDED.load(Ordering::SeqCst), 2);
}
