//! Detached tools as tasks in the stateless era (`2026-07-28`): raw HTTP
//! requests, each declaring its protocol version and capabilities in its own
//! `_meta`, against a server with an embedded job runner and two callers.
//! A task is created by a detached call, read at once, polled to its result
//! and cancelled; a tool's error completes it, a panic fails it; a caller
//! without the tasks extension gets `-32021` from the `tasks/*` methods and
//! from a tool that runs only as a task; an unknown task, and another
//! caller's, is `-32602`. A 2025 session, which declares the extension at
//! `initialize`, is refused a task-only tool with an error result instead.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gonk_tools::adapters::http::{
    HttpAuthRejection, HttpRequestParts, HttpServer, HttpServerOptions,
};
use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
use gonk_tools::jobs::{self, EmbeddedRunner, Retention};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    policy_fn, AuthContext, AuthMethod, AuthenticatedPrincipal, AuthorizationDecision,
    PrincipalIdentity, PrincipalKind,
};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;

const TASKS: &str = "io.modelcontextprotocol/tasks";
const VERSION: &str = "2026-07-28";
const LEGACY_VERSION: &str = "2025-11-25";

#[derive(Deserialize, JsonSchema)]
struct BuildArgs {
    /// How long the build takes, in milliseconds.
    ms: u64,
}

/// Builds for `ms` milliseconds, reporting progress.
#[tool(approval = "read", detached)]
async fn build(input: BuildArgs, ctx: &ToolContext) -> Value {
    ctx.progress(10.0, Some("compiling".to_owned()));
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    json!({ "built": input.ms })
}

/// Always fails with its own error.
#[tool(approval = "read", detached)]
async fn broken() -> Result<Value, ToolError> {
    Err(ToolError::new(ErrorCode::custom("BROKEN"), "it is broken"))
}

/// Panics.
#[tool(approval = "read", detached)]
async fn crash() -> Value {
    panic!("crash panics on purpose")
}

/// Runs only as a task.
#[tool(approval = "read", detached)]
async fn release() -> Value {
    json!({ "released": true })
}

fn principal(id: &str) -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        id,
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", id, AuthMethod::Oauth),
    )
}

fn auth_for(id: &str) -> AuthContext {
    AuthContext::new(
        principal(id),
        policy_fn(|_| Ok(AuthorizationDecision::allow())),
    )
}

async fn server() -> HttpServer {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            Build::definition(),
            Broken::definition(),
            Crash::definition(),
            Release::definition(),
        ])
        .unwrap();
    let retention = Retention {
        max_finished: 100,
        max_age: Duration::from_secs(600),
    };
    jobs::install(
        &registry,
        Arc::new(EmbeddedRunner::with_retention(retention)),
    )
    .unwrap();
    let options = McpServerOptions::new("tasks-2026", "1.0.0").tasks_required(["release"]);
    let http = HttpServerOptions::new().authenticate(|request: &HttpRequestParts| {
        let token = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        async move {
            match token.as_deref() {
                Some("alice-token") => Ok(auth_for("alice")),
                Some("bob-token") => Ok(auth_for("bob")),
                _ => Err(HttpAuthRejection::unauthorized("unknown or missing token")),
            }
        }
    });
    let options = McpHttpOptions::new(options).http(http);
    serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry, options)
        .await
        .unwrap()
}

/// A caller over raw HTTP: in the stateless era every request carries its
/// own `_meta`; a 2025 caller opens a session instead.
struct Caller {
    url: String,
    token: &'static str,
    tasks: bool,
    session: Option<String>,
}

impl Caller {
    fn new(server: &HttpServer, token: &'static str, tasks: bool) -> Self {
        Caller {
            url: server.url(),
            token,
            tasks,
            session: None,
        }
    }

    fn capabilities(&self) -> Value {
        if self.tasks {
            json!({ "extensions": { TASKS: {} } })
        } else {
            json!({})
        }
    }

    /// A `2025-11-25` session, its capabilities declared at `initialize`.
    async fn session(server: &HttpServer, token: &'static str, tasks: bool) -> Self {
        let mut caller = Caller::new(server, token, tasks);
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": caller.capabilities(),
                "clientInfo": { "name": "raw-2025", "version": "1.0.0" },
            },
        });
        let opened = caller.post(&initialize, "initialize", None).await;
        let session = opened.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        drop(opened.bytes().await.unwrap());
        caller.session = Some(session);
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let acked = caller
            .post(&initialized, "notifications/initialized", None)
            .await;
        assert!(acked.status().is_success(), "{}", acked.status());
        caller
    }

    async fn post(&self, body: &Value, method: &str, name: Option<String>) -> reqwest::Response {
        let mut request = gonk_tools::adapters::http::OutboundHttp::new()
            .client()
            .expect("an HTTP client")
            .post(&self.url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .body(body.to_string());
        request = match &self.session {
            Some(session) => request
                .header("mcp-protocol-version", LEGACY_VERSION)
                .header("mcp-session-id", session),
            None if method == "initialize" => request,
            None => request
                .header("mcp-protocol-version", VERSION)
                .header("mcp-method", method),
        };
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        request.send().await.unwrap()
    }

    /// Sends one request; returns the JSON-RPC response (from a JSON body
    /// or from the SSE stream that carries it).
    async fn request(&self, method: &str, mut params: Value) -> Value {
        if self.session.is_none() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": self.capabilities(),
                "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "1.0.0" },
            });
        }
        let name = params
            .get("name")
            .or_else(|| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        let response = self.post(&body, method, name).await;
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = response.text().await.unwrap();
        if !sse {
            return serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        }
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id") == Some(&json!(1)))
            .unwrap_or_else(|| panic!("no response to {method} in {text}"))
    }

    async fn result(&self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    async fn error(&self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(response.get("result").is_none(), "{method}: {response}");
        response["error"].clone()
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        self.result(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
        .await
    }

    async fn get(&self, task: &str) -> Value {
        self.result("tasks/get", json!({ "taskId": task })).await
    }

    /// Polls `tasks/get` until the task leaves `working`.
    async fn settled(&self, task: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let got = self.get(task).await;
            if got["status"] != "working" {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "task {task} never settled: {got}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn task_id(created: &Value) -> String {
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_call_is_a_task_read_at_once_and_polled_to_its_result() {
    let server = server().await;
    let alice = Caller::new(&server, "alice-token", true);

    let created = alice.call("build", json!({ "ms": 300 })).await;
    let id = task_id(&created);
    assert!(id.starts_with("job-"), "{id}");
    assert_eq!(created["status"], "working");
    // The runner's retention, in whole milliseconds.
    assert_eq!(created["ttlMs"], 600_000);
    assert!(created["pollIntervalMs"].as_u64().unwrap() > 0);
    for field in ["createdAt", "lastUpdatedAt"] {
        assert!(created[field].as_str().unwrap().contains('T'), "{created}");
    }
    for absent in ["result", "error", "inputRequests", "requestState", "task"] {
        assert!(created.get(absent).is_none(), "{absent}: {created}");
    }

    // Readable the moment its id is known.
    let first = alice.get(&id).await;
    assert_eq!(first["taskId"], id.as_str());
    assert_eq!(first["resultType"], "complete");

    let done = alice.settled(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["built"], 300);
    assert_ne!(done["result"]["isError"], true);
    assert!(done.get("statusMessage").is_none(), "{done}");

    // Cancelling a task that ended is acknowledged and changes nothing.
    let ack = alice.result("tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(ack, json!({ "resultType": "complete" }));
    assert_eq!(alice.get(&id).await["status"], "completed");

    // A caller that waits gets the result inline, no task.
    let waited = alice.call("build", json!({ "ms": 1, "wait": true })).await;
    assert_eq!(waited["resultType"], "complete", "{waited}");
    assert_eq!(waited["structuredContent"]["built"], 1);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_task_is_cancelled_and_a_tool_error_completes_while_a_panic_fails() {
    let server = server().await;
    let alice = Caller::new(&server, "alice-token", true);

    let id = task_id(&alice.call("build", json!({ "ms": 60_000 })).await);
    let working = alice.get(&id).await;
    assert_eq!(working["status"], "working");
    assert!(working.get("result").is_none(), "{working}");
    let ack = alice.result("tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(ack, json!({ "resultType": "complete" }));
    let cancelled = alice.settled(&id).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(cancelled.get("result").is_none(), "{cancelled}");

    // The tool's own error: a completed call with isError.
    let id = task_id(&alice.call("broken", json!({})).await);
    let broken = alice.settled(&id).await;
    assert_eq!(broken["status"], "completed", "{broken}");
    assert_eq!(broken["result"]["isError"], true);
    assert_eq!(
        broken["result"]["structuredContent"]["error"]["code"],
        "BROKEN"
    );

    // A panic is not an answer of the tool: the task failed, with a
    // JSON-RPC error and no result.
    let id = task_id(&alice.call("crash", json!({})).await);
    let crashed = alice.settled(&id).await;
    assert_eq!(crashed["status"], "failed", "{crashed}");
    assert_eq!(crashed["error"]["code"], -32603);
    assert_eq!(crashed["error"]["data"]["code"], "INTERNAL");
    assert!(crashed["error"]["message"]
        .as_str()
        .unwrap()
        .contains("panicked"));
    assert!(crashed.get("result").is_none(), "{crashed}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_extension_the_task_methods_and_a_task_only_tool_answer_32021() {
    let server = server().await;
    let alice = Caller::new(&server, "alice-token", true);
    let plain = Caller::new(&server, "alice-token", false);
    let id = task_id(&alice.call("build", json!({ "ms": 60_000 })).await);

    for (method, params) in [
        ("tasks/get", json!({ "taskId": id })),
        ("tasks/cancel", json!({ "taskId": id })),
        (
            "tasks/update",
            json!({ "taskId": id, "inputResponses": {} }),
        ),
    ] {
        let error = plain.error(method, params).await;
        assert_eq!(error["code"], -32021, "{method}: {error}");
        assert!(
            error["data"]["requiredCapabilities"]["extensions"]
                .get(TASKS)
                .is_some(),
            "{method}: {error}"
        );
    }
    // Refused before it ran: the task is still working.
    assert_eq!(alice.get(&id).await["status"], "working");

    let refused = plain
        .error("tools/call", json!({ "name": "release", "arguments": {} }))
        .await;
    assert_eq!(refused["code"], -32021, "{refused}");
    assert!(
        refused["data"]["requiredCapabilities"]["extensions"]
            .get(TASKS)
            .is_some(),
        "{refused}"
    );
    // With the extension it is a task like any other.
    let released = alice
        .settled(&task_id(&alice.call("release", json!({})).await))
        .await;
    assert_eq!(released["result"]["structuredContent"]["released"], true);

    // Another detached tool gives such a caller the job handle.
    let handle = plain.call("build", json!({ "ms": 1 })).await;
    assert_eq!(handle["resultType"], "complete", "{handle}");
    assert!(handle.get("taskId").is_none(), "{handle}");
    assert!(handle["structuredContent"]["jobId"]
        .as_str()
        .unwrap()
        .starts_with("job-"));

    alice.result("tasks/cancel", json!({ "taskId": id })).await;
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_task_and_another_callers_task_are_invalid_params() {
    let server = server().await;
    let alice = Caller::new(&server, "alice-token", true);
    let bob = Caller::new(&server, "bob-token", true);
    let id = task_id(&alice.call("build", json!({ "ms": 60_000 })).await);

    for caller in [&alice, &bob] {
        let error = caller
            .error("tasks/get", json!({ "taskId": "job-0-0" }))
            .await;
        assert_eq!(error["code"], -32602, "{error}");
    }
    // Bob cannot read, answer or cancel Alice's task: to him it does not exist.
    let unknown = bob.error("tasks/get", json!({ "taskId": "job-0-0" })).await;
    for (method, params) in [
        ("tasks/get", json!({ "taskId": id })),
        (
            "tasks/update",
            json!({ "taskId": id, "inputResponses": {} }),
        ),
        ("tasks/cancel", json!({ "taskId": id })),
    ] {
        let error = bob.error(method, params).await;
        assert_eq!(error["code"], -32602, "{method}: {error}");
        assert_eq!(
            error["message"],
            unknown["message"].as_str().unwrap().replace("job-0-0", &id),
            "{method}"
        );
    }
    assert_eq!(alice.get(&id).await["status"], "working");

    // Alice's own update is acknowledged; a job has no input requests, so
    // its keys are ignored and the task runs on.
    let ack = alice
        .result(
            "tasks/update",
            json!({ "taskId": id, "inputResponses": { "no-such-key": { "action": "accept" } } }),
        )
        .await;
    assert_eq!(ack, json!({ "resultType": "complete" }));
    assert_eq!(alice.get(&id).await["status"], "working");
    let error = alice
        .error(
            "tasks/update",
            json!({ "taskId": "job-0-0", "inputResponses": {} }),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");

    alice.result("tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(alice.settled(&id).await["status"], "cancelled");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_session_is_refused_a_task_only_tool_with_an_error_result() {
    let server = server().await;
    let plain = Caller::session(&server, "alice-token", false).await;
    let refused = plain.call("release", json!({})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let error = &refused["structuredContent"]["error"];
    assert_eq!(error["code"], "INPUT_UNAVAILABLE", "{refused}");
    assert!(
        error["details"]["requiredCapabilities"]["extensions"]
            .get(TASKS)
            .is_some(),
        "{refused}"
    );

    // Declared at `initialize`, the extension makes it a task.
    let tasks = Caller::session(&server, "alice-token", true).await;
    let created = tasks.call("release", json!({})).await;
    let released = tasks.settled(&task_id(&created)).await;
    assert_eq!(released["status"], "completed", "{released}");
    assert_eq!(released["result"]["structuredContent"]["released"], true);
    server.shutdown().await.unwrap();
}
