//! The op table: an unknown op, a tool skipped by `requires`, a duplex or
//! filtered tool are all "no such op"; the table is fixed when the handler
//! is built.

use gonk_tools::adapters::ws::WsHandler;
use gonk_tools::prelude::*;

use super::{error_of, fixture, request, tool, Runs};

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
