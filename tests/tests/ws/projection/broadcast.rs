//! Broadcast: the default policy broadcasts unrestricted writes only; a
//! custom policy replaces it; a failing policy or emitter never masks the
//! success reply.

use std::sync::{Arc, Mutex};

use gonk_tools::adapters::ws::{broadcasts_by_default, HookError, WsBroadcast, WsHandler, WsReply};
use gonk_tools::prelude::*;
use gonk_tools_tests::log_capture::Capture;
use serde_json::Value;

use super::{fixture, request, Broadcasts};

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
    let _guard = gonk_tools_tests::subscriber::set_scoped_default(subscriber);

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

#[tokio::test]
async fn a_write_made_on_any_surface_is_broadcast() {
    // The broadcast reads the registry's change events: a call that never
    // went through this handler (MCP, the CLI, Pi, a job all call the
    // registry) and a composed call are broadcast as well; a dropped
    // handler broadcasts nothing more.
    let f = fixture();
    let broadcasts = Broadcasts::default();
    let handler = WsHandler::<()>::builder(&f.registry)
        .emitter(broadcasts.emitter())
        .build();
    let direct = f.registry.invoke(
        "note.write",
        json!({"text": "elsewhere"}),
        ToolContext::new(),
    );
    collect_tool_outcome(direct, |_| {}).await.unwrap();
    assert_eq!(broadcasts.ops(), ["note.write"]);
    let sent = broadcasts.0.lock().unwrap()[0].clone();
    assert_eq!(sent.payload["text"], "elsewhere");
    // A read elsewhere is not broadcast (the default policy).
    let read = f
        .registry
        .invoke("echo", json!({"text": "r"}), ToolContext::new());
    collect_tool_outcome(read, |_| {}).await.unwrap();
    assert_eq!(broadcasts.ops(), ["note.write"]);

    drop(handler);
    let after = f
        .registry
        .invoke("note.write", json!({"text": "later"}), ToolContext::new());
    collect_tool_outcome(after, |_| {}).await.unwrap();
    assert_eq!(broadcasts.ops(), ["note.write"], "the handler is gone");
}
