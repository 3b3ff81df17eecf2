//! [`dispatch_detached_with_wait`]: detach by default, wait when the
//! caller asks. A pure combinator over injected closures; it owns no
//! dispatch mechanism and no result shape.

use std::fmt;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::ToolError;
use crate::event::ToolDisplay;
use crate::event::ToolOutput;

/// The caller's opt-in to blocking: `wait: true` or `sync: true` runs the
/// call inline; neither (the default) detaches it.
///
/// Flatten it into a hand-written tool's input (`#[serde(flatten)]`); a
/// `#[tool(detached)]` tool gets both flags in its advertised schema
/// without declaring them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WaitFlags {
    /// Wait for the result instead of getting a background job id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// The same as `wait`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<bool>,
}

impl WaitFlags {
    /// Whether the caller asked to wait.
    pub fn waits(&self) -> bool {
        self.wait == Some(true) || self.sync == Some(true)
    }

    /// Removes `wait` and `sync` from an input object and returns them, so
    /// the rest reaches a handler that does not know them. A flag that is
    /// not a boolean is left in place (schema validation reports it).
    pub fn take(input: &mut Value) -> WaitFlags {
        let Some(object) = input.as_object_mut() else {
            return WaitFlags::default();
        };
        let mut take = |key: &str| match object.get(key) {
            Some(Value::Bool(flag)) => {
                let flag = *flag;
                object.remove(key);
                Some(flag)
            }
            _ => None,
        };
        WaitFlags {
            wait: take("wait"),
            sync: take("sync"),
        }
    }
}

/// What an async dispatcher returns: at least the job's id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobHandle {
    /// The job's id (what `jobs.status` and `jobs.result` take).
    pub job_id: String,
    /// Anything else the dispatcher wants the async renderer to see.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl JobHandle {
    /// A handle with just an id.
    pub fn new(job_id: impl Into<String>) -> Self {
        JobHandle {
            job_id: job_id.into(),
            extra: Map::new(),
        }
    }
}

/// How an inline run came about, told to the inline renderer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InlineRun {
    /// `true` when the call ran inline only because no async dispatcher
    /// is wired (the caller did not ask to wait).
    pub ran_sync_fallback: bool,
}

/// Where a call goes: the one rule of detached dispatch, shared by
/// [`dispatch_detached_with_wait`] and the wrapper of a detached tool.
pub(super) enum Route<D> {
    /// Run it here, as this inline run.
    Inline(InlineRun),
    /// Hand it to this dispatcher.
    Detach(D),
}

impl WaitFlags {
    /// Routes a call: inline when the caller waits (the dispatcher is not
    /// even looked up), else to the dispatcher, else inline as a flagged
    /// fallback.
    pub(super) fn route<D>(self, dispatcher: impl FnOnce() -> Option<D>) -> Route<D> {
        if self.waits() {
            return Route::Inline(InlineRun {
                ran_sync_fallback: false,
            });
        }
        match dispatcher() {
            Some(dispatcher) => Route::Detach(dispatcher),
            None => Route::Inline(InlineRun {
                ran_sync_fallback: true,
            }),
        }
    }
}

/// A boxed one-shot async step: the dispatcher, or the blocking path.
type AsyncStep<'a, T> = Box<dyn FnOnce() -> BoxFuture<'a, Result<T, ToolError>> + Send + 'a>;

/// A call for [`dispatch_detached_with_wait`]: the caller's flags, the
/// blocking path, and optionally a dispatcher and renderers.
///
/// ```
/// use gonk_tools::jobs::{dispatch_detached_with_wait, DetachedWithWait, JobHandle, WaitFlags};
/// use gonk_tools::prelude::*;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let detached = DetachedWithWait::new(WaitFlags::default(), "render", || async { Ok(42) })
///     .dispatcher(|| async { Ok(JobHandle::new("job-7")) });
/// let output = dispatch_detached_with_wait(detached).await.unwrap();
/// assert_eq!(output.data["jobId"], "job-7");
/// # }
/// ```
pub struct DetachedWithWait<'a, T> {
    flags: WaitFlags,
    /// Named in the default message.
    kind: String,
    /// `None` runs inline as a flagged fallback.
    dispatch: Option<AsyncStep<'a, JobHandle>>,
    run_inline: AsyncStep<'a, T>,
    render_inline: Box<dyn FnOnce(T, InlineRun) -> ToolOutput + Send + 'a>,
    /// `None` renders with [`default_async_output`].
    render_async: Option<Box<dyn FnOnce(JobHandle) -> ToolOutput + Send + 'a>>,
}

impl<T> fmt::Debug for DetachedWithWait<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DetachedWithWait")
            .field("flags", &self.flags)
            .field("kind", &self.kind)
            .field("dispatch", &self.dispatch.is_some())
            .field("render_async", &self.render_async.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a, T: Serialize + Send + 'a> DetachedWithWait<'a, T> {
    /// A call of `kind` (named in the default message) with `run_inline`
    /// as the blocking path; no dispatcher yet, the default renderers
    /// (the inline value's JSON as data; [`default_async_output`]).
    pub fn new<F, Fut>(flags: WaitFlags, kind: impl Into<String>, run_inline: F) -> Self
    where
        F: FnOnce() -> Fut + Send + 'a,
        Fut: std::future::Future<Output = Result<T, ToolError>> + Send + 'a,
    {
        DetachedWithWait {
            flags,
            kind: kind.into(),
            dispatch: None,
            run_inline: Box::new(move || Box::pin(run_inline())),
            render_inline: Box::new(|value, run| {
                let data = serde_json::to_value(value).unwrap_or(Value::Null);
                mark_fallback(ToolOutput::new(data), run)
            }),
            render_async: None,
        }
    }
}

impl<'a, T> DetachedWithWait<'a, T> {
    /// Wires the async dispatcher: it starts the detached work and returns
    /// its handle.
    pub fn dispatcher<F, Fut>(mut self, dispatch: F) -> Self
    where
        F: FnOnce() -> Fut + Send + 'a,
        Fut: std::future::Future<Output = Result<JobHandle, ToolError>> + Send + 'a,
    {
        self.dispatch = Some(Box::new(move || Box::pin(dispatch())));
        self
    }

    /// Renders the inline value (it owns the inline result's shape; the
    /// combinator adds nothing).
    pub fn render_inline(
        mut self,
        render: impl FnOnce(T, InlineRun) -> ToolOutput + Send + 'a,
    ) -> Self {
        self.render_inline = Box::new(render);
        self
    }

    /// Renders the handle (it owns the async result's shape).
    pub fn render_async(
        mut self,
        render: impl FnOnce(JobHandle) -> ToolOutput + Send + 'a,
    ) -> Self {
        self.render_async = Some(Box::new(render));
        self
    }
}

/// Detach by default, wait on request.
///
/// * No flag: the dispatcher is called once, the inline runner never; the
///   handle is rendered by `render_async`, else [`default_async_output`].
/// * `wait` or `sync`: the inline runner once, the dispatcher never; the
///   data is exactly what `render_inline` made.
/// * No dispatcher wired: inline, and `render_inline` is told
///   [`InlineRun::ran_sync_fallback`] (the default renderer then adds
///   `ranSyncFallback: true` to object data; only then).
/// * A dispatcher error is the call's error: there is no silent inline
///   fallback.
///
/// A `#[tool(detached)]` tool follows the same rule with the registry's
/// [`JobRunner`](super::JobRunner) as its dispatcher; it routes the tool's
/// own pending call rather than one value, so a waited call streams its
/// progress and logs as the tool makes them.
pub async fn dispatch_detached_with_wait<T>(
    call: DetachedWithWait<'_, T>,
) -> Result<ToolOutput, ToolError> {
    let DetachedWithWait {
        flags,
        kind,
        dispatch,
        run_inline,
        render_inline,
        render_async,
    } = call;
    match flags.route(|| dispatch) {
        Route::Inline(run) => Ok(render_inline(run_inline().await?, run)),
        Route::Detach(dispatch) => {
            let handle = dispatch().await?;
            Ok(match render_async {
                Some(render) => render(handle),
                None => default_async_output(&kind, &handle),
            })
        }
    }
}

/// The default message for a dispatched job.
pub fn default_message(kind: &str, job_id: &str) -> String {
    format!(
        "{kind} started as background job {job_id}; call jobs.result with this jobId for its \
         outcome (waitMs waits for it to finish) or jobs.status for its progress."
    )
}

/// The default async result: data `{jobId, kind, message}`, shown as the
/// message.
pub fn default_async_output(kind: &str, handle: &JobHandle) -> ToolOutput {
    let message = default_message(kind, &handle.job_id);
    let data = json!({ "jobId": handle.job_id, "kind": kind, "message": message });
    ToolOutput::new(data).with_display(ToolDisplay::Text(message))
}

/// Adds `ranSyncFallback: true` to object data when `run` was a fallback.
pub fn mark_fallback(mut output: ToolOutput, run: InlineRun) -> ToolOutput {
    if run.ran_sync_fallback {
        if let Value::Object(data) = &mut output.data {
            data.insert("ranSyncFallback".into(), Value::Bool(true));
        }
    }
    output
}
