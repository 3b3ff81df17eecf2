//! The entry gate: `authorize` decides before the handler runs, sees the
//! tool, the caller and the input, and fails closed when it fails, panics
//! or (asynchronous) errs; a failing context factory is an error reply.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use gonk_tools::adapters::ws::{HookError, WsAuthorize, WsHandler};
use gonk_tools::prelude::*;
use serde_json::Value;

use super::{error_of, fixture, request};

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
