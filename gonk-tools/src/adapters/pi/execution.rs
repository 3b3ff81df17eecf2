//! Execution mapping: a call runs through
//! [`ToolRegistry::invoke`](crate::ToolRegistry::invoke) (validation, auth,
//! approval, metrics — the whole contract), and its events become what
//! Pi's `execute` hands back — `onUpdate` partial results while it runs, one
//! [`PiToolResult`] at the end.
//!
//! * progress (streamed or through `ctx.notify`) → an update
//!   `{content: [text: message | "<p>%" | "…"], details: {progress: true, message?, percent?}}`;
//! * data chunks → an update `{content: [text: the chunk], details: {progress: true, chunk}}`;
//! * logs → the host's log (the context's [`LogSink`](crate::context::LogSink)), never the result;
//! * success → `{content: the display, details: the data}`;
//! * error → `{isError: true, content: ["[CODE] message", pretty details?]}`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::context::{LogRecord, LogSink, ToolContext};
use crate::error::ToolError;
use crate::event::{collect_tool_outcome, ToolOutput};
use crate::event::{DisplayBlock, ResourceContents, ToolDisplay, ToolEvent};
use crate::registry::ToolRegistry;

/// One content item of a Pi tool result or update.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum PiContent {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// A base64 image.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type (`"image/png"`).
        mime_type: String,
    },
}

impl PiContent {
    /// A text item.
    pub fn text(text: impl Into<String>) -> PiContent {
        PiContent::Text { text: text.into() }
    }
}

/// A partial result handed to Pi's `onUpdate` while a call runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PiUpdate {
    /// What Pi shows.
    pub content: Vec<PiContent>,
    /// `{progress: true, …}`: the event's fields.
    pub details: Value,
}

/// What Pi's `execute` returns: the content the model reads, the details
/// (the result's data), and `isError` on failure (absent on success).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiToolResult {
    /// What the model reads.
    pub content: Vec<PiContent>,
    /// The result's data (success only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// Receives the updates of one call, from the call's task or from the
/// handler's `ctx.notify` (any thread).
pub type UpdateSink = Arc<dyn Fn(PiUpdate) + Send + Sync>;

/// The update of a progress event: the message, else the percentage, else
/// an ellipsis.
pub fn progress_update(percent: Option<f64>, message: Option<&str>) -> PiUpdate {
    let text = match (message, percent) {
        (Some(message), _) => message.to_owned(),
        // f64's Display prints 50.0 as "50" and 12.5 as "12.5".
        (None, Some(percent)) => format!("{percent}%"),
        (None, None) => "…".to_owned(),
    };
    let mut details = Map::new();
    details.insert("progress".into(), Value::Bool(true));
    if let Some(message) = message {
        details.insert("message".into(), Value::String(message.to_owned()));
    }
    if let Some(percent) = percent {
        details.insert("percent".into(), json!(percent));
    }
    PiUpdate {
        content: vec![PiContent::text(text)],
        details: Value::Object(details),
    }
}

/// The update of a data chunk: a string as it is, anything else as JSON.
pub fn data_update(chunk: &Value) -> PiUpdate {
    let text = match chunk {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    PiUpdate {
        content: vec![PiContent::text(text)],
        details: json!({"progress": true, "chunk": chunk}),
    }
}

/// The update an event gives, if any (progress and data only).
pub fn update_for(event: &ToolEvent) -> Option<PiUpdate> {
    match event {
        ToolEvent::Progress { percent, message } => {
            Some(progress_update(*percent, message.as_deref()))
        }
        ToolEvent::Data { chunk } => Some(data_update(chunk)),
        _ => None,
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn captioned(caption: &Option<String>, text: String) -> String {
    match caption {
        Some(caption) => format!("{caption}\n{text}"),
        None => text,
    }
}

/// One display block as Pi content: markdown and text as text, code fenced,
/// JSON pretty, an image as an image, a link as `title: url`. Pi content
/// has no audio or resource item: audio becomes a note that it was left
/// out, a resource its text (or a note naming it).
pub fn block_content(block: &DisplayBlock) -> PiContent {
    match block {
        DisplayBlock::Text { text } | DisplayBlock::Markdown { text } => PiContent::text(text),
        DisplayBlock::Code {
            language,
            code,
            caption,
        } => PiContent::text(captioned(caption, format!("```{language}\n{code}\n```"))),
        DisplayBlock::Json { value, caption } => PiContent::text(captioned(caption, pretty(value))),
        DisplayBlock::Image {
            mime_type, data, ..
        } => PiContent::Image {
            data: data.clone(),
            mime_type: mime_type.clone(),
        },
        DisplayBlock::Link { url, title } => PiContent::text(match title {
            Some(title) => format!("{title}: {url}"),
            None => url.clone(),
        }),
        DisplayBlock::Audio { mime_type, .. } => {
            PiContent::text(format!("[{mime_type} audio, not shown]"))
        }
        DisplayBlock::Resource {
            uri,
            mime_type,
            contents,
        } => match contents {
            ResourceContents::Text { text } => PiContent::text(text),
            ResourceContents::Blob { .. } => PiContent::text(format!(
                "[resource {uri}{}]",
                mime_type
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            )),
        },
    }
}

/// A display as Pi content.
pub fn display_content(display: &ToolDisplay) -> Vec<PiContent> {
    match display {
        ToolDisplay::Text(text) => vec![PiContent::text(text)],
        ToolDisplay::Blocks(blocks) => blocks.iter().map(block_content).collect(),
    }
}

/// A success: the display as content (no display: one text item, string
/// data as it is, anything else as JSON), the data as details.
pub fn success_result(output: ToolOutput<Value>) -> PiToolResult {
    let content = match &output.display {
        Some(display) => display_content(display),
        None => vec![PiContent::text(match &output.data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })],
    };
    PiToolResult {
        content,
        details: Some(output.data),
        is_error: false,
    }
}

/// A failure: `[CODE] message`, then the details as pretty JSON when there
/// are any.
pub fn error_result(error: &ToolError) -> PiToolResult {
    let mut content = vec![PiContent::text(format!(
        "[{}] {}",
        error.code, error.message
    ))];
    if let Some(details) = &error.details {
        content.push(PiContent::text(pretty(details)));
    }
    PiToolResult {
        content,
        details: None,
        is_error: true,
    }
}

/// Where a call's events go besides its outcome: progress and data to the
/// update sink, logs to the context's log sink (the host's log).
struct Router {
    host_log: Option<Arc<dyn LogSink>>,
    tool: Arc<str>,
    on_update: UpdateSink,
}

impl Router {
    fn route(&self, event: &ToolEvent) {
        match event {
            ToolEvent::Log {
                level,
                message,
                meta,
            } => {
                if let Some(sink) = &self.host_log {
                    sink.log(&LogRecord {
                        level: *level,
                        message,
                        meta: meta.as_ref(),
                        tool: Some(&self.tool),
                        call_stack: std::slice::from_ref(&self.tool),
                    });
                }
            }
            other => {
                if let Some(update) = update_for(other) {
                    (self.on_update)(update);
                }
            }
        }
    }
}

/// Runs `tool` with `input` through `registry.invoke` and maps the call to
/// Pi: updates to `on_update`, logs to `ctx`'s logger, the outcome to the
/// returned result. Cancelling `ctx`'s token aborts the call: the handler
/// is dropped and the result is an `[ABORTED]` error.
pub async fn execute(
    registry: &ToolRegistry,
    tool: &str,
    input: Value,
    ctx: ToolContext,
    on_update: UpdateSink,
) -> PiToolResult {
    let router = Arc::new(Router {
        host_log: ctx.log_sink().cloned(),
        tool: Arc::from(tool),
        on_update,
    });
    // `ctx.notify` from a non-streaming handler is routed like a streamed
    // event (after the host's own callback, if any).
    let notified = {
        let router = Arc::clone(&router);
        move |event: &ToolEvent| router.route(event)
    };
    let events = registry.invoke(tool, input, ctx.also_notify(notified));
    match collect_tool_outcome(events, |event| router.route(event)).await {
        Ok(output) => success_result(output),
        Err(error) => error_result(&error),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::error::ErrorCode;
    use crate::prelude::*;

    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<String>>>);

    impl LogSink for Lines {
        fn log(&self, record: &LogRecord<'_>) {
            self.0.lock().unwrap().push(format!(
                "{} {}: {}",
                record.tool.unwrap_or("?"),
                record.level.as_str(),
                record.message
            ));
        }
    }

    fn collect_updates() -> (UpdateSink, Arc<Mutex<Vec<PiUpdate>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = Arc::clone(&seen);
            Arc::new(move |u: PiUpdate| seen.lock().unwrap().push(u)) as UpdateSink
        };
        (sink, seen)
    }

    #[derive(Deserialize, JsonSchema)]
    struct Empty {}

    fn registry() -> ToolRegistry {
        let registry = ToolRegistry::new();
        registry
            .register_all([
                ToolDefinition::builder("events")
                    .description("Streams every kind of event.")
                    .approval(ApprovalTier::Read)
                    .stream_handler(|_: Empty, ctx: ToolContext| async move {
                        async_stream::stream! {
                            ctx.progress(10.0, Some("notified".to_owned()));
                            ctx.notify(&ToolEvent::log(LogLevel::Warn, "notified log"));
                            yield ToolEvent::log(LogLevel::Info, "streamed log");
                            yield ToolEvent::progress(50.0, None);
                            yield ToolEvent::progress(12.5, None);
                            yield ToolEvent::progress(None, None);
                            yield ToolEvent::data(json!("a string chunk"));
                            yield ToolEvent::data(json!({"rows": 2}));
                            yield ToolEvent::result(json!({"done": true}));
                        }
                    })
                    .build(),
                ToolDefinition::builder("shown")
                    .description("Returns a display.")
                    .approval(ApprovalTier::Read)
                    .handler_with_output(|_: Empty, _| async move {
                        Ok::<_, ToolError>(ToolOutput::new(json!({"n": 1})).with_display(vec![
                            DisplayBlock::Markdown {
                                text: "**bold**".into(),
                            },
                            DisplayBlock::Code {
                                language: "rust".into(),
                                code: "fn main() {}".into(),
                                caption: None,
                            },
                            DisplayBlock::Image {
                                mime_type: "image/png".into(),
                                data: "iVBORw0KGgo=".into(),
                                alt: Some("a chart".into()),
                            },
                            DisplayBlock::Json {
                                value: json!({"a": 1}),
                                caption: None,
                            },
                            DisplayBlock::Link {
                                url: "https://example.invalid".into(),
                                title: Some("Docs".into()),
                            },
                        ]))
                    })
                    .build(),
                ToolDefinition::builder("failing")
                    .description("Fails with details.")
                    .approval(ApprovalTier::Read)
                    .handler(|_: Empty, _| async move {
                        Err::<Value, _>(
                            ToolError::new(ErrorCode::custom("NOTE_LOCKED"), "note 3 is locked")
                                .with_details(json!({"id": 3})),
                        )
                    })
                    .build(),
                ToolDefinition::builder("sleepy")
                    .description("Reports progress, then sleeps; sets a flag when dropped.")
                    .approval(ApprovalTier::Read)
                    .handler(|_: Empty, ctx: ToolContext| async move {
                        struct Dropped(Arc<Mutex<bool>>);
                        impl Drop for Dropped {
                            fn drop(&mut self) {
                                *self.0.lock().unwrap() = true;
                            }
                        }
                        let flag = ctx.host::<Arc<Mutex<bool>>>().cloned().unwrap();
                        let _guard = Dropped(flag);
                        ctx.progress(1.0, Some("started".to_owned()));
                        tokio::time::sleep(Duration::from_secs(600)).await;
                        Ok::<_, ToolError>(json!("woke up"))
                    })
                    .build(),
                ToolDefinition::builder("text")
                    .description("Returns a string.")
                    .approval(ApprovalTier::Read)
                    .handler(|_: Empty, _| async move { Ok::<_, ToolError>("plain") })
                    .build(),
            ])
            .unwrap();
        registry
    }

    #[tokio::test]
    async fn progress_data_and_notify_become_updates_and_logs_go_to_the_host() {
        let logs = Lines::default();
        let (sink, updates) = collect_updates();
        let result = execute(
            &registry(),
            "events",
            json!({}),
            ToolContext::new().with_logger(logs.clone()),
            sink,
        )
        .await;
        let updates = updates.lock().unwrap().clone();
        let as_json: Vec<Value> = updates
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        assert_eq!(
            as_json,
            [
                json!({"content": [{"type": "text", "text": "notified"}], "details": {"progress": true, "message": "notified", "percent": 10.0}}),
                json!({"content": [{"type": "text", "text": "50%"}], "details": {"progress": true, "percent": 50.0}}),
                json!({"content": [{"type": "text", "text": "12.5%"}], "details": {"progress": true, "percent": 12.5}}),
                json!({"content": [{"type": "text", "text": "…"}], "details": {"progress": true}}),
                json!({"content": [{"type": "text", "text": "a string chunk"}], "details": {"progress": true, "chunk": "a string chunk"}}),
                json!({"content": [{"type": "text", "text": "{\"rows\":2}"}], "details": {"progress": true, "chunk": {"rows": 2}}}),
            ]
        );
        assert_eq!(
            *logs.0.lock().unwrap(),
            ["events warn: notified log", "events info: streamed log"]
        );
        let result = serde_json::to_value(&result).unwrap();
        assert_eq!(
            result,
            json!({"content": [{"type": "text", "text": "{\"done\":true}"}], "details": {"done": true}})
        );
        let text = result.to_string();
        assert!(!text.contains("log"), "logs stay out of the result: {text}");
        assert!(result.get("isError").is_none());
    }

    #[tokio::test]
    async fn a_display_renders_as_content_and_the_data_as_details() {
        let (sink, _) = collect_updates();
        let result = execute(&registry(), "shown", json!({}), ToolContext::new(), sink).await;
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({
                "content": [
                    {"type": "text", "text": "**bold**"},
                    {"type": "text", "text": "```rust\nfn main() {}\n```"},
                    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                    {"type": "text", "text": "{\n  \"a\": 1\n}"},
                    {"type": "text", "text": "Docs: https://example.invalid"},
                ],
                "details": {"n": 1},
            })
        );
        let (sink, _) = collect_updates();
        let plain = execute(&registry(), "text", json!({}), ToolContext::new(), sink).await;
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            json!({"content": [{"type": "text", "text": "plain"}], "details": "plain"})
        );
    }

    #[tokio::test]
    async fn errors_carry_the_code_and_the_details_when_present() {
        let (sink, _) = collect_updates();
        let failed = execute(&registry(), "failing", json!({}), ToolContext::new(), sink).await;
        assert_eq!(
            serde_json::to_value(&failed).unwrap(),
            json!({"isError": true, "content": [
                {"type": "text", "text": "[NOTE_LOCKED] note 3 is locked"},
                {"type": "text", "text": "{\n  \"id\": 3\n}"},
            ]})
        );
        let (sink, _) = collect_updates();
        let missing = execute(&registry(), "nope", json!({}), ToolContext::new(), sink).await;
        assert_eq!(
            serde_json::to_value(&missing).unwrap(),
            json!({"isError": true, "content": [{"type": "text", "text": "[TOOL_NOT_FOUND] No such tool: nope"}]})
        );
        let (sink, _) = collect_updates();
        let invalid = execute(
            &registry(),
            "events",
            json!({"x": 1}),
            ToolContext::new(),
            sink,
        )
        .await;
        // `Empty` does not deny unknown fields; a wrong type is invalid.
        assert!(!invalid.is_error, "{invalid:?}");
        let (sink, _) = collect_updates();
        let invalid = execute(&registry(), "events", json!([]), ToolContext::new(), sink).await;
        assert!(invalid.is_error);
        let PiContent::Text { text } = &invalid.content[0] else {
            panic!("text first")
        };
        assert_eq!(text, "[INVALID_INPUT] Input validation failed");
        assert_eq!(invalid.content.len(), 2, "the issues follow as details");
    }

    #[tokio::test]
    async fn cancelling_the_token_drops_the_handler_and_reports_aborted() {
        let dropped = Arc::new(Mutex::new(false));
        let token = CancellationToken::new();
        let (sink, updates) = collect_updates();
        let on_update: UpdateSink = {
            let token = token.clone();
            Arc::new(move |u: PiUpdate| {
                // Abort as soon as the handler says it started.
                token.cancel();
                sink(u);
            })
        };
        let ctx = ToolContext::new()
            .with_cancellation(token)
            .with_host(Arc::clone(&dropped));
        let result = tokio::time::timeout(
            Duration::from_secs(60),
            execute(&registry(), "sleepy", json!({}), ctx, on_update),
        )
        .await
        .expect("the abort ends the call");
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"isError": true, "content": [{"type": "text", "text": "[ABORTED] Tool execution aborted"}]})
        );
        assert_eq!(updates.lock().unwrap().len(), 1);
        assert!(*dropped.lock().unwrap(), "the handler was dropped");
    }
}
