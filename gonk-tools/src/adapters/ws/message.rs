//! The wire messages of the WebSocket projection, as JSON text frames.
//!
//! Client → server: a request `{"reqId"?, "op", "input"?, "stream"?,
//! "canAnswer"?}`, a cancellation `{"type": "cancel", "reqId"}`, or the
//! answer to a question `{"type": "answer", "id", "answer"}`. Server →
//! client: a reply (`result` or `error`), an `event` of a streaming
//! request, a `question` of a request that said it can answer, or a
//! `broadcast`. Absent optionals are absent keys, never `null`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ask::{InputKind, InputRequest};
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;

/// The code of an error reply to a frame that is not a request at all
/// (invalid JSON, wrong field types, a binary frame).
pub const INVALID_REQUEST: &str = "INVALID_REQUEST";

/// How much of a rejected frame's parse error is echoed back.
const MAX_ECHO: usize = 200;

/// One call: run `op` with `input` and reply once.
#[derive(Clone, Debug, PartialEq)]
pub struct WsRequest {
    /// Echoed in the reply (and in the call's events) when present: a
    /// string or a number. A request without it gets a reply without it.
    pub req_id: Option<Value>,
    /// The tool to run.
    pub op: String,
    /// The tool's input (`{}` when absent).
    pub input: Value,
    /// Whether the caller wants the call's progress, log and data events
    /// (as `event` messages) before the reply.
    pub stream: bool,
    /// The kinds of question the caller can answer during the call
    /// (`"canAnswer": ["elicitation"]`): the call may send
    /// [`WsQuestion`]s of these kinds and wait for their answers. Empty:
    /// nothing is asked, a question is `INPUT_UNAVAILABLE` at once.
    pub can_answer: Vec<InputKind>,
}

impl WsRequest {
    /// A request for `op` with `input`, without a `reqId`.
    pub fn new(op: impl Into<String>, input: Value) -> Self {
        WsRequest {
            req_id: None,
            op: op.into(),
            input,
            stream: false,
            can_answer: Vec::new(),
        }
    }

    /// Says the caller can answer questions of `kinds` during the call.
    pub fn answering(mut self, kinds: impl IntoIterator<Item = InputKind>) -> Self {
        self.can_answer = kinds.into_iter().collect();
        self
    }

    /// Sets the `reqId`.
    pub fn with_req_id(mut self, req_id: impl Into<Value>) -> Self {
        self.req_id = Some(req_id.into());
        self
    }

    /// Asks for the call's events before the reply.
    pub fn streaming(mut self) -> Self {
        self.stream = true;
        self
    }

    /// The request as a JSON object (what a client sends).
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        if let Some(id) = &self.req_id {
            object.insert("reqId".into(), id.clone());
        }
        object.insert("op".into(), Value::String(self.op.clone()));
        object.insert("input".into(), self.input.clone());
        if self.stream {
            object.insert("stream".into(), Value::Bool(true));
        }
        if !self.can_answer.is_empty() {
            object.insert(
                "canAnswer".into(),
                serde_json::to_value(&self.can_answer).unwrap_or_default(),
            );
        }
        Value::Object(object)
    }
}

/// What a client sent: a call, or the cancellation of one in flight.
#[derive(Clone, Debug, PartialEq)]
pub enum WsInbound {
    /// A call.
    Request(WsRequest),
    /// `{"type": "cancel", "reqId": …}`: cancel the call with that id (its
    /// handler is dropped and it replies `ABORTED`).
    Cancel {
        /// The call's id.
        req_id: Value,
    },
    /// `{"type": "answer", "id": …, "answer": {…}}`: the answer to the
    /// [`WsQuestion`] with that id (for an elicitation, `{"action":
    /// "accept", "content": {…}}`, `{"action": "decline"}` or `{"action":
    /// "cancel"}`).
    Answer {
        /// The question's id.
        id: String,
        /// The answer, in the shape of the MCP result of the question's
        /// method.
        answer: Value,
    },
}

impl WsInbound {
    /// Parses a text frame. A frame that is not a valid message gets the
    /// error reply to send back (carrying the `reqId` when one could be
    /// read).
    pub fn parse(text: &str) -> Result<WsInbound, WsReply> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            WsReply::invalid_request(None, format!("Invalid JSON: {}", capped(&e.to_string())))
        })?;
        let Value::Object(mut object) = value else {
            return Err(WsReply::invalid_request(
                None,
                "A request is a JSON object: {\"reqId\"?, \"op\", \"input\"?}",
            ));
        };
        let req_id = match object.remove("reqId") {
            None => None,
            Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
            Some(_) => {
                return Err(WsReply::invalid_request(
                    None,
                    "reqId must be a string or a number",
                ))
            }
        };
        match object.remove("type") {
            None => {}
            Some(Value::String(kind)) if kind == "answer" => {
                let id = match object.remove("id") {
                    Some(Value::String(id)) => id,
                    _ => {
                        return Err(WsReply::invalid_request(
                            req_id,
                            "An answer needs the id of the question it answers (a string)",
                        ))
                    }
                };
                return match object.remove("answer") {
                    Some(answer @ Value::Object(_)) => Ok(WsInbound::Answer { id, answer }),
                    _ => Err(WsReply::invalid_request(
                        req_id,
                        "An answer needs an answer object, e.g. {\"action\": \"accept\", \"content\": {…}}",
                    )),
                };
            }
            Some(Value::String(kind)) if kind == "cancel" => {
                return match req_id {
                    Some(req_id) => Ok(WsInbound::Cancel { req_id }),
                    None => Err(WsReply::invalid_request(
                        None,
                        "A cancel message needs the reqId of the call to cancel",
                    )),
                };
            }
            Some(other) => {
                return Err(WsReply::invalid_request(
                    req_id,
                    format!(
                        "Unknown message type {}; send a request {{\"reqId\"?, \"op\", \"input\"?}}, {{\"type\": \"cancel\", \"reqId\"}} or {{\"type\": \"answer\", \"id\", \"answer\"}}",
                        capped(&other.to_string())
                    ),
                ))
            }
        }
        let op = match object.remove("op") {
            Some(Value::String(op)) => op,
            Some(_) => {
                return Err(WsReply::invalid_request(
                    req_id,
                    "op must be a string: the name of the tool to run",
                ))
            }
            None => {
                return Err(WsReply::invalid_request(
                    req_id,
                    "A request needs an op: the name of the tool to run",
                ))
            }
        };
        let stream = match object.remove("stream") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => {
                return Err(WsReply::invalid_request(
                    req_id,
                    "stream must be true or false",
                ))
            }
        };
        let can_answer = match object.remove("canAnswer") {
            None => Vec::new(),
            Some(kinds) => match serde_json::from_value::<Vec<InputKind>>(kinds) {
                Ok(kinds) => kinds,
                Err(_) => {
                    return Err(WsReply::invalid_request(
                        req_id,
                        "canAnswer must be a list of the questions the caller can answer: \"elicitation\", \"sampling\", \"roots\"",
                    ))
                }
            },
        };
        let input = object
            .remove("input")
            .unwrap_or_else(|| Value::Object(Map::new()));
        Ok(WsInbound::Request(WsRequest {
            req_id,
            op,
            input,
            stream,
            can_answer,
        }))
    }
}

/// Caps an echoed text (a parse error may quote the hostile input).
fn capped(text: &str) -> String {
    if text.len() <= MAX_ECHO {
        return text.to_owned();
    }
    let mut end = MAX_ECHO;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

/// The one reply to a request: `{"type": "result", "reqId"?, "result"}`
/// or `{"type": "error", "reqId"?, "message", "code", "details"?}`.
///
/// The TypeScript original's error reply carries `message`; `code` (and
/// `details`, e.g. the validation issues) are added so a typed client can
/// tell failures apart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum WsReply {
    /// The call succeeded; `result` is the last result's data.
    Result {
        /// The request's `reqId`.
        #[serde(rename = "reqId", default, skip_serializing_if = "Option::is_none")]
        req_id: Option<Value>,
        /// The output data.
        result: Value,
    },
    /// The request failed.
    Error {
        /// The request's `reqId`.
        #[serde(rename = "reqId", default, skip_serializing_if = "Option::is_none")]
        req_id: Option<Value>,
        /// What went wrong, for humans.
        message: String,
        /// The error code (`TOOL_NOT_FOUND`, `INVALID_INPUT`, a tool's own, …).
        code: ErrorCode,
        /// Structured details (the validation issues of `INVALID_INPUT`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
}

impl WsReply {
    /// A success reply.
    pub fn result(req_id: Option<Value>, result: Value) -> Self {
        WsReply::Result { req_id, result }
    }

    /// The error reply of `error`.
    pub fn error(req_id: Option<Value>, error: ToolError) -> Self {
        WsReply::Error {
            req_id,
            message: error.message,
            code: error.code,
            details: error.details,
        }
    }

    /// An [`INVALID_REQUEST`] error reply.
    pub fn invalid_request(req_id: Option<Value>, message: impl Into<String>) -> Self {
        WsReply::error(
            req_id,
            ToolError::new(ErrorCode::custom(INVALID_REQUEST), message),
        )
    }

    /// The `reqId` it answers.
    pub fn req_id(&self) -> Option<&Value> {
        match self {
            WsReply::Result { req_id, .. } | WsReply::Error { req_id, .. } => req_id.as_ref(),
        }
    }

    /// Whether the call succeeded.
    pub fn is_result(&self) -> bool {
        matches!(self, WsReply::Result { .. })
    }

    /// The data of a success, the error of a failure.
    pub fn into_result(self) -> Result<Value, ToolError> {
        match self {
            WsReply::Result { result, .. } => Ok(result),
            WsReply::Error {
                message,
                code,
                details,
                ..
            } => Err(ToolError {
                code,
                message,
                details,
            }),
        }
    }

    /// The reply as JSON text.
    pub fn to_text(&self) -> String {
        to_text(self)
    }
}

/// A progress, log or data event of a streaming request:
/// `{"type": "event", "reqId"?, "event": {…}}`, sent before its reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "event")]
pub struct WsEvent {
    /// The request's `reqId`.
    #[serde(rename = "reqId", default, skip_serializing_if = "Option::is_none")]
    pub req_id: Option<Value>,
    /// The event, in the dispatch wire shape.
    pub event: ToolEvent,
}

impl WsEvent {
    /// The event as JSON text.
    pub fn to_text(&self) -> String {
        to_text(self)
    }
}

/// A question from a call to its caller, sent only for a request that
/// said it can answer its kind (`canAnswer`):
/// `{"type": "question", "reqId"?, "id", "key", "request": {"method",
/// "params"}}`. The caller answers with `{"type": "answer", "id",
/// "answer"}` on the same socket; the call waits for it (bounded), and
/// its reply ends the question either way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "question")]
pub struct WsQuestion {
    /// The `reqId` of the call that asks.
    #[serde(rename = "reqId", default, skip_serializing_if = "Option::is_none")]
    pub req_id: Option<Value>,
    /// The question's id on this socket: the answer names it.
    pub id: String,
    /// The call's key for the question (`approval-1`, `elicitation-1`).
    pub key: String,
    /// The question, as an MCP request: `elicitation/create` with its
    /// `message` and `requestedSchema`, `sampling/createMessage`,
    /// `roots/list`.
    pub request: InputRequest,
}

impl WsQuestion {
    /// The question as JSON text.
    pub fn to_text(&self) -> String {
        to_text(self)
    }
}

/// A succeeded op fanned out to every connection:
/// `{"type": "broadcast", "op", "payload"}` (the payload is the result's
/// data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "broadcast")]
pub struct WsBroadcast {
    /// The op that succeeded.
    pub op: String,
    /// Its result's data.
    pub payload: Value,
}

impl WsBroadcast {
    /// The broadcast as JSON text.
    pub fn to_text(&self) -> String {
        to_text(self)
    }
}

/// Anything the server sends, as a client reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum WsOutbound {
    /// The reply to a request.
    Reply(WsReply),
    /// An event of a streaming request.
    Event(WsEvent),
    /// A broadcast.
    Broadcast(WsBroadcast),
    /// A question of a call that said it can answer.
    Question(WsQuestion),
}

impl WsOutbound {
    /// Parses a server message.
    pub fn parse(text: &str) -> Result<WsOutbound, serde_json::Error> {
        #[derive(Deserialize)]
        struct Kind<'a> {
            #[serde(rename = "type", borrow)]
            kind: std::borrow::Cow<'a, str>,
        }
        let kind: Kind<'_> = serde_json::from_str(text)?;
        Ok(match &*kind.kind {
            "event" => WsOutbound::Event(serde_json::from_str(text)?),
            "broadcast" => WsOutbound::Broadcast(serde_json::from_str(text)?),
            "question" => WsOutbound::Question(serde_json::from_str(text)?),
            _ => WsOutbound::Reply(serde_json::from_str(text)?),
        })
    }
}

fn to_text(message: &impl Serialize) -> String {
    // Values, strings and error codes always serialize.
    serde_json::to_string(message).unwrap_or_else(|_| {
        String::from(
            "{\"type\":\"error\",\"message\":\"unserializable message\",\"code\":\"INTERNAL\"}",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_err(text: &str) -> Value {
        serde_json::to_value(WsInbound::parse(text).unwrap_err()).unwrap()
    }

    #[test]
    fn a_full_request_parses_and_defaults_the_input() {
        let parsed = WsInbound::parse(r#"{"reqId": 7, "op": "notes.get", "input": {"id": 1}}"#);
        assert_eq!(
            parsed,
            Ok(WsInbound::Request(
                WsRequest::new("notes.get", json!({"id": 1})).with_req_id(7)
            ))
        );
        let parsed = WsInbound::parse(r#"{"op": "notes.list", "stream": true}"#);
        assert_eq!(
            parsed,
            Ok(WsInbound::Request(
                WsRequest::new("notes.list", json!({})).streaming()
            ))
        );
    }

    #[test]
    fn requests_round_trip_through_their_json() {
        let request = WsRequest::new("a.b", json!([1]))
            .with_req_id("x")
            .streaming();
        let text = request.to_json().to_string();
        assert_eq!(WsInbound::parse(&text), Ok(WsInbound::Request(request)));
    }

    #[test]
    fn malformed_frames_get_invalid_request_replies() {
        let reply = parse_err("{not json");
        assert_eq!(reply["type"], "error");
        assert_eq!(reply["code"], INVALID_REQUEST);
        assert!(reply["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid JSON"));
        assert!(reply.get("reqId").is_none());

        assert_eq!(parse_err("[1,2]")["code"], INVALID_REQUEST);
        assert_eq!(
            parse_err(r#"{"reqId": {"x": 1}, "op": "a"}"#)["message"],
            "reqId must be a string or a number"
        );
        // The reqId is echoed when it could be read.
        let reply = parse_err(r#"{"reqId": "r1", "op": 5}"#);
        assert_eq!(reply["reqId"], "r1");
        assert_eq!(
            reply["message"],
            "op must be a string: the name of the tool to run"
        );
        assert_eq!(parse_err(r#"{"reqId": "r2"}"#)["reqId"], "r2");
        assert_eq!(
            parse_err(r#"{"op": "a", "stream": "yes"}"#)["message"],
            "stream must be true or false"
        );
        assert_eq!(parse_err(r#"{"type": "cancel"}"#)["code"], INVALID_REQUEST);
        assert_eq!(
            parse_err(r#"{"type": "nope", "reqId": 1}"#)["reqId"],
            json!(1)
        );
    }

    #[test]
    fn a_hostile_parse_error_is_not_echoed_in_full() {
        let huge = format!("{{\"op\": \"a\", \"x\": {}}}", "1".repeat(100_000) + "q");
        let reply = parse_err(&huge);
        assert!(reply["message"].as_str().unwrap().len() < 400);
        let reply = parse_err(&format!("{{\"type\": \"{}\"}}", "é".repeat(500)));
        assert!(reply["message"].as_str().unwrap().len() < 500);
    }

    #[test]
    fn answers_and_can_answer_parse() {
        assert_eq!(
            WsInbound::parse(r#"{"type": "answer", "id": "q1", "answer": {"action": "decline"}}"#),
            Ok(WsInbound::Answer {
                id: "q1".into(),
                answer: json!({"action": "decline"})
            })
        );
        assert_eq!(
            parse_err(r#"{"type": "answer", "answer": {}}"#)["code"],
            INVALID_REQUEST
        );
        assert_eq!(
            parse_err(r#"{"type": "answer", "id": "q1", "answer": 3}"#)["code"],
            INVALID_REQUEST
        );
        let request = WsRequest::new("a", json!({}))
            .with_req_id(1)
            .answering([InputKind::Elicitation]);
        let text = request.to_json().to_string();
        assert!(text.contains(r#""canAnswer":["elicitation"]"#), "{text}");
        assert_eq!(WsInbound::parse(&text), Ok(WsInbound::Request(request)));
        assert!(
            parse_err(r#"{"op": "a", "canAnswer": ["telepathy"]}"#)["message"]
                .as_str()
                .unwrap()
                .starts_with("canAnswer must be a list")
        );
    }

    #[test]
    fn cancel_messages_parse() {
        assert_eq!(
            WsInbound::parse(r#"{"type": "cancel", "reqId": "r9"}"#),
            Ok(WsInbound::Cancel {
                req_id: json!("r9")
            })
        );
    }

    #[test]
    fn replies_have_the_seed_wire_shape() {
        let ok = WsReply::result(Some(json!(1)), json!({"id": 3}));
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            json!({"type": "result", "reqId": 1, "result": {"id": 3}})
        );
        let error = WsReply::error(None, ToolError::not_found("x"));
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"type": "error", "message": "No such tool: x", "code": "TOOL_NOT_FOUND"})
        );
        let broadcast = WsBroadcast {
            op: "notes.create".into(),
            payload: json!({"id": 1}),
        };
        assert_eq!(
            serde_json::to_value(&broadcast).unwrap(),
            json!({"type": "broadcast", "op": "notes.create", "payload": {"id": 1}})
        );
        let event = WsEvent {
            req_id: Some(json!("a")),
            event: ToolEvent::progress(50.0, None),
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "event", "reqId": "a", "event": {"type": "progress", "percent": 50.0}})
        );
    }

    #[test]
    fn outbound_messages_parse_back() {
        for message in [
            WsOutbound::Reply(WsReply::result(Some(json!("a")), json!(1))),
            WsOutbound::Reply(WsReply::invalid_request(None, "bad")),
            WsOutbound::Event(WsEvent {
                req_id: None,
                event: ToolEvent::data(json!([1])),
            }),
            WsOutbound::Broadcast(WsBroadcast {
                op: "x".into(),
                payload: json!(null),
            }),
            WsOutbound::Question(WsQuestion {
                req_id: Some(json!(4)),
                id: "q1".into(),
                key: "approval-1".into(),
                request: InputRequest::elicit("Go?", json!({"type": "object"})),
            }),
        ] {
            let text = match &message {
                WsOutbound::Reply(m) => m.to_text(),
                WsOutbound::Event(m) => m.to_text(),
                WsOutbound::Broadcast(m) => m.to_text(),
                WsOutbound::Question(m) => m.to_text(),
            };
            assert_eq!(WsOutbound::parse(&text).unwrap(), message);
        }
    }
}
