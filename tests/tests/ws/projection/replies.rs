//! Replies: a result or an error reply echoing the request id (or without
//! the key), invalid input with its issues, the last result of a stream
//! winning, a streaming request's events before its reply — with
//! `ctx.log` and progress, while the host's logger still hears them.

use std::sync::{Arc, Mutex};

use gonk_tools::adapters::ws::{HookError, WsEvent, WsHandler, WsReply, WsRequest};
use gonk_tools::prelude::*;

use super::{error_of, fixture, request, Broadcasts, Empty};

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
