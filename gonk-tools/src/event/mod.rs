//! What a call streams back and what it comes to: [`ToolEvent`] and
//! [`ToolDisplay`] in one JSON wire shape (`{"type": "progress", "percent":
//! 50}`; absent optionals are absent keys, never `null`), the
//! [`ToolEventStream`] every surface consumes, and its outcome
//! ([`ToolOutput`], folded by [`collect_tool_outcome`]).

mod outcome;

use std::pin::Pin;

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::outcome::{collect_tool_outcome, ToolOutput};
use crate::error::{ErrorCode, ToolError};

/// The event stream of one call. Every adapter consumes exactly this.
///
/// It ends with exactly one outcome event, last: a `result` or an
/// `error`. Before it a streaming handler's `log`, `progress` and `data`
/// events pass through in order. See
/// [`ToolRegistry::invoke`](crate::ToolRegistry::invoke) for the rule.
pub type ToolEventStream = Pin<Box<dyn Stream<Item = ToolEvent> + Send + 'static>>;

/// One event of a tool call. `T` is the result's data type: handlers stream
/// `ToolEvent<O>`, the registry streams `ToolEvent<Value>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ToolEvent<T = Value> {
    /// A structured log line.
    Log {
        /// Severity.
        level: LogLevel,
        /// The message.
        message: String,
        /// Structured fields.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// Progress of a long call.
    Progress {
        /// Completion in percent, 0–100.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        percent: Option<f64>,
        /// What is happening now.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A partial output chunk.
    Data {
        /// The chunk.
        chunk: Value,
    },
    /// The final result.
    Result {
        /// The output data.
        data: T,
        /// How a human surface should show it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<ToolDisplay>,
    },
    /// The call failed.
    Error {
        /// Machine-readable code.
        code: ErrorCode,
        /// Human-readable message.
        message: String,
        /// Structured details.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
}

impl<T> ToolEvent<T> {
    /// A `progress` event.
    pub fn progress(percent: impl Into<Option<f64>>, message: impl Into<Option<String>>) -> Self {
        ToolEvent::Progress {
            percent: percent.into(),
            message: message.into(),
        }
    }

    /// A `log` event without meta.
    pub fn log(level: LogLevel, message: impl Into<String>) -> Self {
        ToolEvent::Log {
            level,
            message: message.into(),
            meta: None,
        }
    }

    /// A `data` chunk.
    pub fn data(chunk: Value) -> Self {
        ToolEvent::Data { chunk }
    }

    /// A `result` without display.
    pub fn result(data: T) -> Self {
        ToolEvent::Result {
            data,
            display: None,
        }
    }

    /// The `error` event of a [`ToolError`].
    pub fn error(error: ToolError) -> Self {
        ToolEvent::Error {
            code: error.code,
            message: error.message,
            details: error.details,
        }
    }

    /// The wire `type` of the event.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolEvent::Log { .. } => "log",
            ToolEvent::Progress { .. } => "progress",
            ToolEvent::Data { .. } => "data",
            ToolEvent::Result { .. } => "result",
            ToolEvent::Error { .. } => "error",
        }
    }

    /// What an outcome event amounts to: a `result` event's output or an
    /// `error` event's error; `None` for every other event.
    ///
    /// ```
    /// use gonk_tools::{ErrorCode, ToolError, ToolEvent};
    ///
    /// let result = ToolEvent::result(serde_json::json!(5));
    /// assert_eq!(result.into_outcome().unwrap().unwrap().data, 5);
    /// let error: ToolEvent = ToolEvent::error(ToolError::not_found("x"));
    /// assert_eq!(error.into_outcome().unwrap().unwrap_err().code, ErrorCode::ToolNotFound);
    /// assert!(ToolEvent::<serde_json::Value>::progress(50.0, None).into_outcome().is_none());
    /// ```
    // Inline: it is on every call's path, and out of line it moves the
    // outcome once more.
    #[inline]
    pub fn into_outcome(self) -> Option<Result<ToolOutput<T>, ToolError>> {
        match self {
            ToolEvent::Result { data, display } => Some(Ok(ToolOutput { data, display })),
            ToolEvent::Error {
                code,
                message,
                details,
            } => Some(Err(ToolError {
                code,
                message,
                details,
            })),
            _ => None,
        }
    }

    /// The error of an `error` event.
    pub fn as_error(&self) -> Option<ToolError> {
        match self {
            ToolEvent::Error {
                code,
                message,
                details,
            } => Some(ToolError {
                code: code.clone(),
                message: message.clone(),
                details: details.clone(),
            }),
            _ => None,
        }
    }

    /// Maps the result data, leaving every other event as it is.
    pub fn map_data<U>(self, f: impl FnOnce(T) -> U) -> ToolEvent<U> {
        match self {
            ToolEvent::Result { data, display } => ToolEvent::Result {
                data: f(data),
                display,
            },
            ToolEvent::Log {
                level,
                message,
                meta,
            } => ToolEvent::Log {
                level,
                message,
                meta,
            },
            ToolEvent::Progress { percent, message } => ToolEvent::Progress { percent, message },
            ToolEvent::Data { chunk } => ToolEvent::Data { chunk },
            ToolEvent::Error {
                code,
                message,
                details,
            } => ToolEvent::Error {
                code,
                message,
                details,
            },
        }
    }
}

impl<T> From<ToolError> for ToolEvent<T> {
    fn from(error: ToolError) -> Self {
        ToolEvent::error(error)
    }
}

/// Severity of a log event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Diagnostic detail.
    Debug,
    /// Normal operation.
    Info,
    /// Something looks wrong.
    Warn,
    /// Something failed.
    Error,
}

impl LogLevel {
    /// The wire name (`"info"`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }
}

/// How a result is shown to a human: a plain string or a list of blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolDisplay {
    /// Plain text.
    Text(String),
    /// Typed blocks.
    Blocks(Vec<DisplayBlock>),
}

impl From<String> for ToolDisplay {
    fn from(text: String) -> Self {
        ToolDisplay::Text(text)
    }
}

impl From<&str> for ToolDisplay {
    fn from(text: &str) -> Self {
        ToolDisplay::Text(text.to_owned())
    }
}

impl From<Vec<DisplayBlock>> for ToolDisplay {
    fn from(blocks: Vec<DisplayBlock>) -> Self {
        ToolDisplay::Blocks(blocks)
    }
}

/// One block of a [`ToolDisplay`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum DisplayBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Markdown source.
    Markdown {
        /// The markdown.
        text: String,
    },
    /// A code listing.
    Code {
        /// Language for highlighting (`"rust"`).
        language: String,
        /// The code.
        code: String,
        /// A caption.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caption: Option<String>,
    },
    /// A JSON value.
    Json {
        /// The value.
        value: Value,
        /// A caption.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caption: Option<String>,
    },
    /// An image, base64-encoded.
    Image {
        /// MIME type (`"image/png"`).
        mime_type: String,
        /// Base64 data.
        data: String,
        /// Alternative text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alt: Option<String>,
    },
    /// A link.
    Link {
        /// The URL.
        url: String,
        /// A title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// Audio, base64-encoded.
    Audio {
        /// MIME type (`"audio/wav"`).
        mime_type: String,
        /// Base64 data.
        data: String,
    },
    /// An embedded resource.
    Resource {
        /// The resource URI.
        uri: String,
        /// MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its contents: text or a base64 blob.
        #[serde(flatten)]
        contents: ResourceContents,
    },
}

/// The contents of an embedded resource block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The text.
        text: String,
    },
    /// Binary contents, base64-encoded.
    Blob {
        /// Base64 data.
        blob: String,
    },
}
