//! Detached dispatch: a heavy tool returns a job handle at once unless the
//! caller waits.
//!
//! A minutes-scale tool must never silently block its caller, and a caller
//! that truly needs the answer inline can ask for it. Three parts:
//!
//! * [`dispatch_detached_with_wait`] — the combinator: detach by default,
//!   run inline on `wait: true` / `sync: true`, fall back to inline (and
//!   say so with `ranSyncFallback: true`) when no dispatcher is wired. It
//!   owns neither the dispatch mechanism nor the result shape.
//! * [`JobRunner`] — the seam to whatever runs jobs, and
//!   [`EmbeddedRunner`], the default: each job a task on this runtime,
//!   running its call through [`ToolRegistry::invoke`](crate::ToolRegistry::invoke)
//!   (the full contract, as the launching caller's principal), with
//!   status, progress, logs and outcome kept under bounded [`Retention`],
//!   optionally in a [`JobStore`].
//! * [`install`] — makes a runner the registry's and registers `jobs.status`,
//!   `jobs.result`, `jobs.cancel` and `jobs.list`. A caller sees only its
//!   own jobs; anyone else's is missing.
//!
//! # Making a tool detached
//!
//! `#[tool(detached)]` (or [`ToolBuilder::detached`](crate::definition::ToolBuilder::detached))
//! is for work that takes long enough that a model or a human should not
//! sit waiting for it: a re-index, an export of a large notebook, a
//! build. The tool's advertised input gains optional `wait` and `sync`
//! booleans; its handler is unchanged and never sees them. A call follows
//! the combinator's rule, with the installed runner as the dispatcher and
//! the tool's own handler as the blocking path.
//!
//! ```
//! use std::sync::Arc;
//! use gonk_tools::jobs::{self, EmbeddedRunner};
//! use gonk_tools::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Target { target: String }
//!
//! /// Build a target (slow).
//! #[tool(detached)]
//! async fn build(input: Target) -> String {
//!     format!("built {}", input.target)
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::new();
//! registry.register(Build::definition())?;
//! jobs::install(&registry, Arc::new(EmbeddedRunner::new()))?;
//!
//! // By default the call returns a job handle at once…
//! let handle = collect_tool_outcome(registry.invoke("build", json!({"target": "docs"}), ToolContext::new()), |_| {}).await?;
//! let job_id = handle.data["jobId"].as_str().unwrap().to_owned();
//!
//! // …and `jobs.result` gives the result (here waiting up to a second).
//! let result = registry.invoke("jobs.result", json!({"jobId": job_id, "waitMs": 1000}), ToolContext::new());
//! assert_eq!(collect_tool_outcome(result, |_| {}).await?.data, "built docs");
//!
//! // A caller that needs the answer inline waits.
//! let inline = registry.invoke("build", json!({"target": "docs", "wait": true}), ToolContext::new());
//! assert_eq!(collect_tool_outcome(inline, |_| {}).await?.data, "built docs");
//! # Ok(()) }
//! ```
//!
//! # How callers wait, surface by surface
//!
//! * **MCP**: a client that declares the tasks extension
//!   (`io.modelcontextprotocol/tasks`) gets a task for a detached call
//!   (`resultType: "task"`) and polls `tasks/get` (progress in the status
//!   message, the `CallToolResult` inline once completed) or cancels with
//!   `tasks/cancel`; other clients get the job handle as the result and use
//!   the `jobs.*` tools. Either passes `wait: true` to block.
//! * **CLI**: the command prints the job's id (the handle's message);
//!   `--wait` runs it in the foreground with the progress bar and the exit
//!   code of a normal call. A job launched from a command line runs in that
//!   process: the command stays until its jobs end (Ctrl-C cancels them).
//! * **Typed clients** call `jobs.result` with the id, or the tool with
//!   `wait: true` through the raw `invoke`.
//!
//! # Putting jobs elsewhere
//!
//! Implement [`JobRunner`] to send jobs to an external queue; [`install`]
//! it instead of the embedded runner. The tools above and every detached
//! tool then use it unchanged. With the `jobs-nats` feature,
//! `NatsJobRunner` puts jobs on NATS JetStream: durable, shared by
//! replicas, delivered at least once (see `docs/jobs.md`).

mod asking;
mod detach;
mod detached_tool;
mod launch;
#[cfg(feature = "jobs-nats")]
mod nats;
mod record;
mod runner;
mod store;
mod tools;

pub use asking::{JobAsking, DEFAULT_JOB_ASK_TIMEOUT};
pub use detach::{
    default_async_output, default_message, dispatch_detached_with_wait, mark_fallback,
    DetachedWithWait, InlineRun, JobHandle, WaitFlags,
};
pub use detached_tool::detached_output_schema;
pub use launch::launch;
#[cfg(feature = "jobs-nats")]
pub use nats::{NatsJobConfig, NatsJobError, NatsJobRunner, WorkerLoss};
pub use record::{JobLog, JobProgress, JobRecord, JobStatus};
pub use runner::{owner_of, EmbeddedRunner, JobLaunch, JobRunner, Retention};
pub use store::JobStore;
pub use tools::{install, runner};
