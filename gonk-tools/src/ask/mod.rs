//! Asking the caller: a tool (or an approval gate) puts a question to
//! whoever is on the other end of the surface — a form for the human
//! (elicitation), a completion from the client's model (sampling), or the
//! client's roots.
//!
//! The question is surface-neutral: a tool calls
//! [`ToolContext::elicit`](crate::ToolContext::elicit),
//! [`sample`](crate::ToolContext::sample) or
//! [`roots`](crate::ToolContext::roots), and the surface that serves the
//! call decides how to ask, through the [`Asker`] it installed with
//! [`ToolContext::with_asker`](crate::ToolContext::with_asker):
//!
//! * MCP `2026-07-28`: the call ends with `input_required` and a sealed
//!   `requestState`; the client retries with the answers, and the tool's
//!   body runs again with them recorded (see [`ReplayAsker`]).
//! * MCP 2025: an `elicitation/create` (`sampling/createMessage`,
//!   `roots/list`) request on the session, waited for within a bound.
//! * The CLI: a prompt on the terminal; the WebSocket projection: a
//!   question frame.
//!
//! A surface without an asker answers every question with
//! `INPUT_UNAVAILABLE`, at once: nothing ever waits for a human that
//! cannot be reached.
//!
//! ## Re-running a body: the replay model
//!
//! Where the surface cannot hold a call open while a human decides (MCP
//! `2026-07-28`), the answer arrives with a *new* request, and the tool's
//! body runs again from the start with the answers recorded so far. Every
//! question is answered from the record in the order it is asked, so a body
//! that asks before it acts — the rule to follow — acts once. Work that must
//! happen before a question and must not repeat goes in
//! [`ToolContext::once`](crate::ToolContext::once): its result is recorded
//! with the answers and replayed instead of run again. Long documentation:
//! `docs/asking.md`.

mod context;
mod elicitation;
mod pending;
mod replay;

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ErrorCode, ToolError};

pub use elicitation::{elicitation_schema, ElicitationSchemaError, Elicited};
pub use pending::{AnswerRefused, AskFailures, PendingQuestions};
pub use replay::ReplayAsker;

/// What kind of answer a question wants: the three requests MCP lets a
/// server put to its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// A form the human fills in (`elicitation/create`).
    Elicitation,
    /// A completion from the client's model (`sampling/createMessage`).
    Sampling,
    /// The client's roots (`roots/list`).
    Roots,
}

impl InputKind {
    /// The MCP method that asks it.
    pub fn method(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation/create",
            InputKind::Sampling => "sampling/createMessage",
            InputKind::Roots => "roots/list",
        }
    }

    /// The MCP client capability that says a client can answer it.
    pub fn capability(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        }
    }

    /// The kind an MCP method asks for.
    pub fn from_method(method: &str) -> Option<InputKind> {
        match method {
            "elicitation/create" => Some(InputKind::Elicitation),
            "sampling/createMessage" => Some(InputKind::Sampling),
            "roots/list" => Some(InputKind::Roots),
            _ => None,
        }
    }

    /// Whether `answer` has the shape of an answer of this kind (an
    /// elicitation result with its `action`, a sampled message with its
    /// `role` and `content`, a roots list). A surface treats an answer of
    /// the wrong shape as no answer and asks again.
    pub fn accepts(self, answer: &Value) -> bool {
        let Some(answer) = answer.as_object() else {
            return false;
        };
        match self {
            InputKind::Elicitation => {
                matches!(
                    answer.get("action").and_then(Value::as_str),
                    Some("accept" | "decline" | "cancel")
                ) && answer.get("content").is_none_or(Value::is_object)
            }
            InputKind::Sampling => answer.contains_key("role") && answer.contains_key("content"),
            InputKind::Roots => answer.get("roots").is_some_and(Value::is_array),
        }
    }
}

impl fmt::Display for InputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.capability())
    }
}

/// One question for the caller, in the wire shape of MCP's input requests:
/// a method and its params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// What kind of answer it wants.
    #[serde(rename = "method", with = "method_name")]
    pub kind: InputKind,
    /// The request's params (`message` and `requestedSchema` of an
    /// elicitation, the messages of a sampling request, nothing for roots).
    #[serde(default)]
    pub params: Value,
}

mod method_name {
    use super::InputKind;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(kind: &InputKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.method())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<InputKind, D::Error> {
        let method = String::deserialize(d)?;
        InputKind::from_method(&method)
            .ok_or_else(|| D::Error::custom(format!("`{method}` is not an input request method")))
    }
}

impl InputRequest {
    /// An elicitation: `message` for the human and the form's schema (a
    /// flat object of strings, numbers, booleans and enums; see
    /// [`elicitation_schema`] to derive one from a type).
    pub fn elicit(message: impl Into<String>, requested_schema: Value) -> Self {
        InputRequest {
            kind: InputKind::Elicitation,
            params: serde_json::json!({
                "message": message.into(),
                "requestedSchema": requested_schema,
            }),
        }
    }

    /// A URL-mode elicitation: `message` for the human and a `url` to open
    /// — a downstream service's sign-in or consent page, say. The human
    /// completes it there, out of band: nothing they enter passes through
    /// the client, and no credential comes back through the answer, which
    /// only says whether they went ahead (`accept`), declined or cancelled.
    /// Asked only of a client that declares URL-mode elicitation; for any
    /// other the question is `INPUT_UNAVAILABLE`.
    ///
    /// ```
    /// use gonk_tools::ask::{InputKind, InputRequest};
    ///
    /// let question = InputRequest::elicit_url(
    ///     "Sign in to your calendar, then come back",
    ///     "https://calendar.example/authorize?client_id=notes",
    /// );
    /// assert_eq!(question.kind, InputKind::Elicitation);
    /// assert!(question.is_url_elicitation());
    /// assert_eq!(question.params["url"], "https://calendar.example/authorize?client_id=notes");
    /// ```
    pub fn elicit_url(message: impl Into<String>, url: impl Into<String>) -> Self {
        InputRequest {
            kind: InputKind::Elicitation,
            params: serde_json::json!({
                "mode": "url",
                "message": message.into(),
                "url": url.into(),
            }),
        }
    }

    /// Whether this is a URL-mode elicitation
    /// ([`elicit_url`](Self::elicit_url)).
    pub fn is_url_elicitation(&self) -> bool {
        self.kind == InputKind::Elicitation
            && self.params.get("mode").and_then(Value::as_str) == Some("url")
    }

    /// A sampling request.
    pub fn sample(request: &SamplingRequest) -> Self {
        InputRequest {
            kind: InputKind::Sampling,
            params: serde_json::to_value(request).unwrap_or(Value::Null),
        }
    }

    /// A request for the client's roots.
    pub fn list_roots() -> Self {
        InputRequest {
            kind: InputKind::Roots,
            params: Value::Object(Map::new()),
        }
    }

    /// The elicitation's message, if this is one.
    pub fn message(&self) -> Option<&str> {
        self.params.get("message").and_then(Value::as_str)
    }
}

/// A request for a completion from the caller's model
/// (`sampling/createMessage`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRequest {
    /// The conversation to complete.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to sample.
    pub max_tokens: u32,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// The server's model preferences (hints, priorities), as MCP shapes
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
}

impl SamplingRequest {
    /// One user message of text, at most `max_tokens` in reply.
    pub fn user_text(text: impl Into<String>, max_tokens: u32) -> Self {
        SamplingRequest {
            messages: vec![SamplingMessage::text("user", text)],
            max_tokens,
            ..SamplingRequest::default()
        }
    }
}

/// One message of a sampling conversation, or the sampled reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The content block (`{"type": "text", "text": …}`, an image, …).
    pub content: Value,
    /// The model that sampled it (a reply only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why sampling stopped (a reply only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl SamplingMessage {
    /// A text message from `role`.
    pub fn text(role: impl Into<String>, text: impl Into<String>) -> Self {
        SamplingMessage {
            role: role.into(),
            content: serde_json::json!({ "type": "text", "text": text.into() }),
            model: None,
            stop_reason: None,
        }
    }

    /// The text of a text message.
    pub fn as_text(&self) -> Option<&str> {
        match self.content.get("type").and_then(Value::as_str) {
            Some("text") => self.content.get("text").and_then(Value::as_str),
            _ => None,
        }
    }
}

/// One of the caller's roots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (`file:///…`).
    pub uri: String,
    /// Its name, when the client gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Why a question got no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The surface or its client cannot answer this kind of question.
    #[error("{message}")]
    Unavailable {
        /// What cannot be asked, and why.
        message: String,
        /// The kinds the client would have to support.
        kinds: Vec<InputKind>,
    },
    /// The answer will come with a later request (MCP `2026-07-28`): the
    /// call ends now and the surface hands the question to its client.
    #[error("waiting for the caller's answer; the surface asks and the call is retried with it")]
    Pending,
    /// Nobody answered within the surface's bound.
    #[error("no answer within {0:?}")]
    TimedOut(std::time::Duration),
    /// The surface failed to ask (the connection broke, the client sent an
    /// error).
    #[error("asking the caller failed: {0}")]
    Failed(String),
}

impl From<AskError> for ToolError {
    fn from(error: AskError) -> ToolError {
        let message = error.to_string();
        match error {
            AskError::Unavailable { kinds, .. } => {
                let required: Map<String, Value> = kinds
                    .iter()
                    .map(|kind| (kind.capability().to_owned(), Value::Object(Map::new())))
                    .collect();
                ToolError::new(ErrorCode::InputUnavailable, message)
                    .with_details(serde_json::json!({ "requiredCapabilities": required }))
            }
            AskError::Pending => ToolError::new(ErrorCode::InputUnavailable, message)
                .with_details(serde_json::json!({ "pending": true })),
            AskError::TimedOut(_) => ToolError::new(ErrorCode::InputUnavailable, message),
            AskError::Failed(_) => ToolError::new(ErrorCode::InputUnavailable, message),
        }
    }
}

/// How a surface asks its caller. A surface installs one per call with
/// [`ToolContext::with_asker`](crate::ToolContext::with_asker).
pub trait Asker: Send + Sync + 'static {
    /// Whether the caller can answer a question of `kind` at all (the
    /// client declared the capability, stdin is a terminal, …). A tool asks
    /// only what can be answered; the others it does without.
    fn can_ask(&self, kind: InputKind) -> bool;

    /// Asks every question of `questions` (key → request) at once, and
    /// returns their answers in the same order: the client's result of each
    /// request (an elicitation result, a sampled message, a roots list).
    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>>;

    /// The result of a [`ToolContext::once`](crate::ToolContext::once) step
    /// recorded by an earlier run of the same call, if this surface replays
    /// (`None` elsewhere: the step runs).
    fn recorded_step(&self, _key: &str) -> Option<Value> {
        None
    }

    /// Records a step's result, for a surface that replays.
    fn record_step(&self, _key: &str, _value: &Value) {}

    /// The answers this asker already holds, by question key (a replay's
    /// record): what a job launched from this call starts with.
    fn answers(&self) -> Map<String, Value> {
        Map::new()
    }
}

/// The asker of one call, shared by the calls it composes: the surface's
/// [`Asker`] and the counter that names questions asked without a key.
pub(crate) struct AskSlot {
    pub(crate) asker: Arc<dyn Asker>,
    asked: AtomicU32,
}

impl AskSlot {
    pub(crate) fn new(asker: Arc<dyn Asker>) -> Self {
        AskSlot {
            asker,
            asked: AtomicU32::new(0),
        }
    }

    /// The next key of an unnamed question: `{prefix}-{n}`, `n` counting
    /// from 1 in the order the call asks, the same on every replay.
    pub(crate) fn next_key(&self, prefix: &str) -> String {
        let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}-{n}")
    }
}

/// `Ok` when `asker` can ask every kind in `questions`; else the
/// [`Unavailable`](AskError::Unavailable) error naming the kinds it cannot.
/// The first step of every [`Asker::ask`]: a call is told at once that its
/// caller cannot answer, before anything is sent.
pub fn answerable(asker: &dyn Asker, questions: &[(String, InputRequest)]) -> Result<(), AskError> {
    let missing: Vec<InputKind> = questions
        .iter()
        .map(|(_, q)| q.kind)
        .filter(|kind| !asker.can_ask(*kind))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(AskError::unavailable(&missing))
    }
}

impl AskError {
    /// The error of questions of `kinds` that the surface, or its client,
    /// cannot ask at all (`INPUT_UNAVAILABLE`, with the capabilities it
    /// lacks in the details).
    pub fn unavailable(kinds: &[InputKind]) -> AskError {
        let names: Vec<&str> = kinds.iter().map(|kind| kind.capability()).collect();
        AskError::Unavailable {
            message: format!(
                "This call needs the caller to answer ({}), and this surface or its client cannot ask",
                names.join(", ")
            ),
            kinds: kinds.to_vec(),
        }
    }
}
