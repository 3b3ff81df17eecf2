//! The model `mcp_lines` holds the MCP server to: how the input opens (a
//! 2025 `initialize` session, nothing, or a first stateless `2026-07-28`
//! request), which lines are requests the server owes one answer, and how
//! an answer's id is matched to a request's.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// A 2025 session: `initialize` (id 0) and `notifications/initialized`.
pub const SESSION_HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

/// A complete stateless-era request: the connection speaks `2026-07-28`
/// from here on (no handshake in that era; the first such request decides).
pub const STATELESS_OPENER: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"opener","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    "\n"
);

/// How an input starts, from its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opening {
    /// [`SESSION_HANDSHAKE`] first.
    Session,
    /// The fuzzer's lines alone: before a lifecycle is chosen the server
    /// may end the connection (a notification or a response first is a
    /// failed handshake), so it owes no answer to later lines.
    Bare,
    /// [`STATELESS_OPENER`] first.
    Stateless,
}

impl Opening {
    /// The opening a first byte selects (0 and 1 keep the meaning they had
    /// when there were only two openings).
    pub fn from_byte(byte: u8) -> Opening {
        match byte % 3 {
            0 => Opening::Session,
            1 => Opening::Bare,
            _ => Opening::Stateless,
        }
    }

    /// The lines written before the fuzzer's.
    pub fn prefix(self) -> &'static str {
        match self {
            Opening::Session => SESSION_HANDSHAKE,
            Opening::Bare => "",
            Opening::Stateless => STATELESS_OPENER,
        }
    }
}

/// A request id as the server compares it: a string or an integer that
/// fits an `i64` (anything else is not an id, and its request is answered
/// with `"id": null`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl Id {
    /// The id `value` is, if it is one.
    pub fn of(value: &Value) -> Option<Id> {
        match value {
            Value::String(s) => Some(Id::String(s.clone())),
            Value::Number(n) => n.as_i64().map(Id::Number),
            _ => None,
        }
    }
}

/// One input line as the server reads it: a byte-order mark skipped, then
/// JSON.
pub fn parse_line(line: &[u8]) -> Option<Value> {
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    serde_json::from_slice(line).ok()
}

/// The id of the request `message` is, when the server owes it exactly
/// one answer with that id: a JSON object with a valid id that is not a
/// response of the client's (no `method`, a `result` or `error`, and
/// `"jsonrpc": "2.0"`). A malformed one is owed its error; a well-formed
/// one its result or error. `subscriptions/listen` is the exception: it
/// holds its stream open until the connection ends.
pub fn owed_id(message: &Value) -> Option<Id> {
    let object = message.as_object()?;
    let id = Id::of(object.get("id")?)?;
    let jsonrpc_2 = object.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    match object.get("method") {
        None if jsonrpc_2 && (object.contains_key("result") || object.contains_key("error")) => {
            None
        }
        Some(Value::String(method)) if jsonrpc_2 && method == "subscriptions/listen" => None,
        _ => Some(id),
    }
}

/// The protocol versions the server speaks (what it lists in
/// `server/discover` and in a `-32022` error).
pub const SUPPORTED_VERSIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// Whether the request `message` names in its `_meta` a protocol version
/// the server does not speak, so it must be refused (`-32022`, or an
/// earlier error), never served. `initialize` (whose own version field is
/// negotiated) and `ping` (answered before any lifecycle is chosen) are
/// not judged.
pub fn names_unsupported_version(message: &Value) -> bool {
    let method = message.get("method").and_then(Value::as_str);
    if matches!(method, None | Some("initialize" | "ping")) {
        return false;
    }
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .is_some_and(|version| !SUPPORTED_VERSIONS.contains(&version))
}

/// What an input asks of the server.
#[derive(Debug, Default)]
pub struct Expectations {
    /// Every id the input mentions, as JSON text: the server may answer
    /// only these (or `null`).
    pub sent: HashSet<String>,
    /// Requests owed exactly one answer: their ids appear on one line only
    /// (a repeated id is the client's error, and rmcp keeps one of two
    /// requests sharing it).
    pub owed: HashSet<Id>,
    /// Owed requests that must be refused ([`names_unsupported_version`]).
    pub refused: HashSet<Id>,
    /// Whether the input cancels a request (`notifications/cancelled`): a
    /// cancelled request may end without an answer.
    pub cancels: bool,
}

impl Expectations {
    /// Reads the whole input (the opening's lines included).
    pub fn of(input: &[u8]) -> Expectations {
        let mut expectations = Expectations::default();
        let mut lines: HashMap<Id, usize> = HashMap::new();
        let mut owed = HashSet::new();
        let mut refused = HashSet::new();
        for line in input.split(|b| *b == b'\n') {
            let Some(message) = parse_line(line) else {
                continue;
            };
            let messages = match &message {
                Value::Array(batch) => batch.clone(),
                _ => vec![message.clone()],
            };
            for m in &messages {
                if let Some(id) = m.get("id") {
                    expectations.sent.insert(id.to_string());
                }
                if m.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
                    expectations.cancels = true;
                }
            }
            // Every line naming an id counts, owed or not: the server may
            // answer a line this model owes nothing (a `subscriptions/listen`
            // it refuses) with the same id.
            if let Some(id) = message.get("id").and_then(Id::of) {
                *lines.entry(id).or_default() += 1;
            }
            if let Some(id) = owed_id(&message) {
                if names_unsupported_version(&message) {
                    refused.insert(id.clone());
                }
                owed.insert(id);
            }
        }
        expectations.owed = owed
            .into_iter()
            .filter(|id| lines.get(id) == Some(&1))
            .collect();
        expectations.refused = refused
            .into_iter()
            .filter(|id| expectations.owed.contains(id))
            .collect();
        expectations
    }
}

/// The id of an answer line (a result or an error), if it has a valid one.
pub fn answered_id(message: &Value) -> Option<Id> {
    if message.get("result").is_none() && message.get("error").is_none() {
        return None;
    }
    Id::of(message.get("id")?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_are_owed_and_client_responses_are_not() {
        let owed = |v: Value| owed_id(&v);
        assert_eq!(
            owed(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
            Some(Id::Number(1))
        );
        // Malformed requests are owed their error, with their id.
        assert_eq!(
            owed(json!({"jsonrpc": "1.0", "id": "a", "result": {}})),
            Some(Id::String("a".into()))
        );
        assert_eq!(
            owed(json!({"jsonrpc": "2.0", "id": 2})),
            Some(Id::Number(2))
        );
        assert_eq!(
            owed(json!({"jsonrpc": "2.0", "id": 3, "method": 7})),
            Some(Id::Number(3))
        );
        assert_eq!(owed(json!({"jsonrpc": "2.0", "id": 4, "result": {}})), None);
        assert_eq!(
            owed(json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})),
            None
        );
        assert_eq!(
            owed(json!({"jsonrpc": "2.0", "id": null, "method": "ping"})),
            None
        );
        assert_eq!(
            owed(json!({"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen"})),
            None
        );
    }

    #[test]
    fn a_request_naming_an_unsupported_version_must_be_refused() {
        let with_version = |method: &str, version: Value| {
            json!({"jsonrpc": "2.0", "id": 1, "method": method,
                   "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": version}}})
        };
        assert!(names_unsupported_version(&with_version(
            "tools/list",
            json!("v999")
        )));
        assert!(!names_unsupported_version(&with_version(
            "tools/list",
            json!("2026-07-28")
        )));
        assert!(!names_unsupported_version(&with_version(
            "tools/list",
            json!(5)
        )));
        assert!(!names_unsupported_version(&with_version(
            "initialize",
            json!("v999")
        )));
        assert!(!names_unsupported_version(&with_version(
            "ping",
            json!("v999")
        )));
    }

    #[test]
    fn a_repeated_id_is_not_owed_and_a_cancellation_is_noted() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "\n\u{feff}",
            r#"{"jsonrpc":"2.0","id":"b","method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}"#,
            "\n",
            // An id owed on one line and named on another is not owed.
            r#"{"jsonrpc":"2.0","id":3,"mehtod":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen"}"#,
        );
        let expectations = Expectations::of(input.as_bytes());
        assert_eq!(expectations.owed, HashSet::from([Id::String("b".into())]));
        assert!(expectations.cancels);
        assert!(expectations.sent.contains("1") && expectations.sent.contains("\"b\""));
    }
}
