//! [`ToolBuilder::detached`]: `wait` / `sync` in a tool's advertised
//! input, and a handler that launches a job unless the caller waits.
//!
//! The method is defined here, beside the runner it launches on, and
//! reaches the tool through the builder's build layer: the core holds the
//! `detached` flag and knows nothing of jobs.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value};

use super::detach::{default_async_output, mark_fallback, InlineRun, Route, WaitFlags};
use super::runner::JobLaunch;
use super::tools::runner;
use crate::definition::{ErasedHandler, HandlerCall, ToolBuilder, ToolMetadata};
use crate::event::ToolEvent;
use crate::event::ToolOutput;

impl ToolBuilder {
    /// Makes the tool detached by default (what `#[tool(detached)]` sets):
    /// a call launches a background job on the registry's job runner and
    /// returns its handle at once, unless the caller passes `wait: true`
    /// or `sync: true`; both are added to the advertised input schema (the
    /// handler never sees them, so the input type must not have fields of
    /// those names). With no runner installed the call runs inline and its
    /// result says `ranSyncFallback: true`. Its output schema, when it has
    /// one, becomes [`detached_output_schema`] of it: the result or the job
    /// handle. See [`crate::jobs`].
    ///
    /// It takes effect when the tool is built, so it may come before or
    /// after the handler; a second call changes nothing.
    pub fn detached(self) -> Self {
        self.layer(Box::new(detach))
    }
}

/// The build layer of [`ToolBuilder::detached`].
fn detach(meta: &mut ToolMetadata, handler: Option<ErasedHandler>) -> Option<ErasedHandler> {
    if meta.detached {
        return handler;
    }
    meta.detached = true;
    add_wait_flags(&mut meta.input_schema);
    if let Some(output) = &mut meta.output_schema {
        add_job_handle(output);
    }
    if let Some(schema) = &mut meta.input_json_schema {
        add_wait_flags(schema);
    }
    let name: Arc<str> = Arc::from(meta.name.as_str());
    handler.map(|handler| wrap(name, handler))
}

/// Adds the optional `wait` and `sync` booleans to an object schema (a
/// schema that already has a property of that name keeps its own).
fn add_wait_flags(schema: &mut Value) {
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

/// The `anyOf` branch of a detached tool's output schema that a launching
/// call answers: the job handle of [`default_async_output`].
fn job_handle_schema() -> Value {
    json!({
        "type": "object",
        "description": "The call was started as a background job: poll jobs.status or jobs.result with jobId (or call again with wait: true to get the result itself).",
        "properties": {
            "jobId": { "type": "string", "description": "The job's id, for jobs.status, jobs.result and jobs.cancel." },
            "kind": { "type": "string", "description": "The tool the job runs." },
            "message": { "type": "string", "description": "What happened and how to get the result." }
        },
        "required": ["jobId", "kind", "message"]
    })
}

/// The output schema of a tool whose calls answer either `result` (an
/// object schema: the tool's own result) or the job handle of
/// [`default_async_output`]: what `#[tool(detached)]` advertises, and what
/// a hand-written handler using
/// [`dispatch_detached_with_wait`](super::dispatch_detached_with_wait)
/// with the default handle should advertise, so a client that validates
/// `structuredContent` against the advertised schema (the MCP SDKs do)
/// accepts both answers. See `docs/contract.md#detached-dispatch`.
///
/// ```
/// # use serde_json::json;
/// let schema = gonk_tools::jobs::detached_output_schema(json!({
///     "type": "object",
///     "properties": { "count": { "type": "integer" } },
///     "required": ["count"],
/// }));
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["anyOf"][1]["required"], json!(["jobId", "kind", "message"]));
/// ```
pub fn detached_output_schema(result: Value) -> Value {
    let mut schema = result;
    add_job_handle(&mut schema);
    schema
}

/// Makes a detached tool's output schema say what its calls answer: the
/// tool's own result (with `ranSyncFallback`, which an inline fallback
/// adds), or the job handle of a launching call. Definitions (`$defs`)
/// move to the root, where the result's `$ref`s still find them. A
/// non-object schema is left as it is: it is not advertised over MCP.
fn add_job_handle(schema: &mut Value) {
    let Some(result) = schema.as_object_mut() else {
        return;
    };
    if result.get("type").and_then(Value::as_str) != Some("object") {
        return;
    }
    let mut root = serde_json::Map::new();
    root.insert("type".into(), json!("object"));
    for key in ["$schema", "$id", "$defs", "definitions"] {
        if let Some(value) = result.remove(key) {
            root.insert(key.into(), value);
        }
    }
    if let Some(description) = result.get("description") {
        root.insert("description".into(), description.clone());
    }
    if let Some(Value::Object(properties)) = result.get_mut("properties") {
        properties.entry("ranSyncFallback").or_insert_with(|| {
            json!({
                "type": "boolean",
                "description": "Present (true) when no job runner was installed and the call ran inline."
            })
        });
    }
    let result = Value::Object(std::mem::take(result));
    root.insert("anyOf".into(), json!([result, job_handle_schema()]));
    *schema = Value::Object(root);
}

/// Wraps a detached tool's handler, routed as
/// [`dispatch_detached_with_wait`](super::dispatch_detached_with_wait)
/// routes: with `wait` / `sync`, the handler runs as it is (its events
/// pass through); without, a job is launched on the registry's runner and
/// the call returns its handle at once; with no runner installed, the
/// handler runs inline and its result says `ranSyncFallback: true`.
///
/// The combinator itself does not fit here: it awaits one value, while a
/// tool's call is a pending future or event stream that dispatch drives,
/// and a waited call (every job's own run among them) must stream its
/// progress and logs as the tool makes them.
fn wrap(name: Arc<str>, handler: ErasedHandler) -> ErasedHandler {
    Arc::new(move |mut input: Value, ctx| {
        let flags = WaitFlags::take(&mut input);
        // Looked up per call, so a runner installed after the tool was
        // registered is used.
        let installed = || {
            let registry = ctx.registry()?;
            let runner = runner(&registry)?;
            Some((registry, runner))
        };
        match flags.route(installed) {
            Route::Inline(run) => handler(input, ctx).map(|call| mark_call(call, run)),
            Route::Detach((registry, runner)) => {
                let tool = Arc::clone(&name);
                Ok(HandlerCall::Once(Box::pin(async move {
                    // The job's own run waits: it is the inline path.
                    if let Value::Object(object) = &mut input {
                        object.insert("wait".into(), Value::Bool(true));
                    }
                    let launch = JobLaunch::new(registry, &*tool, input)
                        .auth(ctx.auth().cloned())
                        .asking(super::JobAsking::of(&ctx));
                    let handle = runner.launch(launch).await?;
                    Ok(default_async_output(&tool, &handle))
                })))
            }
        }
    })
}

/// Marks the result of an inline fallback run; any other run's call is
/// returned untouched.
fn mark_call(call: HandlerCall, run: InlineRun) -> HandlerCall {
    if !run.ran_sync_fallback {
        return call;
    }
    match call {
        HandlerCall::Once(future) => HandlerCall::Once(Box::pin(async move {
            future.await.map(|output| mark_fallback(output, run))
        })),
        HandlerCall::Stream(events) => {
            HandlerCall::Stream(Box::pin(events.map(move |event| match event {
                ToolEvent::Result { data, display } => {
                    let output = mark_fallback(ToolOutput { data, display }, run);
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
