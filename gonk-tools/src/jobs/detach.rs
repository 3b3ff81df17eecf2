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
use crate::outcome::ToolOutput;

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

/// Starts the detached work; returns its handle.
pub type AsyncDispatch<'a> =
    Box<dyn FnOnce() -> BoxFuture<'a, Result<JobHandle, ToolError>> + Send + 'a>;
/// Runs the work inline (the blocking path).
pub type RunInline<'a, T> = Box<dyn FnOnce() -> BoxFuture<'a, Result<T, ToolError>> + Send + 'a>;
/// Renders an inline run's value.
pub type RenderInline<'a, T> = Box<dyn FnOnce(T, InlineRun) -> ToolOutput + Send + 'a>;
/// Renders a job handle.
pub type RenderAsync<'a> = Box<dyn FnOnce(JobHandle) -> ToolOutput + Send + 'a>;

/// The closures [`dispatch_detached_with_wait`] chooses between.
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
    /// The caller's opt-in.
    pub flags: WaitFlags,
    /// What kind of work this is (in the default message).
    pub kind: String,
    /// Starts a detached job; `None` runs inline as a fallback.
    pub dispatch: Option<AsyncDispatch<'a>>,
    /// The blocking path.
    pub run_inline: RunInline<'a, T>,
    /// Renders the inline value (default: its JSON as data).
    pub render_inline: RenderInline<'a, T>,
    /// Renders the handle (default: [`default_async_output`]).
    pub render_async: Option<RenderAsync<'a>>,
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
    /// `run_inline` as the blocking path; no dispatcher yet, the default
    /// renderers.
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
    /// Wires the async dispatcher.
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
    let inline = |ran_sync_fallback| async move {
        let value = run_inline().await?;
        Ok(render_inline(value, InlineRun { ran_sync_fallback }))
    };
    if flags.waits() {
        return inline(false).await;
    }
    let Some(dispatch) = dispatch else {
        return inline(true).await;
    };
    let handle = dispatch().await?;
    Ok(match render_async {
        Some(render) => render(handle),
        None => default_async_output(&kind, &handle),
    })
}

/// The default message for a dispatched job.
pub fn default_message(kind: &str, job_id: &str) -> String {
    format!(
        "{kind} dispatched as background job {job_id}; you'll be surfaced the result in a \
         follow-up on completion (poll jobs.status sooner if needed)."
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
