//! What [`ToolBuilder::detached`](crate::definition::ToolBuilder::detached)
//! does to a tool: `wait` / `sync` in its advertised input, and a handler
//! that launches a job unless the caller waits.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value};

use super::detach::{default_async_output, mark_fallback, InlineRun, WaitFlags};
use super::runner::JobLaunch;
use super::tools::runner;
use crate::definition::{ErasedHandler, HandlerCall};
use crate::event::ToolEvent;

/// Adds the optional `wait` and `sync` booleans to an object schema (a
/// schema that already has a property of that name keeps its own).
pub(crate) fn add_wait_flags(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let properties = object
        .entry("properties")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(properties) = properties.as_object_mut() else {
        return;
    };
    properties.entry("wait").or_insert_with(|| {
        json!({
            "type": "boolean",
            "description": "Wait for the result instead of getting a background job id (default false)."
        })
    });
    properties
        .entry("sync")
        .or_insert_with(|| json!({ "type": "boolean", "description": "The same as wait." }));
}

/// Wraps a detached tool's handler: with `wait` / `sync`, the handler runs
/// as it is (its events pass through); without, a job is launched on the
/// registry's runner and the call returns its handle at once; with no
/// runner installed, the handler runs inline and its result says
/// `ranSyncFallback: true`.
pub(crate) fn wrap(name: Arc<str>, handler: ErasedHandler) -> ErasedHandler {
    Arc::new(move |mut input: Value, ctx| {
        let flags = WaitFlags::take(&mut input);
        if flags.waits() {
            return handler(input, ctx);
        }
        let installed = ctx
            .registry()
            .and_then(|registry| runner(registry).map(|runner| (registry.clone(), runner)));
        let Some((registry, runner)) = installed else {
            return handler(input, ctx).map(fallback);
        };
        let tool = Arc::clone(&name);
        Ok(HandlerCall::Once(Box::pin(async move {
            if let Value::Object(object) = &mut input {
                object.insert("wait".into(), Value::Bool(true));
            }
            let launch = JobLaunch::new(registry, &*tool, input).auth(ctx.auth().cloned());
            let handle = runner.launch(launch).await?;
            Ok(default_async_output(&tool, &handle))
        })))
    })
}

/// Marks the result of an inline fallback run.
fn fallback(call: HandlerCall) -> HandlerCall {
    let run = InlineRun {
        ran_sync_fallback: true,
    };
    match call {
        HandlerCall::Once(future) => HandlerCall::Once(Box::pin(async move {
            future.await.map(|output| mark_fallback(output, run))
        })),
        HandlerCall::Stream(events) => {
            HandlerCall::Stream(Box::pin(events.map(move |event| match event {
                ToolEvent::Result { data, display } => {
                    let output = mark_fallback(crate::ToolOutput { data, display }, run);
                    ToolEvent::Result {
                        data: output.data,
                        display: output.display,
                    }
                }
                other => other,
            })))
        }
    }
}
