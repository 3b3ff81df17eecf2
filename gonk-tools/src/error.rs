//! [`ToolError`] and [`ErrorCode`]: the failure half of every tool call.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The code of a [`ToolError`]: one of the dispatch contract's codes, or a
/// code a tool raises itself.
///
/// Codes serialize as their `SCREAMING_SNAKE` string (`"TOOL_NOT_FOUND"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// No tool of that name is registered, or the caller may not see it.
    ToolNotFound,
    /// The input does not match the tool's input schema.
    InvalidInput,
    /// A `strict` tool produced data that does not match its output schema.
    OutputInvalid,
    /// The call was cancelled before it finished.
    Aborted,
    /// The tool is already on the call stack.
    Cycle,
    /// The authorization policy denied the call.
    AuthorizationDenied,
    /// The tool's required authorization resource could not be resolved.
    AuthResourceUnresolved,
    /// The caller's OAuth token lacks a scope the tool requires; nothing
    /// ran. `details.missingScopes` names them (`docs/contract.md#scopes`).
    InsufficientScope,
    /// A mandatory audit receipt could not be written.
    AuthAuditFailed,
    /// The call needs a human approval that has not been given yet.
    ApprovalRequired,
    /// The approval provider refused the call.
    ApprovalDenied,
    /// The handler failed or panicked.
    Internal,
    /// A stream ended without a result or an error (outcome collection).
    NoResult,
    /// The call ran past its timeout (the tool's, or the registry's
    /// default, or what a composing parent had left): its handler was
    /// dropped.
    Timeout,
    /// The tool needs an answer from the caller's side (a question to a
    /// person, a sampled message, the client's roots, or a client
    /// capability) that the surface or client cannot give. `details` may
    /// name what is missing, e.g. `{"requiredCapabilities": {"sampling": {}}}`.
    InputUnavailable,
    /// No resource has that URI (no fixed resource, no template matches),
    /// or the caller may not see the one that does.
    ResourceNotFound,
    /// No prompt has that name, or the caller may not see it.
    PromptNotFound,
    /// A tool imported from a remote MCP server answered with `isError`;
    /// `details.content` holds what it said.
    RemoteToolError,
    /// A remote tool's `structuredContent` does not match the output
    /// schema the remote advertised.
    RemoteOutputInvalid,
    /// The connection to a remote MCP server failed (it is down, it closed,
    /// it refused the request); `details` are `{name, message}`.
    RemoteTransportError,
    /// A configured remote MCP server could not be reached at all (not at
    /// start, not since): the call names a tool under its prefix, which
    /// it holds until it answers; `details` are `{name, message}` — the
    /// server and its last connection error.
    RemoteUnavailable,
    /// A call of a remote tool was cancelled (by the caller, or because its
    /// source was closed or reconnected while it ran).
    RemoteCancelled,
    /// A call of a remote tool ran past the source's per-call timeout; the
    /// remote was told to cancel it.
    RemoteTimeout,
    /// A remote MCP server answered a call with something that is not a
    /// tool result (no `content`, an unknown result type).
    RemoteProtocolError,
    /// A rate limit refused the call before it ran: the caller (or the
    /// tool, or the whole registry) used its budget. `details.retryAfterMs`
    /// says when a retry may pass (see [`ToolError::rate_limited`]).
    RateLimited,
    /// A code raised by a tool itself.
    Custom(Cow<'static, str>),
}

impl ErrorCode {
    /// The wire form of the code.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::ToolNotFound => "TOOL_NOT_FOUND",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::OutputInvalid => "OUTPUT_INVALID",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::Cycle => "CYCLE",
            ErrorCode::AuthorizationDenied => "AUTHORIZATION_DENIED",
            ErrorCode::AuthResourceUnresolved => "AUTH_RESOURCE_UNRESOLVED",
            ErrorCode::InsufficientScope => "INSUFFICIENT_SCOPE",
            ErrorCode::AuthAuditFailed => "AUTH_AUDIT_FAILED",
            ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
            ErrorCode::ApprovalDenied => "APPROVAL_DENIED",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::NoResult => "NO_RESULT",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::InputUnavailable => "INPUT_UNAVAILABLE",
            ErrorCode::ResourceNotFound => "RESOURCE_NOT_FOUND",
            ErrorCode::PromptNotFound => "PROMPT_NOT_FOUND",
            ErrorCode::RemoteToolError => "REMOTE_TOOL_ERROR",
            ErrorCode::RemoteOutputInvalid => "REMOTE_OUTPUT_INVALID",
            ErrorCode::RemoteTransportError => "REMOTE_TRANSPORT_ERROR",
            ErrorCode::RemoteUnavailable => "REMOTE_UNAVAILABLE",
            ErrorCode::RemoteCancelled => "REMOTE_CANCELLED",
            ErrorCode::RemoteTimeout => "REMOTE_TIMEOUT",
            ErrorCode::RemoteProtocolError => "REMOTE_PROTOCOL_ERROR",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::Custom(code) => code,
        }
    }

    /// Parses a wire code; unknown codes become [`ErrorCode::Custom`].
    pub fn parse(code: &str) -> ErrorCode {
        match code {
            "TOOL_NOT_FOUND" => ErrorCode::ToolNotFound,
            "INVALID_INPUT" => ErrorCode::InvalidInput,
            "OUTPUT_INVALID" => ErrorCode::OutputInvalid,
            "ABORTED" => ErrorCode::Aborted,
            "CYCLE" => ErrorCode::Cycle,
            "AUTHORIZATION_DENIED" => ErrorCode::AuthorizationDenied,
            "AUTH_RESOURCE_UNRESOLVED" => ErrorCode::AuthResourceUnresolved,
            "INSUFFICIENT_SCOPE" => ErrorCode::InsufficientScope,
            "AUTH_AUDIT_FAILED" => ErrorCode::AuthAuditFailed,
            "APPROVAL_REQUIRED" => ErrorCode::ApprovalRequired,
            "APPROVAL_DENIED" => ErrorCode::ApprovalDenied,
            "INTERNAL" => ErrorCode::Internal,
            "NO_RESULT" => ErrorCode::NoResult,
            "TIMEOUT" => ErrorCode::Timeout,
            "INPUT_UNAVAILABLE" => ErrorCode::InputUnavailable,
            "RESOURCE_NOT_FOUND" => ErrorCode::ResourceNotFound,
            "PROMPT_NOT_FOUND" => ErrorCode::PromptNotFound,
            "REMOTE_TOOL_ERROR" => ErrorCode::RemoteToolError,
            "REMOTE_OUTPUT_INVALID" => ErrorCode::RemoteOutputInvalid,
            "REMOTE_TRANSPORT_ERROR" => ErrorCode::RemoteTransportError,
            "REMOTE_UNAVAILABLE" => ErrorCode::RemoteUnavailable,
            "REMOTE_CANCELLED" => ErrorCode::RemoteCancelled,
            "REMOTE_TIMEOUT" => ErrorCode::RemoteTimeout,
            "REMOTE_PROTOCOL_ERROR" => ErrorCode::RemoteProtocolError,
            "RATE_LIMITED" => ErrorCode::RateLimited,
            other => ErrorCode::Custom(Cow::Owned(other.to_owned())),
        }
    }

    /// A tool's own code, e.g. `ErrorCode::custom("NOTE_LOCKED")`.
    pub fn custom(code: impl Into<Cow<'static, str>>) -> ErrorCode {
        match ErrorCode::parse(&code.into()) {
            ErrorCode::Custom(c) => ErrorCode::Custom(c),
            known => known,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = Cow::<'de, str>::deserialize(deserializer)?;
        Ok(ErrorCode::parse(&code))
    }
}

/// One schema violation: where it is (a JSON pointer into the input) and
/// what is wrong.
///
/// An issue never echoes a whole bad value: a value it quotes is cut to
/// its first 80 characters plus its size ([`quote`]), and a path or
/// message longer than [`MAX_ISSUE_TEXT`] characters is cut too, so a 4 MB
/// field gets a small answer on every surface.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationIssue {
    /// JSON pointer to the offending value (`""` for the root).
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

/// The most characters an issue's path or message keeps.
pub const MAX_ISSUE_TEXT: usize = 500;

/// How many characters of a long value an issue quotes.
const QUOTED_HEAD: usize = 80;

impl ValidationIssue {
    /// An issue at `path`; a path or message over [`MAX_ISSUE_TEXT`]
    /// characters is cut, with its length noted.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ValidationIssue {
            path: cut(path.into(), MAX_ISSUE_TEXT),
            message: cut(message.into(), MAX_ISSUE_TEXT),
        }
    }
}

/// `text`, or its first `limit` characters and how long it was.
fn cut(text: String, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text,
        Some((end, _)) => format!("{}… ({} characters)", &text[..end], text.chars().count()),
    }
}

/// How an error message quotes a value: whole (as JSON) when short;
/// otherwise its first 80 characters and its size — `"tttt…" (3900000
/// characters)`, `[1,2,3,…] (1000 items)`.
///
/// ```
/// use gonk_tools::error::quote;
/// use serde_json::json;
///
/// assert_eq!(quote(&json!("short")), r#""short""#);
/// let long = quote(&json!("t".repeat(1000)));
/// assert_eq!(long, format!(r#""{}…" (1000 characters)"#, "t".repeat(80)));
/// ```
pub fn quote(value: &Value) -> String {
    match value {
        Value::String(text) => match text.char_indices().nth(QUOTED_HEAD) {
            None => Value::String(text.clone()).to_string(),
            Some((end, _)) => {
                let head = Value::String(text[..end].to_owned()).to_string();
                // The head's JSON without its closing quote, then the ellipsis.
                format!(
                    "{}…\" ({} characters)",
                    &head[..head.len() - 1],
                    text.chars().count()
                )
            }
        },
        Value::Array(items) => quote_container(value, items.len(), "items"),
        Value::Object(map) => quote_container(value, map.len(), "properties"),
        scalar => scalar.to_string(),
    }
}

/// An array or object: its JSON when short, else the start of it (written
/// no further than needed) and how many entries it has.
fn quote_container(value: &Value, len: usize, entries: &str) -> String {
    /// Keeps the first `QUOTED_HEAD` bytes, then refuses more.
    struct Head(Vec<u8>);
    impl std::io::Write for Head {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let room = QUOTED_HEAD - self.0.len();
            if bytes.len() > room {
                self.0.extend_from_slice(&bytes[..room]);
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.0.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut head = Head(Vec::with_capacity(QUOTED_HEAD));
    let whole = serde_json::to_writer(&mut head, value).is_ok();
    let text = match std::str::from_utf8(&head.0) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&head.0[..e.valid_up_to()]).unwrap_or_default(),
    };
    if whole {
        text.to_owned()
    } else {
        format!("{text}… ({len} {entries})")
    }
}

/// The error of a tool call: a code, a message for humans, and optional
/// structured details.
///
/// Handlers return it (or any `E: Into<ToolError>`); the dispatch path turns
/// it into an `error` event. `std::io::Error`, `serde_json::Error`,
/// `Box<dyn Error + Send + Sync>` and (feature `anyhow`) `anyhow::Error`
/// convert to `INTERNAL` with the error chain as the message
/// (`outer: cause: root cause`), so `?` works in handlers; a `ToolError`
/// boxed or wrapped in one of them keeps its own code. For a code of your
/// own, implement `From<YourError> for ToolError`.
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[error("{code}: {message}")]
pub struct ToolError {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Human-readable message.
    pub message: String,
    /// Structured details (e.g. the validation issues of `INVALID_INPUT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// Adds structured details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// `INTERNAL` with a message.
    pub fn internal(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::Internal, message)
    }

    /// `INVALID_INPUT` ("Input validation failed") whose details are the
    /// issues, as `[{path, message}, …]`.
    pub fn invalid_input(issues: Vec<ValidationIssue>) -> Self {
        let details = serde_json::to_value(&issues).unwrap_or(Value::Null);
        ToolError::new(ErrorCode::InvalidInput, "Input validation failed").with_details(details)
    }

    /// `TOOL_NOT_FOUND` ("No such tool: NAME").
    pub fn not_found(name: &str) -> Self {
        ToolError::new(ErrorCode::ToolNotFound, format!("No such tool: {name}"))
    }

    /// `ABORTED` ("Tool execution aborted").
    pub fn aborted() -> Self {
        ToolError::new(ErrorCode::Aborted, "Tool execution aborted")
    }

    /// `TIMEOUT`: `tool` ran past `limit` and was stopped. The details
    /// carry `timeoutMs`, the limit that applied.
    pub fn timeout(tool: &str, limit: std::time::Duration) -> Self {
        ToolError::new(
            ErrorCode::Timeout,
            format!(
                "Tool {tool} timed out after {} and was stopped",
                humantime::format_duration(limit)
            ),
        )
        .with_details(serde_json::json!({ "timeoutMs": limit.as_millis() as u64 }))
    }

    /// `RATE_LIMITED`: a budget refused the call; a retry after
    /// `retry_after` may pass. The details carry `retryAfterMs` (rounded
    /// up, at least 1) and whatever `details` adds (an object's keys are
    /// merged in: the rate limiter names its budget there).
    ///
    /// ```
    /// use std::time::Duration;
    /// use gonk_tools::{ErrorCode, ToolError};
    ///
    /// let error = ToolError::rate_limited("Rate limit reached; retry in 2s", Duration::from_millis(1500), None);
    /// assert_eq!(error.code, ErrorCode::RateLimited);
    /// assert_eq!(error.retry_after(), Some(Duration::from_millis(1500)));
    /// ```
    pub fn rate_limited(
        message: impl Into<String>,
        retry_after: std::time::Duration,
        details: Option<Value>,
    ) -> Self {
        let millis = retry_after.as_nanos().div_ceil(1_000_000).max(1);
        let millis = u64::try_from(millis).unwrap_or(u64::MAX);
        let mut body = serde_json::Map::new();
        body.insert("retryAfterMs".into(), Value::from(millis));
        if let Some(Value::Object(extra)) = details {
            for (key, value) in extra {
                body.entry(key).or_insert(value);
            }
        }
        ToolError::new(ErrorCode::RateLimited, message).with_details(Value::Object(body))
    }

    /// How long to wait before retrying: `details.retryAfterMs` of a
    /// `RATE_LIMITED` error (`None` for other errors). Surfaces use it for
    /// HTTP's `Retry-After`.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        if self.code != ErrorCode::RateLimited {
            return None;
        }
        let millis = self.details.as_ref()?.get("retryAfterMs")?.as_u64()?;
        Some(std::time::Duration::from_millis(millis))
    }

    /// The validation issues of an `INVALID_INPUT` / `OUTPUT_INVALID` error.
    pub fn issues(&self) -> Vec<ValidationIssue> {
        self.details
            .as_ref()
            .and_then(|d| serde_json::from_value(d.clone()).ok())
            .unwrap_or_default()
    }
}

impl From<std::io::Error> for ToolError {
    fn from(error: std::io::Error) -> Self {
        ToolError::internal(error.to_string())
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(error: serde_json::Error) -> Self {
        ToolError::internal(error.to_string())
    }
}

/// `error`, then each of its sources, joined by `": "` (anyhow's `{:#}`).
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

impl From<Box<dyn std::error::Error + Send + Sync>> for ToolError {
    fn from(error: Box<dyn std::error::Error + Send + Sync>) -> Self {
        match error.downcast::<ToolError>() {
            Ok(tool_error) => *tool_error,
            Err(error) => ToolError::internal(chain(&*error)),
        }
    }
}

#[cfg(feature = "anyhow")]
impl From<anyhow::Error> for ToolError {
    fn from(error: anyhow::Error) -> Self {
        match error.downcast::<ToolError>() {
            Ok(tool_error) => tool_error,
            Err(error) => ToolError::internal(format!("{error:#}")),
        }
    }
}

impl From<std::convert::Infallible> for ToolError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot load the index")]
    struct Load(#[source] std::io::Error);

    #[test]
    fn boxed_errors_are_internal_with_their_chain() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "index.db is missing");
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(Load(io));
        let error = ToolError::from(boxed);
        assert_eq!(error.code, ErrorCode::Internal);
        assert_eq!(error.message, "cannot load the index: index.db is missing");

        let own = ToolError::new(ErrorCode::custom("NOT_FOUND"), "no note 7");
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(own.clone());
        assert_eq!(
            ToolError::from(boxed),
            own,
            "a boxed ToolError keeps its code"
        );
    }

    #[cfg(feature = "anyhow")]
    #[test]
    fn anyhow_errors_are_internal_with_their_chain() {
        use anyhow::Context;
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "index.db is missing");
        let error: anyhow::Error = Err::<(), _>(io)
            .context("cannot load the index")
            .unwrap_err();
        let error = ToolError::from(error);
        assert_eq!(error.code, ErrorCode::Internal);
        assert_eq!(error.message, "cannot load the index: index.db is missing");

        let own = ToolError::new(ErrorCode::custom("NOT_FOUND"), "no note 7");
        assert_eq!(ToolError::from(anyhow::Error::new(own.clone())), own);
    }
}
