//! The context a `tools/call` runs with: the request's cancellation, what
//! the tool sees of the request, the host's base context under the HTTP
//! caller's auth, and where what the tool logs and reports goes.

use serde_json::json;

use super::*;
use crate::adapters::mcp::McpRequestContext;
use crate::event::LogLevel;

/// What a tool saw of its request.
struct Request {
    cancellation: CancellationToken,
    id: RequestId,
    progress_token: Option<ProgressToken>,
    stateless: bool,
    version: Option<ProtocolVersion>,
}

fn probe(seen: &Seen<Request>) -> ToolDefinition {
    let seen = Arc::clone(seen);
    ToolDefinition::builder("probe")
        .description("Records what it sees of its request.")
        .approval(ApprovalTier::Read)
        .handler(move |_: NoInput, ctx: ToolContext| {
            let mcp = ctx.host::<McpRequestContext>().expect("the MCP request");
            *seen.lock().unwrap() = Some(Request {
                cancellation: ctx.cancellation().clone(),
                id: mcp.request_id().clone(),
                progress_token: mcp.progress_token().cloned(),
                stateless: mcp.is_stateless(),
                version: mcp.protocol_version(),
            });
            async { Ok::<_, ToolError>("seen") }
        })
        .build()
}

#[tokio::test]
async fn a_call_runs_with_the_requests_cancellation_and_sees_its_request() {
    let seen = Seen::default();
    let server = server(registry_of([probe(&seen)]));
    let mut context = session_request(&server, 7);
    context.meta.set_progress_token(progress_token("p-7"));
    let request_cancellation = context.ct.clone();
    let result = call(&server, "probe", json!({}), context).await.unwrap();
    assert_eq!(data(&result), "seen");

    let request = seen.lock().unwrap().take().expect("the tool ran");
    assert_eq!(request.id, RequestId::Number(7));
    assert_eq!(request.progress_token, Some(progress_token("p-7")));
    assert!(!request.stateless);
    assert_eq!(request.version, Some(ProtocolVersion::V_2025_11_25));
    // A client's `notifications/cancelled` cancels the request's token:
    // the tool's context is cancelled with it.
    assert!(!request.cancellation.is_cancelled());
    request_cancellation.cancel();
    assert!(request.cancellation.is_cancelled());
}

#[tokio::test]
async fn a_stateless_request_speaks_the_version_its_meta_names() {
    let seen = Seen::default();
    let server = server(registry_of([probe(&seen)]));
    let context = stateless_request(&server, 8, ClientCapabilities::default());
    call(&server, "probe", json!({}), context).await.unwrap();
    let request = seen.lock().unwrap().take().expect("the tool ran");
    assert!(request.stateless);
    assert_eq!(request.version, Some(ProtocolVersion::V_2026_07_28));
    assert_eq!(request.progress_token, None);
}

/// A tool that reports progress and logs at two levels.
fn chatty() -> ToolDefinition {
    ToolDefinition::builder("chatty")
        .description("Reports and logs.")
        .approval(ApprovalTier::Read)
        .handler(|_: NoInput, ctx: ToolContext| async move {
            ctx.progress(50.0, Some("half".to_owned()));
            ctx.log().debug("quiet");
            ctx.log().info("loud");
            Ok::<_, ToolError>("done")
        })
        .build()
}

/// The notifications a call of `chatty` sent into its answer, each as
/// `(method, progress token or log message)`.
async fn reports(context: RequestContext<RoleServer>, server: &McpServer) -> Vec<(String, Value)> {
    let mut context = context;
    let mut answer = answer_stream(&mut context);
    let result = call(server, "chatty", json!({}), context).await.unwrap();
    assert_eq!(data(&result), "done");
    sent(&mut answer)
        .into_iter()
        .map(|message| {
            let method = message["method"].as_str().unwrap().to_owned();
            let params = &message["params"];
            let detail = match method.as_str() {
                "notifications/progress" => params["progressToken"].clone(),
                _ => params["data"]["message"].clone(),
            };
            (method, detail)
        })
        .collect()
}

fn progress(token: &str) -> (String, Value) {
    ("notifications/progress".to_owned(), json!(token))
}

fn log(message: &str) -> (String, Value) {
    ("notifications/message".to_owned(), json!(message))
}

#[tokio::test]
async fn a_session_call_reports_progress_against_its_token_and_logs_at_the_sessions_level() {
    let server = server(registry_of([chatty()]));
    let mut context = session_request(&server, 1);
    context.meta.set_progress_token(progress_token("p-1"));
    assert_eq!(
        reports(context, &server).await,
        [progress("p-1"), log("loud")]
    );
    // Without a token there is nothing to report progress against; the
    // session's level (info by default) still lets log lines through.
    let context = session_request(&server, 2);
    assert_eq!(reports(context, &server).await, [log("loud")]);
}

#[tokio::test]
async fn a_session_hears_what_its_default_log_level_lets_through() {
    let options = McpServerOptions::new("unit", "1.0.0").default_log_level(LogLevel::Debug);
    let server = server_with(registry_of([chatty()]), options);
    let context = session_request(&server, 1);
    assert_eq!(reports(context, &server).await, [log("quiet"), log("loud")]);
}

#[tokio::test]
async fn a_stateless_call_sends_only_what_its_meta_asks_for() {
    let server = server(registry_of([chatty()]));
    // No progress token and no `logLevel`: nothing reaches the client.
    let context = stateless_request(&server, 1, ClientCapabilities::default());
    assert_eq!(reports(context, &server).await, []);

    let mut context = stateless_request(&server, 2, ClientCapabilities::default());
    context.meta.set_progress_token(progress_token("p-2"));
    assert_eq!(reports(context, &server).await, [progress("p-2")]);

    let mut context = stateless_request(&server, 3, ClientCapabilities::default());
    context.meta.set_log_level(rmcp::model::LoggingLevel::Debug);
    assert_eq!(reports(context, &server).await, [log("quiet"), log("loud")]);
}

/// A tool that answers who calls it and from where.
fn whoami() -> ToolDefinition {
    ToolDefinition::builder("whoami")
        .description("The caller and the working directory.")
        .approval(ApprovalTier::Read)
        .handler(|_: NoInput, ctx: ToolContext| async move {
            let who = ctx
                .auth()
                .map_or("anonymous".to_owned(), |auth| auth.principal().id.clone());
            Ok::<_, ToolError>(format!("{who}@{}", ctx.cwd().display()))
        })
        .build()
}

#[tokio::test]
async fn a_call_starts_from_the_hosts_base_context_and_the_http_callers_auth_wins() {
    let options = McpServerOptions::new("unit", "1.0.0").base_context(|| {
        ToolContext::new()
            .with_cwd("/srv/notes")
            .with_auth(auth_for("host"))
    });
    let server = server_with(registry_of([whoami()]), options);
    let context = session_request(&server, 1);
    let result = call(&server, "whoami", json!({}), context).await.unwrap();
    assert_eq!(data(&result), "host@/srv/notes");

    let mut context = session_request(&server, 2);
    with_auth(&mut context, auth_for("bob"));
    let result = call(&server, "whoami", json!({}), context).await.unwrap();
    assert_eq!(data(&result), "bob@/srv/notes");

    // Without a base context: no auth but the caller's.
    let bare = super::server(registry_of([whoami()]));
    let context = session_request(&bare, 3);
    let result = call(&bare, "whoami", json!({}), context).await.unwrap();
    let who = data(&result);
    assert!(who.as_str().unwrap().starts_with("anonymous@"), "{who}");
}

/// The host's own value, set in the server's base context.
struct Agent(&'static str);

#[tokio::test]
async fn a_call_sees_the_hosts_value_beside_its_mcp_request() {
    let options = McpServerOptions::new("unit", "1.0.0")
        .base_context(|| ToolContext::new().with_host(Agent("planner")));
    let tool = ToolDefinition::builder("agent")
        .description("Names the invoking agent and the request.")
        .approval(ApprovalTier::Read)
        .handler(|_: NoInput, ctx: ToolContext| async move {
            let agent = ctx.host::<Agent>().map(|agent| agent.0);
            let request = ctx
                .host::<McpRequestContext>()
                .map(|mcp| mcp.request_id().clone());
            Ok::<_, ToolError>(format!("{agent:?} {request:?}"))
        })
        .build();
    let server = server_with(registry_of([tool]), options);
    let context = session_request(&server, 4);
    let result = call(&server, "agent", json!({}), context).await.unwrap();
    assert_eq!(data(&result), "Some(\"planner\") Some(Number(4))");
}
