//! [`JobRecord`]: what the runner knows of one job.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::ask::InputRequest;
use crate::error::ToolError;
use crate::event::LogLevel;
use crate::event::ToolOutput;

/// Where a job is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Launched, not started yet.
    Queued,
    /// Its call is running.
    Running,
    /// It ended with a result.
    Succeeded,
    /// It ended with an error.
    Failed,
    /// It was cancelled.
    Cancelled,
}

impl JobStatus {
    /// Whether the job has ended.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobStatus::Succeeded | JobStatus::Failed | JobStatus::Cancelled
        )
    }

    /// The wire name (`"running"`).
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Succeeded => "succeeded",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }
}

/// The last progress a job reported.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobProgress {
    /// Completion in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    /// What it is doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One log line of a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobLog {
    /// Severity.
    pub level: LogLevel,
    /// The message.
    pub message: String,
}

/// One job: its tool, owner, status, progress, recent logs and outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRecord {
    /// The job's id.
    pub id: String,
    /// The tool it runs.
    pub tool: String,
    /// What kind of work it is.
    pub kind: String,
    /// Who launched it: the caller's security context key, `None` for the
    /// trusted internal (unauthenticated) path. Only the same owner sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Where it is.
    pub status: JobStatus,
    /// When it was launched (UTC, RFC 3339).
    pub created_at: String,
    /// When it last changed (UTC, RFC 3339).
    pub updated_at: String,
    /// Its last progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<JobProgress>,
    /// Its most recent log lines (bounded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<JobLog>,
    /// The result of a succeeded job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ToolOutput>,
    /// The error of a failed (or cancelled) job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// Questions the running job waits to have answered, by key (see
    /// [`JobRunner::answer`](super::JobRunner::answer)).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub questions: BTreeMap<String, InputRequest>,
}

impl JobRecord {
    /// The record of `launch`, just queued as `id`.
    pub(crate) fn queued(id: String, launch: &super::JobLaunch) -> JobRecord {
        let now = now_rfc3339();
        JobRecord {
            id,
            tool: launch.tool.clone(),
            kind: launch.kind.clone(),
            owner: launch.owner(),
            status: JobStatus::Queued,
            created_at: now.clone(),
            updated_at: now,
            progress: None,
            logs: Vec::new(),
            output: None,
            error: None,
            questions: Default::default(),
        }
    }

    /// What the `jobs.*` tools show of it: everything but the owner and the
    /// outcome (`jobs.result` gives that).
    pub fn summary(&self) -> Value {
        let mut view = json!({
            "jobId": self.id,
            "tool": self.tool,
            "kind": self.kind,
            "status": self.status,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        });
        if let Some(progress) = &self.progress {
            view["progress"] = json!(progress);
        }
        if !self.logs.is_empty() {
            view["logs"] = json!(self.logs);
        }
        if let Some(error) = &self.error {
            view["error"] = json!({ "code": error.code, "message": error.message });
        }
        if !self.questions.is_empty() {
            view["waitingFor"] = json!(self.questions.keys().collect::<Vec<_>>());
        }
        view
    }

    /// A one-line status for humans (`running, 40% reindexing`).
    pub fn status_line(&self) -> String {
        let mut line = self.status.as_str().to_owned();
        if let Some(progress) = &self.progress {
            if let Some(percent) = progress.percent {
                line.push_str(&format!(", {percent:.0}%"));
            }
            if let Some(message) = &progress.message {
                line.push(' ');
                line.push_str(message);
            }
        }
        line
    }
}

/// Now, as RFC 3339 UTC with milliseconds.
pub(super) fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}
