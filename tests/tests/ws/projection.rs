//! The WebSocket projection (`gonk_tools::adapters::ws`), transport-agnostic: every
//! rule of the request/reply handler, the entry gate, the context factory
//! and broadcast, against a fixture registry.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use gonk_tools::adapters::ws::{
    broadcasts_by_default, HookError, WsAuthorize, WsBroadcast, WsEvent, WsHandler, WsReply,
    WsRequest,
};
use gonk_tools::definition::{AuthorizationSpec, McpAnnotations, McpHints};
use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::log_capture::Capture;
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

#[derive(Deserialize, JsonSchema)]
struct Text {
    #[schemars(length(min = 1))]
    text: String,
}

/// Counts handler runs.
#[derive(Clone, Default)]
struct Runs(Arc<AtomicUsize>);

impl Runs {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

fn annotated(read_only: Option<bool>) -> McpHints {
    McpHints {
        annotations: McpAnnotations {
            read_only,
            ..McpAnnotations::default()
        },
        ..McpHints::default()
    }
}

/// A tool answering `{"tool": NAME, "text": …}`, counting its runs.
fn tool(name: &str, read_only: Option<bool>, runs: &Runs) -> gonk_tools::definition::ToolBuilder {
    let runs = runs.clone();
    let tool_name = name.to_owned();
    ToolDefinition::builder(name)
        .description("A fixture tool.")
        .approval(ApprovalTier::Read)
        .mcp(annotated(read_only))
        .handler(move |input: Text, _ctx| {
            runs.0.fetch_add(1, Ordering::SeqCst);
            let tool_name = tool_name.clone();
            async move { Ok::<_, ToolError>(json!({"tool": tool_name, "text": input.text})) }
        })
}

struct Fixture {
    registry: ToolRegistry,
    runs: Runs,
}

fn fixture() -> Fixture {
    let runs = Runs::default();
    let registry = ToolRegistry::new();
    registry
        .register_all([
            tool("echo", Some(true), &runs).build(),
            tool("note.write", Some(false), &runs).build(),
            tool("note.unannotated", None, &runs).build(),
            tool("admin.write", Some(false), &runs)
                .authorization(AuthorizationSpec {
                    required_role: Some("admin".into()),
                    ..AuthorizationSpec::default()
                })
                .build(),
            tool("empty.callers.write", Some(false), &runs)
                .authorization(AuthorizationSpec {
                    allowed_callers: Vec::new(),
                    ..AuthorizationSpec::default()
                })
                .build(),
            tool("blank.role.write", Some(false), &runs)
                .authorization(AuthorizationSpec {
                    required_role: Some(String::new()),
                    ..AuthorizationSpec::default()
                })
                .build(),
            tool("skipped", Some(true), &runs)
                .requires(|| false)
                .build(),
            ToolDefinition::builder("fails.write")
                .description("Always fails with its own code.")
                .approval(ApprovalTier::Read)
                .mcp(annotated(Some(false)))
                .handler(|_: Empty, _| async {
                    Err::<(), _>(ToolError::new(
                        ErrorCode::custom("NOTE_LOCKED"),
                        "Note 7 is locked",
                    ))
                })
                .build(),
            ToolDefinition::builder("multi")
                .description("Streams progress and two results.")
                .approval(ApprovalTier::Read)
                .stream_handler(|_: Empty, _| async {
                    futures::stream::iter(vec![
                        ToolEvent::progress(10.0, Some("first".to_owned())),
                        ToolEvent::result(json!(1)),
                        ToolEvent::log(LogLevel::Info, "between"),
                        ToolEvent::result(json!(2)),
                    ])
                })
                .build(),
            ToolDefinition::builder("result.then.error")
                .description("A result, then an error.")
                .approval(ApprovalTier::Read)
                .mcp(annotated(Some(false)))
                .stream_handler(|_: Empty, _| async {
                    futures::stream::iter(vec![
                        ToolEvent::result(json!("early")),
                        ToolEvent::error(ToolError::internal("broke after the result")),
                    ])
                })
                .build(),
            ToolDefinition::builder("duplex.talk")
                .description("A duplex tool.")
                .approval(ApprovalTier::Read)
                .capabilities(Capabilities {
                    duplex: true,
                    ..Capabilities::default()
                })
                .handler(|_: Empty, _| async { Ok::<_, ToolError>(()) })
                .build(),
        ])
        .unwrap();
    Fixture { registry, runs }
}

fn request(op: &str, input: Value) -> WsRequest {
    WsRequest::new(op, input).with_req_id("r1")
}

fn error_of(reply: WsReply) -> ToolError {
    match reply {
        WsReply::Error { .. } => reply.into_result().unwrap_err(),
        other => panic!("expected an error reply, got {other:?}"),
    }
}

/// Records every broadcast.
#[derive(Clone, Default)]
struct Broadcasts(Arc<Mutex<Vec<WsBroadcast>>>);

impl Broadcasts {
    fn emitter(&self) -> impl Fn(&WsBroadcast) -> Result<(), HookError> + Send + Sync + 'static {
        let seen = self.0.clone();
        move |message: &WsBroadcast| {
            seen.lock().unwrap().push(message.clone());
            Ok(())
        }
    }

    fn ops(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|b| b.op.clone())
            .collect()
    }
}

// ---------------------------------------------------------------- replies

#[tokio::test]
async fn a_result_reply_echoes_the_req_id() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry).build();
    let reply = handler
        .handle(request("echo", json!({"text": "hi"})), &())
        .await;
    assert_eq!(
        serde_json::to_value(&reply).unwrap(),
        json!({"type": "result", "reqId": "r1", "result": {"tool": "echo", "text": "hi"}})
    );
    // Numeric ids come back as numbers.
    let reply = handler
        .handle(
            WsRequest::new("echo", json!({"text": "n"})).with_req_id(42),
            &(),
        )
        .await;
    assert_eq!(reply.req_id(), Some(&json!(42)));
}

#[tokio::test]
async fn a_request_without_req_id_gets_a_reply_without_the_key() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry).build();
    let ok = handler
        .handle(WsRequest::new("echo", json!({"text": "hi"})), &())
        .await;
    let ok = serde_json::to_value(&ok).unwrap();
    assert_eq!(ok["type"], "result");
    assert!(ok.as_object().unwrap().get("reqId").is_none(), "{ok}");
    let failed = handler.handle(WsRequest::new("nope", json!({})), &()).await;
    let failed = serde_json::to_value(&failed).unwrap();
    assert_eq!(failed["type"], "error");
    assert!(
        failed.as_object().unwrap().get("reqId").is_none(),
        "{failed}"
    );
}

#[tokio::test]
async fn a_handler_error_is_an_error_reply_with_its_message_and_code() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry).build();
    let reply = handler.handle(request("fails.write", json!({})), &()).await;
    assert_eq!(
        serde_json::to_value(&reply).unwrap(),
        json!({"type": "error", "reqId": "r1", "message": "Note 7 is locked", "code": "NOTE_LOCKED"})
    );
}

#[tokio::test]
async fn invalid_input_is_an_error_reply_with_the_issues() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry).build();
    let error = error_of(
        handler
            .handle(request("echo", json!({"text": ""})), &())
            .await,
    );
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(error.issues()[0].path, "/text");
    assert_eq!(f.runs.get(), 0);
}

#[tokio::test]
async fn when_a_stream_yields_several_results_the_last_one_wins() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry).build();
    let reply = handler.handle(request("multi", json!({})), &()).await;
    assert_eq!(reply, WsReply::result(Some(json!("r1")), json!(2)));
}

#[tokio::test]
async fn a_result_followed_by_an_error_is_an_error() {
    let f = fixture();
    let broadcasts = Broadcasts::default();
    let handler = WsHandler::builder(&f.registry)
        .emitter(broadcasts.emitter())
        .build();
    let error = error_of(
        handler
            .handle(request("result.then.error", json!({})), &())
            .await,
    );
    assert_eq!(error.code, ErrorCode::Internal);
    assert_eq!(error.message, "broke after the result");
    // A write that failed is not broadcast, even though it yielded a result first.
    assert!(broadcasts.ops().is_empty());
}

#[tokio::test]
async fn a_streaming_request_gets_its_events_before_the_reply() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry).build();
    let mut seen: Vec<WsEvent> = Vec::new();
    let reply = handler
        .handle_with_events(request("multi", json!({})).streaming(), &(), |e| {
            seen.push(e)
        })
        .await;
    assert!(reply.is_result());
    let kinds: Vec<&str> = seen.iter().map(|e| e.event.kind()).collect();
    assert_eq!(kinds, ["progress", "log"]);
    assert!(seen.iter().all(|e| e.req_id == Some(json!("r1"))));

    // Without `stream`, no events.
    let mut seen = 0;
    handler
        .handle_with_events(request("multi", json!({})), &(), |_| seen += 1)
        .await;
    assert_eq!(seen, 0);
}

/// Records the lines a host's logger receives.
#[derive(Clone, Default)]
struct HostLog(Arc<Mutex<Vec<String>>>);

impl gonk_tools::context::LogSink for HostLog {
    fn log(&self, record: &gonk_tools::context::LogRecord<'_>) {
        self.0.lock().unwrap().push(record.message.to_owned());
    }
}

#[tokio::test]
async fn a_streaming_request_also_hears_ctx_log_and_progress_and_the_host_logger_still_does() {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("reporter")
                .description("Logs and reports progress from a plain handler.")
                .approval(ApprovalTier::Read)
                .handler(|_: Empty, ctx: ToolContext| async move {
                    ctx.log().info("starting");
                    tokio::task::yield_now().await;
                    ctx.progress(50.0, Some("half".to_owned()));
                    ctx.log().warn("almost");
                    Ok::<_, ToolError>("done")
                })
                .build(),
        )
        .unwrap();
    let host = HostLog::default();
    let host_log = host.clone();
    let handler = WsHandler::builder(&registry)
        .context(move |_: &()| Ok::<_, HookError>(ToolContext::new().with_logger(host_log.clone())))
        .build();
    let mut seen = Vec::new();
    let reply = handler
        .handle_with_events(request("reporter", json!({})).streaming(), &(), |e| {
            seen.push(serde_json::to_value(&e.event).unwrap())
        })
        .await;
    assert_eq!(reply, WsReply::result(Some(json!("r1")), json!("done")));
    assert_eq!(
        seen,
        [
            json!({"type": "log", "level": "info", "message": "starting"}),
            json!({"type": "progress", "percent": 50.0, "message": "half"}),
            json!({"type": "log", "level": "warn", "message": "almost"}),
        ]
    );
    assert_eq!(*host.0.lock().unwrap(), ["starting", "almost"]);

    let mut seen = 0;
    handler
        .handle_with_events(request("reporter", json!({})), &(), |_| seen += 1)
        .await;
    assert_eq!(seen, 0, "not a streaming request");
}

// ---------------------------------------------------------------- op table

#[tokio::test]
async fn an_unknown_op_is_no_such_op() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry).build();
    let error = error_of(handler.handle(request("no.such", json!({})), &()).await);
    assert_eq!(error.code, ErrorCode::ToolNotFound);
    assert_eq!(error.message, "No such op: no.such");
}

#[tokio::test]
async fn a_tool_skipped_by_requires_is_no_such_op() {
    let f = fixture();
    assert!(!f.registry.has("skipped"), "requires() skipped it");
    let handler = WsHandler::builder(&f.registry).build();
    let error = error_of(
        handler
            .handle(request("skipped", json!({"text": "x"})), &())
            .await,
    );
    assert_eq!(error.message, "No such op: skipped");
    assert_eq!(f.runs.get(), 0);
}

#[tokio::test]
async fn the_op_table_is_fixed_when_the_handler_is_built() {
    let f = fixture();
    let runs = Runs::default();
    let handler = WsHandler::builder(&f.registry).build();
    f.registry
        .register(tool("late", Some(true), &runs).build())
        .unwrap();
    assert!(f.registry.unregister("echo"));
    let error = error_of(
        handler
            .handle(request("late", json!({"text": "x"})), &())
            .await,
    );
    assert_eq!(error.message, "No such op: late");
    // The snapshot still serves what it was built with.
    assert!(handler
        .handle(request("echo", json!({"text": "x"})), &())
        .await
        .is_result());
    assert!(!handler.ops().contains(&"late".to_owned()));
}

#[tokio::test]
async fn duplex_and_filtered_tools_are_no_such_op() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry)
        .filter(|tool| tool.name != "note.write")
        .build();
    for op in ["duplex.talk", "note.write"] {
        let error = error_of(handler.handle(request(op, json!({})), &()).await);
        assert_eq!(error.message, format!("No such op: {op}"));
    }
    assert!(!handler.ops().contains(&"duplex.talk".to_owned()));
}

// ---------------------------------------------------------------- entry gate

#[tokio::test]
async fn authorize_false_answers_not_authorized_and_the_handler_never_runs() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry)
        .authorize(|tool, caller: &&str, _| {
            Ok::<_, HookError>(*caller == "alice" || tool.name == "echo")
        })
        .build();
    let error = error_of(
        handler
            .handle(request("note.write", json!({"text": "x"})), &"bob")
            .await,
    );
    assert_eq!(error.message, "Not authorized to invoke note.write");
    assert_eq!(error.code, ErrorCode::AuthorizationDenied);
    assert_eq!(f.runs.get(), 0, "the handler never ran");
    assert!(handler
        .handle(request("note.write", json!({"text": "x"})), &"alice")
        .await
        .is_result());
    assert_eq!(f.runs.get(), 1);
}

#[tokio::test]
async fn authorize_receives_the_tool_the_caller_and_the_request_input() {
    let f = fixture();
    let seen: Arc<Mutex<Vec<(String, String, Value)>>> = Arc::default();
    let record = seen.clone();
    let handler = WsHandler::builder(&f.registry)
        .authorize(move |tool, caller: &String, input| {
            record
                .lock()
                .unwrap()
                .push((tool.name.clone(), caller.clone(), input.clone()));
            Ok::<_, HookError>(true)
        })
        .build();
    // Even an input the schema will reject reaches the gate as sent.
    let input = json!({"text": "", "extra": [1, 2]});
    handler
        .handle(request("echo", input.clone()), &"carol".to_owned())
        .await;
    assert_eq!(
        *seen.lock().unwrap(),
        [("echo".to_owned(), "carol".to_owned(), input)]
    );
}

#[tokio::test]
async fn a_failing_or_panicking_authorize_is_an_error_reply_with_its_message() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry)
        .authorize(|_, _: &(), _| Err::<bool, _>("the session store is down"))
        .build();
    let error = error_of(
        handler
            .handle(request("echo", json!({"text": "x"})), &())
            .await,
    );
    assert_eq!(error.message, "the session store is down");
    assert_eq!(error.code, ErrorCode::Internal);

    let handler = WsHandler::builder(&f.registry)
        .authorize(|_, _: &(), _| -> Result<bool, HookError> { panic!("gate bug") })
        .build();
    let error = error_of(
        handler
            .handle(request("echo", json!({"text": "x"})), &())
            .await,
    );
    assert_eq!(error.message, "The authorize hook panicked: gate bug");
    assert_eq!(f.runs.get(), 0);
}

/// An asynchronous gate (a session store lookup).
struct SessionStore;

impl WsAuthorize<u32> for SessionStore {
    fn authorize<'a>(
        &'a self,
        _tool: &'a ToolDefinition,
        caller: &'a u32,
        _input: &'a Value,
    ) -> BoxFuture<'a, Result<bool, HookError>> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            match caller {
                0 => Err("session 0 is corrupt".into()),
                id => Ok(id % 2 == 1),
            }
        })
    }
}

#[tokio::test]
async fn an_asynchronous_gate_allows_denies_and_fails_closed() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry)
        .authorize_with(SessionStore)
        .build();
    let echo = || request("echo", json!({"text": "x"}));
    assert!(handler.handle(echo(), &1).await.is_result());
    assert_eq!(
        error_of(handler.handle(echo(), &2).await).message,
        "Not authorized to invoke echo"
    );
    assert_eq!(
        error_of(handler.handle(echo(), &0).await).message,
        "session 0 is corrupt"
    );
    assert_eq!(f.runs.get(), 1);
}

#[tokio::test]
async fn a_failing_context_factory_is_an_error_reply_and_the_handler_never_runs() {
    let f = fixture();
    let handler = WsHandler::builder(&f.registry)
        .context(|caller: &String| {
            if caller.is_empty() {
                Err(format!("no workspace for caller {caller:?}"))
            } else {
                Ok(ToolContext::new())
            }
        })
        .build();
    let error = error_of(
        handler
            .handle(request("echo", json!({"text": "x"})), &String::new())
            .await,
    );
    assert_eq!(error.message, "no workspace for caller \"\"");
    assert_eq!(f.runs.get(), 0);

    let handler = WsHandler::builder(&f.registry)
        .context(|_: &()| -> Result<ToolContext, HookError> { panic!("factory bug") })
        .build();
    let error = error_of(
        handler
            .handle(request("echo", json!({"text": "x"})), &())
            .await,
    );
    assert_eq!(error.message, "The context hook panicked: factory bug");
    assert_eq!(f.runs.get(), 0);
}

// ---------------------------------------------------------------- two authorization models

/// `parent` composes `child`; the entry gate and the policy both refuse
/// `child` when asked directly.
fn composing_registry(child_runs: &Runs) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let runs = child_runs.clone();
    registry
        .register_all([
            ToolDefinition::builder("child")
                .description("The composed tool.")
                .approval(ApprovalTier::Read)
                .handler(move |_: Empty, _| {
                    runs.0.fetch_add(1, Ordering::SeqCst);
                    async { Ok::<_, ToolError>("secret from child") }
                })
                .build(),
            ToolDefinition::builder("parent")
                .description("Composes child.")
                .approval(ApprovalTier::Read)
                .handler(|_: Empty, ctx: ToolContext| async move {
                    let child =
                        collect_tool_outcome(ctx.invoke("child", json!({})), |_| {}).await?;
                    Ok::<_, ToolError>(json!({"child": child.data}))
                })
                .build(),
        ])
        .unwrap();
    registry
}

fn principal(id: &str) -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        id,
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", id, AuthMethod::Oauth),
    )
}

#[tokio::test]
async fn the_entry_gate_checks_the_requested_op_only_not_composed_children() {
    let child_runs = Runs::default();
    let registry = composing_registry(&child_runs);
    let handler = WsHandler::builder(&registry)
        .authorize(|tool, _: &(), _| Ok::<_, HookError>(tool.name != "child"))
        .build();
    let error = error_of(handler.handle(request("child", json!({})), &()).await);
    assert_eq!(error.message, "Not authorized to invoke child");
    assert_eq!(child_runs.get(), 0);
    // The seed's legacy model: the gate saw only `parent`, so `child` ran.
    let reply = handler.handle(request("parent", json!({})), &()).await;
    assert_eq!(
        reply,
        WsReply::result(Some(json!("r1")), json!({"child": "secret from child"}))
    );
    assert_eq!(child_runs.get(), 1);
}

#[tokio::test]
async fn an_auth_context_from_the_caller_authorizes_the_root_and_every_composed_child() {
    let child_runs = Runs::default();
    let registry = composing_registry(&child_runs);
    // (tool, call stack) of every tool.invoke question.
    type Asked = Arc<Mutex<Vec<(String, Vec<String>)>>>;
    let asked: Asked = Arc::default();
    let log = asked.clone();
    let policy: Arc<dyn AuthorizationPolicy> =
        Arc::new(policy_fn(move |req: &AuthorizationRequest<'_>| {
            if req.action == AuthorizationAction::Invoke {
                log.lock().unwrap().push((
                    req.resource
                        .target
                        .as_deref()
                        .unwrap_or_default()
                        .to_owned(),
                    req.call_stack.iter().map(|s| s.to_string()).collect(),
                ));
            }
            Ok(match req.resource.target.as_deref() {
                Some("child") if req.action == AuthorizationAction::Invoke => {
                    AuthorizationDecision::deny("child is for admins")
                }
                _ => AuthorizationDecision::allow(),
            })
        }));
    let handler = WsHandler::builder(&registry)
        .context(move |caller: &String| {
            Ok::<_, HookError>(ToolContext::new().with_auth(AuthContext::from_shared(
                Arc::new(principal(caller)),
                policy.clone(),
            )))
        })
        .build();
    let error = error_of(
        handler
            .handle(request("parent", json!({})), &"alice".to_owned())
            .await,
    );
    assert_eq!(error.code, ErrorCode::AuthorizationDenied);
    assert_eq!(error.message, "child is for admins");
    assert_eq!(
        child_runs.get(),
        0,
        "the registry refused the composed child"
    );
    assert_eq!(
        *asked.lock().unwrap(),
        [
            ("parent".to_owned(), vec!["parent".to_owned()]),
            (
                "child".to_owned(),
                vec!["parent".to_owned(), "child".to_owned()]
            ),
        ]
    );
}

// ---------------------------------------------------------------- broadcast

#[tokio::test]
async fn the_default_policy_broadcasts_unrestricted_writes_only() {
    let f = fixture();
    let broadcasts = Broadcasts::default();
    let handler = WsHandler::builder(&f.registry)
        .emitter(broadcasts.emitter())
        .build();
    for op in [
        "echo",
        "note.write",
        "note.unannotated",
        "admin.write",
        "empty.callers.write",
        "blank.role.write",
        "fails.write",
    ] {
        let input = if op == "fails.write" {
            json!({})
        } else {
            json!({"text": op})
        };
        handler.handle(request(op, input), &()).await;
    }
    // Write yes; read no; a tool that does not say it writes no;
    // restricted no, even by an empty allowed-callers list or a blank
    // role; a failed write no.
    assert_eq!(broadcasts.ops(), ["note.write"]);
    let sent = broadcasts.0.lock().unwrap()[0].clone();
    assert_eq!(
        serde_json::to_value(&sent).unwrap(),
        json!({"type": "broadcast", "op": "note.write", "payload": {"tool": "note.write", "text": "note.write"}})
    );
    for name in ["note.write", "admin.write", "empty.callers.write", "echo"] {
        let def = f.registry.get(name).unwrap();
        assert_eq!(broadcasts_by_default(&def), name == "note.write", "{name}");
    }
}

#[tokio::test]
async fn a_custom_broadcast_policy_replaces_the_default() {
    let f = fixture();
    let broadcasts = Broadcasts::default();
    let seen_results: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = seen_results.clone();
    let handler = WsHandler::builder(&f.registry)
        .emitter(broadcasts.emitter())
        // Reads of "public" text are broadcast; nothing else.
        .broadcast_policy(move |tool, result| {
            record.lock().unwrap().push(result.clone());
            Ok::<_, HookError>(tool.name == "echo" && result["text"] == "public")
        })
        .build();
    handler
        .handle(request("echo", json!({"text": "public"})), &())
        .await;
    handler
        .handle(request("echo", json!({"text": "private"})), &())
        .await;
    handler
        .handle(request("note.write", json!({"text": "w"})), &())
        .await;
    assert_eq!(broadcasts.ops(), ["echo"]);
    assert_eq!(
        seen_results.lock().unwrap().len(),
        3,
        "asked after each success"
    );
}

#[tokio::test]
async fn a_failing_broadcast_policy_or_emitter_never_masks_the_success_reply() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(capture.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let f = fixture();
    let write = || request("note.write", json!({"text": "w"}));
    let expected = WsReply::result(
        Some(json!("r1")),
        json!({"tool": "note.write", "text": "w"}),
    );

    let emitted = Broadcasts::default();
    let handler = WsHandler::builder(&f.registry)
        .emitter(emitted.emitter())
        .broadcast_policy(|_, _| Err::<bool, _>("policy store unreachable"))
        .build();
    assert_eq!(handler.handle(write(), &()).await, expected);
    assert!(emitted.ops().is_empty());

    let handler = WsHandler::builder(&f.registry)
        .emitter(|_: &WsBroadcast| Err::<(), _>("the bus is full"))
        .build();
    assert_eq!(handler.handle(write(), &()).await, expected);

    let handler = WsHandler::builder(&f.registry)
        .emitter(|_: &WsBroadcast| -> Result<(), HookError> { panic!("emitter bug") })
        .build();
    assert_eq!(handler.handle(write(), &()).await, expected);

    let handler = WsHandler::builder(&f.registry)
        .emitter(emitted.emitter())
        .broadcast_policy(|_, _| -> Result<bool, HookError> { panic!("policy bug") })
        .build();
    assert_eq!(handler.handle(write(), &()).await, expected);

    assert_eq!(f.runs.get(), 4);
    let logs = capture.text();
    for warning in [
        "the broadcast policy failed",
        "policy store unreachable",
        "the broadcast emitter failed",
        "the bus is full",
        "The broadcast emitter hook panicked: emitter bug",
        "The broadcast policy hook panicked: policy bug",
    ] {
        assert!(logs.contains(warning), "missing {warning:?} in:\n{logs}");
    }
    assert!(logs.contains("WARN"), "{logs}");
}
