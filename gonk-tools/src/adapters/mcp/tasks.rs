//! Detached tools as MCP tasks (the `io.modelcontextprotocol/tasks`
//! extension, SEP-2663, as rmcp implements it).
//!
//! A `tools/call` of a detached tool from a client that declared the
//! extension runs through dispatch like any call; the job handle it
//! returns becomes a `CreateTaskResult` whose task id is the job id.
//! `tasks/get` reads the job (progress in the status message, the
//! `CallToolResult` inline once it ended, a tool error as a completed
//! result with `isError`), `tasks/cancel` cancels it. A task belongs to the
//! caller that made it: another caller's reads as unknown.

use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, ErrorCode as RpcErrorCode, GetTaskResult,
    JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::content::{error_result, success_result, ErrorPlacement};
use crate::jobs::{JobRecord, JobRunner, JobStatus};
use crate::registry::ToolRegistry;
use crate::ToolError;

/// How often a client should poll `tasks/get`, in milliseconds.
const POLL_INTERVAL_MS: u64 = 500;

/// The task for a `tools/call` result, when the call was of a detached tool
/// that launched a job and the client declared the tasks extension.
pub(super) fn as_task(
    registry: &ToolRegistry,
    result: &CallToolResult,
    context: &RequestContext<RoleServer>,
) -> Option<CreateTaskResult> {
    if result.is_error == Some(true) {
        return None;
    }
    // The handle of a detached call: `{jobId, kind, message}`, kind the tool.
    let handle = result.structured_content.as_ref()?;
    let job = handle.get("jobId")?.as_str()?;
    let tool = handle.get("kind")?.as_str()?;
    if !registry.get(tool).is_some_and(|def| def.detached) {
        return None;
    }
    if !context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
    {
        return None;
    }
    // The job was launched just now; `tasks/get` gives its record's times.
    let now = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let task = Task::new(job, TaskStatus::Working, now.clone(), now)
        .with_status_message("queued")
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    Some(CreateTaskResult::new(task))
}

fn task_of(record: &JobRecord) -> Task {
    let mut task = Task::new(
        record.id.clone(),
        TaskStatus::Working,
        record.created_at.clone(),
        record.updated_at.clone(),
    )
    .with_poll_interval_ms(POLL_INTERVAL_MS);
    if !record.status.is_terminal() {
        task = task.with_status_message(record.status_line());
    }
    task
}

fn object(result: CallToolResult) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

/// `tasks/get`: the job as a detailed task.
pub(super) fn detailed(record: JobRecord, placement: ErrorPlacement) -> GetTaskResult {
    let task = task_of(&record);
    let payload = match record.status {
        JobStatus::Queued | JobStatus::Running => TaskPayload::Working,
        JobStatus::Cancelled => TaskPayload::Cancelled,
        JobStatus::Succeeded => TaskPayload::Completed {
            result: object(success_result(
                record
                    .output
                    .unwrap_or_else(|| crate::ToolOutput::new(Value::Null)),
            )),
        },
        // A tool's error is a completed call with `isError` (the spec's
        // `failed` is for JSON-RPC errors).
        JobStatus::Failed => {
            let error = record
                .error
                .unwrap_or_else(|| ToolError::internal("the job failed without an error"));
            TaskPayload::Completed {
                result: object(error_result(&error, placement)),
            }
        }
    };
    GetTaskResult::new(DetailedTask::new(task, payload))
}

/// The answer for a task this caller cannot see, or that never existed.
pub(super) fn unknown_task(id: &str) -> ErrorData {
    ErrorData::new(
        RpcErrorCode::INVALID_PARAMS,
        format!("Unknown task: {id}"),
        None,
    )
}

/// Looks up a task for `owner`.
pub(super) fn find(
    runner: &dyn JobRunner,
    owner: Option<&str>,
    id: &str,
) -> Result<JobRecord, ErrorData> {
    runner.get(owner, id).ok_or_else(|| unknown_task(id))
}
