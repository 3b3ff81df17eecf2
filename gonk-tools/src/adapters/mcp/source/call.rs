//! One call of an imported tool: the remote call with our cancellation and
//! time limit passed on, its progress forwarded, and its answer mapped to
//! our outcome (`REMOTE_*` codes for what went wrong on the other side).

use std::sync::Arc;

use futures::StreamExt;
use rmcp::model::{CallToolResult, ServerResult};
use serde_json::{json, Map, Value};

use crate::context::ToolContext;
use crate::definition::Provenance;
use crate::error::{ErrorCode, ToolError};
use crate::event::{DisplayBlock, ToolEvent};
use crate::schema::CompiledSchema;

use super::super::client::CallEnd;
use super::SourceShared;

/// The most characters of a remote's error text our error message keeps
/// (all of it stays in `details.content`).
const ERROR_MESSAGE_LIMIT: usize = 500;

/// An imported tool, as its handler needs it.
pub(super) struct RemoteTool {
    pub(super) shared: Arc<SourceShared>,
    /// Our name (`<serverId>.<remoteName>`).
    pub(super) name: String,
    /// The remote's name.
    pub(super) remote: String,
    /// The output schema the remote advertised, compiled.
    pub(super) output: Option<Arc<CompiledSchema>>,
    pub(super) provenance: Provenance,
}

/// The data an answered call carries until it is mapped: the raw result.
fn remote_end(name: &str, end: CallEnd) -> ToolEvent {
    match end {
        CallEnd::Answered(result) => answered(name, *result),
        CallEnd::Refused(error) => ToolEvent::error(
            ToolError::new(
                ErrorCode::RemoteProtocolError,
                format!(
                    "The remote MCP server refused the call of {name}: {} (JSON-RPC {})",
                    error.message, error.code.0
                ),
            )
            .with_details(json!({"jsonrpcCode": error.code.0, "message": error.message})),
        ),
        CallEnd::Broken(message) => ToolEvent::error(transport_error(name, &message)),
    }
}

/// A `tools/call` answer as raw result data, or why it is not a result.
fn answered(name: &str, result: ServerResult) -> ToolEvent {
    let no_content = || {
        ToolEvent::error(protocol_error(
            name,
            "answered tools/call with a result that has no content",
        ))
    };
    match result {
        ServerResult::CallToolResult(result) => match serde_json::to_value(&result) {
            Ok(raw) => ToolEvent::Result {
                data: raw,
                display: None,
            },
            Err(e) => ToolEvent::error(protocol_error(name, &format!("unreadable result: {e}"))),
        },
        // A complete result with no field rmcp knows.
        ServerResult::CustomResult(custom) => {
            match serde_json::from_value::<CallToolResult>(custom.0) {
                Ok(result) => answered(name, ServerResult::CallToolResult(result)),
                Err(_) => no_content(),
            }
        }
        ServerResult::EmptyResult(_) => no_content(),
        other => ToolEvent::error(protocol_error(
            name,
            &format!(
                "answered tools/call with something else: {}",
                kind_of(&other)
            ),
        )),
    }
}

fn kind_of(result: &ServerResult) -> String {
    let text = format!("{result:?}");
    text.split(['(', ' ', '{'])
        .next()
        .unwrap_or("unknown")
        .to_owned()
}

fn protocol_error(remote: &str, what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::RemoteProtocolError,
        format!("The remote MCP tool {remote} {what}"),
    )
}

/// A failure to reach the remote: `details` are `{name, message}`, the
/// name saying which kind of failure.
pub(super) fn transport_error(tool: &str, message: &str) -> ToolError {
    ToolError::new(
        ErrorCode::RemoteTransportError,
        format!("Calling remote MCP tool {tool} failed: {message}; check that the server is running, or reconnect the source"),
    )
    .with_details(json!({"name": "McpTransportError", "message": message}))
}

/// A content block as we pass it on: without `annotations` and `_meta`.
fn plain_block(block: &Value) -> Value {
    match block {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| *key != "annotations" && *key != "_meta")
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn cut(text: &str, limit: usize) -> &str {
    match text.char_indices().nth(limit) {
        None => text,
        Some((end, _)) => &text[..end],
    }
}

impl RemoteTool {
    /// Runs one call: the remote call raced against our cancellation, the
    /// source's time limit (or the call's deadline, if sooner) and the
    /// connection's end. A transport failure marks the connection broken
    /// ([`McpSource::is_disconnected`](super::McpSource::is_disconnected)).
    pub(super) fn run(
        self: Arc<Self>,
        input: Value,
        ctx: ToolContext,
    ) -> impl futures::Stream<Item = ToolEvent> + Send + 'static {
        async_stream::stream! {
            let limit = self.shared.options.call_timeout;
            let own = limit.and_then(|limit| tokio::time::Instant::now().checked_add(limit));
            let deadline = match (own, ctx.deadline()) {
                (Some(own), Some(theirs)) => Some(own.min(theirs)),
                (own, theirs) => own.or(theirs),
            };
            let timer = async move {
                match deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            let mut timer = std::pin::pin!(timer);
            let timed_out = |name: &str| {
                let after = limit.map(|l| humantime::format_duration(l).to_string()).unwrap_or_else(|| "its deadline".to_owned());
                ToolEvent::error(ToolError::new(
                    ErrorCode::RemoteTimeout,
                    format!("Remote MCP tool {name} did not answer within {after}; the remote was told to stop"),
                ))
            };
            let Some(live) = self.shared.connection() else {
                yield ToolEvent::error(transport_error(&self.name, "the source is not connected"));
                return;
            };
            let mut events = live.client.call(&self.remote, input, remote_end);
            let connection = live.ended.clone();
            let failed = Arc::clone(&live.failed);
            drop(live);
            loop {
                // Dropping `events` sends the remote `notifications/cancelled`.
                let event = tokio::select! {
                    biased;
                    _ = ctx.cancellation().cancelled() => {
                        drop(events);
                        yield ToolEvent::error(ToolError::new(
                            ErrorCode::RemoteCancelled,
                            format!("The call of remote MCP tool {} was cancelled; the remote was told to stop", self.name),
                        ));
                        return;
                    }
                    _ = connection.cancelled() => {
                        drop(events);
                        yield ToolEvent::error(ToolError::new(
                            ErrorCode::RemoteCancelled,
                            format!("The call of remote MCP tool {} was cancelled: its source was closed or reconnected; call it again", self.name),
                        ));
                        return;
                    }
                    _ = &mut timer => {
                        drop(events);
                        yield timed_out(&self.name);
                        return;
                    }
                    event = events.next() => event,
                };
                match event {
                    Some(ToolEvent::Result { data, .. }) => {
                        yield self.outcome(data);
                        return;
                    }
                    Some(error @ ToolEvent::Error { .. }) => {
                        if matches!(&error, ToolEvent::Error { code: ErrorCode::RemoteTransportError, .. }) {
                            // Whoever keeps the source up reconnects it.
                            failed.store(true, std::sync::atomic::Ordering::Release);
                        }
                        yield error;
                        return;
                    }
                    // Progress and logs, as the remote sends them.
                    Some(other) => yield other,
                    None => {
                        failed.store(true, std::sync::atomic::Ordering::Release);
                        yield ToolEvent::error(transport_error(&self.name, "the call ended without an answer"));
                        return;
                    }
                }
            }
        }
    }

    /// Our outcome of the remote's result (`raw`, a `CallToolResult`).
    fn outcome(&self, raw: Value) -> ToolEvent {
        let Value::Object(raw) = raw else {
            return ToolEvent::error(protocol_error(
                &self.name,
                "answered with a non-object result",
            ));
        };
        let Some(Value::Array(content)) = raw.get("content") else {
            return ToolEvent::error(protocol_error(
                &self.name,
                "answered tools/call with a result that has no content",
            ));
        };
        let content: Vec<Value> = content.iter().map(plain_block).collect();
        let structured = raw.get("structuredContent").cloned();
        let provenance = serde_json::to_value(&self.provenance).unwrap_or(Value::Null);
        if raw.get("isError").and_then(Value::as_bool) == Some(true) {
            let text = first_text(&content)
                .map(|text| cut(text, ERROR_MESSAGE_LIMIT).to_owned())
                .unwrap_or_else(|| "no message".to_owned());
            let mut details = Map::new();
            details.insert("content".into(), Value::Array(content));
            if let Some(structured) = structured {
                details.insert("structuredContent".into(), structured);
            }
            details.insert("provenance".into(), provenance);
            return ToolEvent::error(
                ToolError::new(
                    ErrorCode::RemoteToolError,
                    format!("Remote MCP tool {} reported an error: {text}", self.name),
                )
                .with_details(Value::Object(details)),
            );
        }
        if let Some(schema) = &self.output {
            let checked = match &structured {
                Some(value) => schema.validate(value),
                None => Err(vec![crate::error::ValidationIssue::new(
                    "",
                    "the tool advertises an output schema but sent no structuredContent",
                )]),
            };
            if let Err(issues) = checked {
                return ToolEvent::error(
                    ToolError::new(
                        ErrorCode::RemoteOutputInvalid,
                        format!(
                            "Remote MCP tool {} answered with output that does not match its output schema",
                            self.name
                        ),
                    )
                    .with_details(json!({ "issues": issues })),
                );
            }
        }
        let display = text_display(&content);
        let mut data = Map::new();
        data.insert("content".into(), Value::Array(content));
        if let Some(structured) = structured {
            data.insert("structuredContent".into(), structured);
        }
        data.insert("provenance".into(), provenance);
        ToolEvent::Result {
            data: Value::Object(data),
            display,
        }
    }
}

fn first_text(content: &[Value]) -> Option<&str> {
    content
        .iter()
        .find(|block| block["type"] == "text")
        .and_then(|block| block["text"].as_str())
}

/// The text blocks as our display, for the surfaces that show text.
fn text_display(content: &[Value]) -> Option<crate::event::ToolDisplay> {
    let blocks: Vec<DisplayBlock> = content
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .map(|text| DisplayBlock::Text {
            text: text.to_owned(),
        })
        .collect();
    (!blocks.is_empty()).then(|| blocks.into())
}
