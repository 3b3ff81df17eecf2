//! Detached tools as MCP tasks: the `io.modelcontextprotocol/tasks`
//! extension, served the same way to a 2025 session (declared at
//! `initialize`) and to a stateless `2026-07-28` request (declared in its
//! `_meta`).
//!
//! A task is a job: its id is the job id, its state the job's record, and
//! it belongs to the caller that launched it (another caller's task reads as
//! unknown, `-32602`, like one that never existed). The server decides per
//! request: a `tools/call` of a detached tool from a client that declared
//! the extension runs through dispatch like any call, and the job handle it
//! returns becomes a `CreateTaskResult` (`resultType: "task"`); a caller
//! that passes `wait: true` gets the result inline, and a client without
//! the extension gets the job handle as the result (the `jobs.*` tools
//! follow it up), unless the host made the tool one that requires a task.
//!
//! * `tasks/get` — the job as a detailed task: `working` (progress in the
//!   status message), `completed` with the `CallToolResult` inline (a tool's
//!   error is a completed call with `isError`), `failed` with a JSON-RPC
//!   error when the job ended without the tool's answer (a panic, an
//!   internal fault, a job cut off by a restart), `cancelled`.
//! * `tasks/cancel` — cancels the job (its handler is dropped, so it settles
//!   as `cancelled`); cancelling a task that already ended is acknowledged
//!   and changes nothing.
//! * `tasks/update` — acknowledged for a known task. Its `inputResponses`
//!   answer the task's `inputRequests`: a tool running as a job that asks
//!   its caller (`ctx.elicit`, `ctx.ask`, an approval question) makes the
//!   task `input_required` with the question under its key until it is
//!   answered (one key at a time if the client likes); keys the job does
//!   not wait on are ignored.
//! * `ttlMs` — the runner's retention ([`JobRunner::retention`]): a finished
//!   job stays readable at least that long after it was launched (`null`
//!   when the runner keeps jobs without a time limit). The runner's bound
//!   on the number of finished jobs can evict one sooner under load.
//!
//! Status notifications (`notifications/tasks`) are not sent: the stateless
//! era delivers them on `subscriptions/listen`, whose filter (in rmcp 3.11)
//! cannot name tasks yet, so clients poll `tasks/get` at the advertised
//! `pollIntervalMs`.

use rmcp::model::{
    CallToolResult, ClientCapabilities, CreateTaskResult, DetailedTask, ErrorCode as RpcErrorCode,
    GetTaskResult, JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Map, Value};

use super::content::{error_result, success_result, ErrorPlacement};
use super::tools;
use crate::adapters::mcp::{McpServerOptions, WriteToolPolicy};
use crate::error::ErrorCode;
use crate::jobs::{JobRecord, JobRunner, JobStatus};
use crate::registry::ToolRegistry;
use crate::ToolError;

/// How often a client should poll `tasks/get`, in milliseconds.
const POLL_INTERVAL_MS: u64 = 500;

/// Whether the request's client declared the tasks extension (in the
/// request's `_meta`, or at `initialize` for a 2025 session).
fn client_declares_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

/// The answer to a `tools/call` of `name`, a tool that requires a task
/// ([`McpServerOptions::tasks_required`]),
/// from a client that did not declare the extension; `None` when the call
/// may go on: the tool does not require a task (or is not exposed, which
/// the call answers), the client declared the extension, or there is no job
/// runner (then no tool can be a task, and a detached tool runs inline as
/// it always does without one). The tool does not run.
///
/// A stateless-era request gets the protocol's missing-capability error
/// (`-32021`, naming the extension in `requiredCapabilities`); a 2025
/// session, which predates that error, an `INPUT_UNAVAILABLE` error result
/// with the same `requiredCapabilities` in its details.
pub(super) fn required_task(
    registry: &ToolRegistry,
    options: &McpServerOptions,
    policy: WriteToolPolicy,
    name: &str,
    context: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResult, ErrorData>> {
    // Most servers require no task: no look-up on their calls.
    let required = &options.tasks_required;
    if required.is_empty() {
        return None;
    }
    let def = tools::resolve(registry, name, options, policy)?;
    if !(required.contains(def.name.as_str()) || required.contains(tools::mcp_name(&def)))
        || crate::jobs::runner(registry).is_none()
        || client_declares_tasks(context)
    {
        return None;
    }
    let needed = ClientCapabilities::builder().enable_tasks().build();
    let stateless = context
        .meta
        .protocol_version()
        .is_some_and(|version| !version.has_initialize());
    if stateless {
        return Some(Err(ErrorData::missing_required_client_capability(needed)));
    }
    let error = ToolError::new(
        ErrorCode::InputUnavailable,
        format!(
            "`{name}` runs only as a task: declare the `{}` extension to call it",
            rmcp::model::TASKS_EXTENSION_ID
        ),
    )
    .with_details(json!({ "requiredCapabilities": needed }));
    Some(Ok(error_result(&error, ErrorPlacement::Structured)))
}

/// The task for a `tools/call` result, when the call was of a detached
/// tool that launched a job and the client declared the tasks extension.
/// `owner` is the caller's job owner key (the job is read back as the
/// caller sees it).
pub(super) async fn as_task(
    registry: &ToolRegistry,
    result: &CallToolResult,
    context: &RequestContext<RoleServer>,
    owner: impl FnOnce() -> Option<String>,
) -> Option<CreateTaskResult> {
    if result.is_error == Some(true) {
        return None;
    }
    // The handle of a detached call: `{jobId, kind, message}`, kind the tool.
    let handle = result.structured_content.as_ref()?;
    let job = handle.get("jobId")?.as_str()?;
    let tool = handle.get("kind")?.as_str()?;
    if !registry.get(tool).is_some_and(|def| def.detached) || !client_declares_tasks(context) {
        return None;
    }
    let runner = crate::jobs::runner(registry)?;
    // The runner holds the job before it hands out its id, so the task is
    // readable (`tasks/get`) before its id reaches the client.
    let record = runner.get(owner().as_deref(), job).await?;
    Some(CreateTaskResult::new(task_of(&record, &*runner)))
}

/// A job's state as a task (the status is the payload's, set by
/// [`DetailedTask::new`]).
fn task_of(record: &JobRecord, runner: &dyn JobRunner) -> Task {
    let mut task = Task::new(
        record.id.clone(),
        TaskStatus::Working,
        record.created_at.clone(),
        record.updated_at.clone(),
    )
    .with_poll_interval_ms(POLL_INTERVAL_MS);
    if let Some(retention) = runner.retention() {
        let ttl = u64::try_from(retention.max_age.as_millis()).unwrap_or(u64::MAX);
        task = task.with_ttl_ms(ttl.max(1));
    }
    if !record.status.is_terminal() {
        task = task.with_status_message(record.status_line());
    }
    task
}

fn object(value: impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

/// Whether a job's error means it ended without the tool's answer — a
/// panic or internal fault (`INTERNAL`), no outcome at all (`NO_RESULT`), a
/// job cut off by a restart (`INTERRUPTED`) — which the extension reports
/// as a `failed` task with a JSON-RPC error. Any other error is the tool's
/// own answer: a completed call with `isError`, as the same call made
/// without a task returns it.
fn is_protocol_failure(error: &ToolError) -> bool {
    match &error.code {
        ErrorCode::Internal | ErrorCode::NoResult => true,
        ErrorCode::Custom(code) => code == "INTERRUPTED",
        _ => false,
    }
}

/// The JSON-RPC error of a `failed` task: internal error, our code and
/// details in `data`.
fn protocol_error(error: &ToolError) -> ErrorData {
    let mut data = json!({ "code": error.code.as_str() });
    if let Some(details) = &error.details {
        data["details"] = details.clone();
    }
    ErrorData::new(
        RpcErrorCode::INTERNAL_ERROR,
        error.message.clone(),
        Some(data),
    )
}

/// `tasks/get`: the job as a detailed task.
pub(super) fn detailed(
    record: JobRecord,
    runner: &dyn JobRunner,
    placement: ErrorPlacement,
) -> GetTaskResult {
    let task = task_of(&record, runner);
    let payload = match record.status {
        JobStatus::Running if !record.questions.is_empty() => {
            let input_requests = record
                .questions
                .iter()
                .filter_map(|(key, question)| {
                    Some((key.clone(), super::asking::to_mcp(question).ok()?))
                })
                .collect();
            TaskPayload::InputRequired { input_requests }
        }
        JobStatus::Queued | JobStatus::Running => TaskPayload::Working,
        JobStatus::Cancelled => TaskPayload::Cancelled,
        JobStatus::Succeeded => TaskPayload::Completed {
            result: object(success_result(
                record
                    .output
                    .unwrap_or_else(|| crate::ToolOutput::new(Value::Null)),
            )),
        },
        JobStatus::Failed => {
            let error = record
                .error
                .unwrap_or_else(|| ToolError::internal("the job failed without an error"));
            if is_protocol_failure(&error) {
                TaskPayload::Failed {
                    error: object(protocol_error(&error)),
                }
            } else {
                TaskPayload::Completed {
                    result: object(error_result(&error, placement)),
                }
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
pub(super) async fn find(
    runner: &dyn JobRunner,
    owner: Option<&str>,
    id: &str,
) -> Result<JobRecord, ErrorData> {
    runner.get(owner, id).await.ok_or_else(|| unknown_task(id))
}

/// `tasks/cancel`: cancels `owner`'s task; a task that already ended is
/// acknowledged unchanged.
pub(super) async fn cancel(
    runner: &dyn JobRunner,
    owner: Option<&str>,
    id: &str,
) -> Result<(), ErrorData> {
    runner
        .cancel(owner, id)
        .await
        .map(drop)
        .ok_or_else(|| unknown_task(id))
}

/// `tasks/update`: the answers go to the questions the job waits on (a
/// key it does not wait on is ignored, as the extension says); the task's
/// new state shows on the next `tasks/get`.
pub(super) async fn update(
    runner: &dyn JobRunner,
    owner: Option<&str>,
    id: &str,
    answers: Map<String, Value>,
) -> Result<(), ErrorData> {
    runner
        .answer(owner, id, answers)
        .await
        .ok_or_else(|| unknown_task(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::EmbeddedRunner;

    fn record(status: JobStatus, error: Option<ToolError>) -> JobRecord {
        JobRecord {
            id: "job-1".into(),
            tool: "t".into(),
            kind: "t".into(),
            owner: None,
            status,
            created_at: "2026-01-01T00:00:00.000Z".into(),
            updated_at: "2026-01-01T00:00:01.000Z".into(),
            progress: None,
            logs: Vec::new(),
            output: None,
            error,
            questions: Default::default(),
        }
    }

    fn wire(record: JobRecord) -> Value {
        let runner = EmbeddedRunner::new();
        serde_json::to_value(detailed(record, &runner, ErrorPlacement::Structured)).unwrap()
    }

    #[test]
    fn a_tool_error_is_a_completed_call_and_a_fault_a_failed_task() {
        let tool_error = wire(record(
            JobStatus::Failed,
            Some(ToolError::new(ErrorCode::custom("BAD_PATH"), "no")),
        ));
        assert_eq!(tool_error["status"], "completed");
        assert_eq!(tool_error["result"]["isError"], true);
        assert!(tool_error.get("error").is_none());

        for code in [
            ErrorCode::Internal,
            ErrorCode::NoResult,
            ErrorCode::custom("INTERRUPTED"),
        ] {
            let failed = wire(record(
                JobStatus::Failed,
                Some(ToolError::new(code.clone(), "boom")),
            ));
            assert_eq!(failed["status"], "failed", "{code}");
            assert_eq!(failed["error"]["code"], -32603);
            assert_eq!(failed["error"]["message"], "boom");
            assert_eq!(failed["error"]["data"]["code"], code.as_str());
            assert!(failed.get("result").is_none());
        }
    }

    #[test]
    fn the_time_to_live_is_the_runners_retention_in_whole_milliseconds() {
        let working = wire(record(JobStatus::Running, None));
        assert_eq!(working["status"], "working");
        assert_eq!(working["ttlMs"], 3_600_000);
        assert_eq!(working["pollIntervalMs"], POLL_INTERVAL_MS);
        assert_eq!(working["statusMessage"], "running");
        assert!(working.get("requestState").is_none());

        let cancelled = wire(record(JobStatus::Cancelled, None));
        assert_eq!(cancelled["status"], "cancelled");
        assert!(cancelled.get("statusMessage").is_none());
    }
}
