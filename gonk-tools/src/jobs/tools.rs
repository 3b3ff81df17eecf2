//! The `jobs.*` tools: status, result, cancel and list, over the
//! registry's [`JobRunner`].

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::runner::owner_of;
use super::{JobRecord, JobRunner, JobStatus};
use crate::context::ToolContext;
use crate::definition::{ApprovalTier, CliHints, McpAnnotations, McpHints, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolOutput;
use crate::registry::{RegistryError, ToolRegistry};

/// The runner a registry's detached tools launch on (registry state).
#[derive(Clone)]
pub(crate) struct InstalledRunner(pub(crate) Arc<dyn JobRunner>);

/// Makes `runner` the registry's job runner and registers the `jobs.*`
/// tools over it: `jobs.status`, `jobs.result` (optionally waiting),
/// `jobs.cancel` and `jobs.list`. A caller sees only the jobs it
/// launched; another caller's job is missing (`JOB_NOT_FOUND`, the same
/// answer as for an id that never existed).
///
/// Without a runner, a detached tool runs inline and says so
/// (`ranSyncFallback: true`).
pub fn install(registry: &ToolRegistry, runner: Arc<dyn JobRunner>) -> Result<(), RegistryError> {
    registry.register_all([
        status_tool(Arc::clone(&runner)),
        result_tool(Arc::clone(&runner)),
        cancel_tool(Arc::clone(&runner)),
        list_tool(Arc::clone(&runner)),
    ])?;
    registry.insert_state(InstalledRunner(runner));
    Ok(())
}

/// The runner installed in `registry`, if any.
pub fn runner(registry: &ToolRegistry) -> Option<Arc<dyn JobRunner>> {
    registry
        .state::<InstalledRunner>()
        .map(|installed| Arc::clone(&installed.0))
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct JobRef {
    /// The job's id (what the detached call returned).
    #[schemars(length(min = 1, max = 200))]
    job_id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ResultInput {
    /// The job's id (what the detached call returned).
    #[schemars(length(min = 1, max = 200))]
    job_id: String,
    /// Wait up to this many milliseconds for the job to end (default: do
    /// not wait; at most ten minutes).
    #[schemars(range(max = 600000))]
    wait_ms: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct ListInput {
    /// Only jobs with this status.
    status: Option<JobStatus>,
}

fn not_found(id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::custom("JOB_NOT_FOUND"),
        format!("No such job: {id}; `jobs.list` shows yours"),
    )
    .with_details(json!({ "jobId": id }))
}

fn owner(ctx: &ToolContext) -> Option<String> {
    owner_of(ctx.auth())
}

/// `job-… (tool): running, 40% …`, one job for humans.
fn line(record: &JobRecord) -> String {
    format!("{} ({}): {}", record.id, record.tool, record.status_line())
}

fn summary(record: &JobRecord) -> ToolOutput {
    ToolOutput::new(record.summary()).with_display(line(record))
}

/// `notes jobs.status <JOB_ID>` on a command line.
fn job_id_positional() -> CliHints {
    CliHints {
        positional: vec!["jobId".to_owned()],
        ..CliHints::default()
    }
}

fn hints(read_only: bool) -> McpHints {
    McpHints {
        annotations: McpAnnotations {
            read_only: Some(read_only),
            destructive: Some(!read_only),
            idempotent: Some(true),
            open_world: Some(false),
        },
        ..McpHints::default()
    }
}

fn status_tool(runner: Arc<dyn JobRunner>) -> ToolDefinition {
    ToolDefinition::builder("jobs.status")
        .category("jobs")
        .cli(job_id_positional())
        .description("Status of a background job: queued, running, succeeded, failed or cancelled, with its last progress and recent logs.")
        .approval(ApprovalTier::Read)
        .mcp(hints(true))
        .handler_with_output(move |input: JobRef, ctx| {
            let runner = Arc::clone(&runner);
            async move {
                let record = runner
                    .get(owner(&ctx).as_deref(), &input.job_id)
                    .await
                    .ok_or_else(|| not_found(&input.job_id))?;
                Ok::<_, ToolError>(summary(&record))
            }
        })
        .build()
}

/// A finished job's outcome as this call's outcome.
fn outcome_of(record: JobRecord) -> Result<ToolOutput, ToolError> {
    match record.status {
        JobStatus::Succeeded => Ok(record
            .output
            .unwrap_or_else(|| ToolOutput::new(Value::Null))),
        JobStatus::Failed => Err(record
            .error
            .unwrap_or_else(|| ToolError::internal("the job failed without an error"))),
        JobStatus::Cancelled => Err(ToolError::new(
            ErrorCode::Aborted,
            format!("Job {} was cancelled", record.id),
        )),
        JobStatus::Queued | JobStatus::Running => Err(ToolError::new(
            ErrorCode::custom("JOB_PENDING"),
            format!(
                "Job {} has not finished ({}); ask again, or pass waitMs to wait",
                record.id,
                record.status_line()
            ),
        )
        .with_details(record.summary())),
    }
}

fn result_tool(runner: Arc<dyn JobRunner>) -> ToolDefinition {
    ToolDefinition::builder("jobs.result")
        .category("jobs")
        .cli(job_id_positional())
        .description("The result of a background job, as the detached call would have returned it; waits up to waitMs for it to finish. A job still running gives JOB_PENDING.")
        .approval(ApprovalTier::Read)
        .mcp(hints(true))
        .handler_with_output(move |input: ResultInput, ctx| {
            let runner = Arc::clone(&runner);
            async move {
                let owner = owner(&ctx);
                let record = match input.wait_ms {
                    Some(ms) if ms > 0 => {
                        let wait = runner.wait(owner.as_deref(), &input.job_id, Duration::from_millis(ms));
                        tokio::select! {
                            record = wait => record,
                            _ = ctx.cancellation().cancelled() => return Err(ToolError::aborted()),
                        }
                    }
                    _ => runner.get(owner.as_deref(), &input.job_id).await,
                };
                outcome_of(record.ok_or_else(|| not_found(&input.job_id))?)
            }
        })
        .build()
}

fn cancel_tool(runner: Arc<dyn JobRunner>) -> ToolDefinition {
    ToolDefinition::builder("jobs.cancel")
        .category("jobs")
        .cli(job_id_positional())
        .description("Cancel a background job: its work is stopped (the handler is dropped). Cancelling a finished job changes nothing.")
        // It stops only the caller's own work; the approval the tool
        // needed was asked when the job was launched.
        .approval(ApprovalTier::Read)
        .mcp(hints(false))
        .handler_with_output(move |input: JobRef, ctx| {
            let runner = Arc::clone(&runner);
            async move {
                let owner = owner(&ctx);
                runner
                    .cancel(owner.as_deref(), &input.job_id)
                    .await
                    .ok_or_else(|| not_found(&input.job_id))?;
                // Report the settled state: the handler is dropped at once.
                let record = runner
                    .wait(owner.as_deref(), &input.job_id, Duration::from_secs(2))
                    .await
                    .ok_or_else(|| not_found(&input.job_id))?;
                Ok::<_, ToolError>(summary(&record))
            }
        })
        .build()
}

fn list_tool(runner: Arc<dyn JobRunner>) -> ToolDefinition {
    ToolDefinition::builder("jobs.list")
        .category("jobs")
        .description("Your background jobs, newest first, optionally only those with one status.")
        .approval(ApprovalTier::Read)
        .mcp(hints(true))
        .handler_with_output(move |input: ListInput, ctx| {
            let runner = Arc::clone(&runner);
            async move {
                let jobs: Vec<JobRecord> = runner
                    .list(owner(&ctx).as_deref())
                    .await
                    .into_iter()
                    .filter(|r| input.status.is_none_or(|s| r.status == s))
                    .collect();
                let display = jobs.iter().map(line).collect::<Vec<_>>().join("\n");
                let data =
                    json!({ "jobs": jobs.iter().map(JobRecord::summary).collect::<Vec<_>>() });
                let display = if display.is_empty() {
                    "No jobs.".to_owned()
                } else {
                    display
                };
                Ok::<_, ToolError>(ToolOutput::new(data).with_display(display))
            }
        })
        .build()
}
