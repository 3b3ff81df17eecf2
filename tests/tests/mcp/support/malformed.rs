//! The malformed JSON-RPC messages every transport must answer, with the
//! JSON-RPC error each is owed.

use serde_json::{json, Value};

/// One malformed message and its expected answer.
pub struct Malformed {
    /// What is wrong with it.
    pub name: &'static str,
    /// The message (a stdio line without its newline, or an HTTP body).
    pub text: String,
    /// The JSON-RPC error code.
    pub code: i64,
    /// The id of the answer (`null` when the request's id cannot be read).
    pub id: Value,
}

fn case(name: &'static str, text: &str, code: i64, id: Value) -> Malformed {
    Malformed {
        name,
        text: text.to_owned(),
        code,
        id,
    }
}

/// The cases both transports share.
pub fn messages() -> Vec<Malformed> {
    vec![
        case(
            "unparseable JSON",
            r#"{"jsonrpc": "2.0", "id": 5,"#,
            -32700,
            Value::Null,
        ),
        case("not JSON at all", "hello", -32700, Value::Null),
        case(
            "a batch",
            r#"[{"jsonrpc":"2.0","id":6,"method":"ping"}]"#,
            -32600,
            Value::Null,
        ),
        case(
            "an object id",
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
        case(
            "a null id",
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
        case(
            "params as an array",
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["notes.search"]}"#,
            -32600,
            json!(7),
        ),
        case(
            "jsonrpc 1.0",
            r#"{"jsonrpc":"1.0","id":"eight","method":"tools/list"}"#,
            -32600,
            json!("eight"),
        ),
        case(
            "arguments as a string",
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"notes.search","arguments":"x"}}"#,
            -32602,
            json!(9),
        ),
    ]
}

/// Checks a JSON-RPC error answer against `case`.
pub fn assert_answer(case: &Malformed, answer: &Value) {
    let name = case.name;
    assert_eq!(answer["jsonrpc"], "2.0", "{name}: {answer}");
    assert_eq!(answer["error"]["code"], case.code, "{name}: {answer}");
    assert_eq!(answer["id"], case.id, "{name}: {answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty() && m.len() < 400),
        "{name}: {answer}"
    );
}
