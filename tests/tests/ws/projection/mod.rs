//! The WebSocket projection (`gonk_tools::adapters::ws`), transport-agnostic: every
//! rule of the request/reply handler, the entry gate, the context factory
//! and broadcast, against a fixture registry.

mod authorization;
mod broadcast;
mod entry_gate;
mod ops;
mod replies;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gonk_tools::adapters::ws::{HookError, WsBroadcast, WsReply, WsRequest};
use gonk_tools::definition::{AuthorizationSpec, McpAnnotations, McpHints};
use gonk_tools::prelude::*;
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
