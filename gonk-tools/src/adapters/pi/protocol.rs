//! The bridge protocol: JSON lines between the Pi extension (stdin of the
//! Rust process) and [`serve_pi`](super::serve_pi) (its stdout). One JSON
//! object per line, UTF-8, `\n`-terminated.
//!
//! | direction | line | answer |
//! |---|---|---|
//! | → | `{"type":"discover","id":ID?}` | `{"type":"tools","id":ID?,"protocol":1,"tools":[spec…],"skipped":[{name,reason}…],"warnings":[…],"skillsDir"?:PATH}` |
//! | → | `{"type":"execute","id":"c1","tool":PI_NAME,"input":{…}}` | any number of `{"type":"update","id":"c1","update":{content,details}}`, then exactly one `{"type":"result","id":"c1","result":{content,details?,isError?}}` |
//! | → | `{"type":"abort","id":"c1"}` | none of its own: the call's `result` follows, `[ABORTED]` unless it had already finished |
//! | ← | `{"type":"question","id":"q1","callId":"c1","key":"approval-1","request":{"method":"elicitation/create","params":{message,requestedSchema}}}` | sent only while call `c1` runs and only when its `execute` said `"canAnswer":["elicitation"]`; the extension answers `{"type":"answer","id":"q1","answer":{"action":"accept"\|"decline"\|"cancel","content"?:{…}}}` |
//! | ← | `{"type":"log","id":"c1","tool":"notes.export","level":"info","message":…,"meta"?:…}` | a log line of a running call (never part of its result); the extension emits it on Pi's event bus as `gonk-tools:log` |
//! | ← | `{"type":"error","id":ID?,"error":{"code":…,"message":…}}` | the answer to a line the bridge could not use (malformed JSON, an unknown `type`, a missing field, a line over the size limit, a call id already running); the bridge keeps serving |
//!
//! An `answer` to no waiting question (answered, expired, its call ended)
//! or of the wrong shape gets an `INVALID_REQUEST` error line with the
//! question's id; a wrong shape leaves the question waiting. A question
//! nobody answers within [`PiOptions::ask_timeout`](super::PiOptions::ask_timeout)
//! fails, and so does every waiting question when the input ends.
//!
//! Calls run concurrently; their lines interleave and are matched by `id`.
//! A tool Pi does not know (missing, filtered, duplex) answers with a
//! `[TOOL_NOT_FOUND]` result, exactly like a missing one. End of input
//! aborts every running call, then the bridge exits.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::execution::{PiToolResult, PiUpdate};
use super::projection::{PiSkipped, PiToolSpec};
use crate::ask::InputRequest;
use crate::event::LogLevel;

/// The protocol version `discover` reports.
pub const PROTOCOL_VERSION: u32 = 1;

/// A line the extension sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum PiRequest {
    /// Lists the tools Pi should register.
    Discover {
        /// Echoed in the answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
    },
    /// Runs a tool.
    Execute {
        /// The call id: unique among running calls.
        id: String,
        /// The tool's Pi name.
        tool: String,
        /// Its arguments.
        #[serde(default = "empty_object")]
        input: Value,
        /// The questions the extension can put to the user during this
        /// call (`["elicitation"]` when Pi has a UI). Empty, missing or
        /// unknown kinds: nothing is asked.
        #[serde(rename = "canAnswer", default, skip_serializing_if = "Vec::is_empty")]
        can_answer: Vec<String>,
    },
    /// Aborts a running call.
    Abort {
        /// The call id.
        id: String,
    },
    /// Answers a [`PiReply::Question`].
    Answer {
        /// The question's id.
        id: String,
        /// The answer, in the shape of the MCP result of the question's
        /// method (an elicitation: `{"action": "accept", "content": {…}}`,
        /// `{"action": "decline"}`, `{"action": "cancel"}`).
        answer: Value,
    },
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Why the bridge could not use a line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiBridgeError {
    /// `INVALID_REQUEST`, `REQUEST_TOO_LARGE`, `DUPLICATE_CALL` or
    /// `CATALOG_INVALID`.
    pub code: String,
    /// What went wrong and what to send instead.
    pub message: String,
}

/// A line the bridge sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum PiReply {
    /// The answer to `discover`.
    Tools {
        /// The request's id, when it had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        /// [`PROTOCOL_VERSION`].
        protocol: u32,
        /// What to register, in order.
        tools: Vec<PiToolSpec>,
        /// What is left out, and why.
        skipped: Vec<PiSkipped>,
        /// Warnings met while projecting.
        warnings: Vec<String>,
        /// A folder holding the registry's skills, one sub-folder each
        /// (`SKILL.md` and its files), for Pi's `resources_discover`;
        /// absent when the registry has none.
        #[serde(rename = "skillsDir", default, skip_serializing_if = "Option::is_none")]
        skills_dir: Option<String>,
    },
    /// A partial result of a running call.
    Update {
        /// The call id.
        id: String,
        /// The update.
        update: PiUpdate,
    },
    /// A log line of a running call.
    Log {
        /// The call id.
        id: String,
        /// The registry name of the tool that logged (a composed call's
        /// own name).
        tool: String,
        /// Severity.
        level: LogLevel,
        /// The message.
        message: String,
        /// Structured fields.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// A question of a running call to the user.
    Question {
        /// The question's id: the answer names it.
        id: String,
        /// The id of the call that asks.
        #[serde(rename = "callId")]
        call_id: String,
        /// The call's key for the question (`approval-1`, `elicitation-1`).
        key: String,
        /// The question, as an MCP request (`elicitation/create` with its
        /// `message` and `requestedSchema`).
        request: InputRequest,
    },
    /// The final result of a call.
    Result {
        /// The call id.
        id: String,
        /// The result.
        result: PiToolResult,
    },
    /// A line the bridge could not use.
    Error {
        /// The line's id, when it could be read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        /// What went wrong.
        error: PiBridgeError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_read_the_documented_lines() {
        let execute: PiRequest = serde_json::from_value(
            json!({"type": "execute", "id": "c1", "tool": "notes_search", "input": {"query": "x"}}),
        )
        .unwrap();
        assert_eq!(
            execute,
            PiRequest::Execute {
                id: "c1".into(),
                tool: "notes_search".into(),
                input: json!({"query": "x"}),
                can_answer: Vec::new(),
            }
        );
        let no_input: PiRequest =
            serde_json::from_value(json!({"type": "execute", "id": "c2", "tool": "t"})).unwrap();
        assert!(matches!(no_input, PiRequest::Execute { input, .. } if input == json!({})));
        let asking: PiRequest = serde_json::from_value(
            json!({"type": "execute", "id": "c3", "tool": "t", "canAnswer": ["elicitation"]}),
        )
        .unwrap();
        assert!(
            matches!(asking, PiRequest::Execute { can_answer, .. } if can_answer == ["elicitation"])
        );
        let answer: PiRequest = serde_json::from_value(
            json!({"type": "answer", "id": "q1", "answer": {"action": "decline"}}),
        )
        .unwrap();
        assert_eq!(
            answer,
            PiRequest::Answer {
                id: "q1".into(),
                answer: json!({"action": "decline"})
            }
        );
        let discover: PiRequest = serde_json::from_value(json!({"type": "discover"})).unwrap();
        assert_eq!(discover, PiRequest::Discover { id: None });
    }
}
