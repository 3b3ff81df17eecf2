//! OpenAI function tools (Chat Completions and Responses), strict where the
//! schema allows.

use serde_json::{json, Value};

use super::args;
use super::reply::outcome_text;
use super::strict::strict_schema;
use super::{
    input_parameters, required_str, CallError, CallForm, Provider, ToolCall, ToolProjection,
};
use crate::adapters::names::SurfaceNameRules;
use crate::definition::ToolDefinition;
use crate::error::ToolError;
use crate::event::ToolOutput;

/// OpenAI function tools for the Chat Completions API
/// ([`chat_completions`](OpenAi::chat_completions)) or the Responses API
/// ([`responses`](OpenAi::responses)); strict (Structured Outputs) wherever
/// the schema allows, unless turned off with [`strict`](OpenAi::strict).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenAi {
    api: Api,
    strict: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    ChatCompletions,
    Responses,
}

const NAMES: SurfaceNameRules = SurfaceNameRules::FUNCTION_NAME.for_surface("OpenAI");

const CALL_SHAPES: &str = "expected a Chat Completions tool call `{\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}` or a Responses `{\"type\": \"function_call\", \"call_id\", \"name\", \"arguments\"}` item";

impl OpenAi {
    /// Tools for `POST /v1/chat/completions`: `{"type": "function",
    /// "function": {name, description, parameters, strict}}`; results are
    /// `{"role": "tool", "tool_call_id", "content"}` messages.
    pub fn chat_completions() -> Self {
        OpenAi {
            api: Api::ChatCompletions,
            strict: true,
        }
    }

    /// Tools for `POST /v1/responses`: `{"type": "function", name,
    /// description, parameters, strict}`; results are
    /// `{"type": "function_call_output", "call_id", "output"}` items.
    pub fn responses() -> Self {
        OpenAi {
            api: Api::Responses,
            strict: true,
        }
    }

    /// Whether to offer tools in strict mode where the schema allows (the
    /// default); `false` sends every schema as dispatch enforces it, with
    /// `strict: false`.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}

/// An `arguments` member: a JSON string (`""` means no arguments) or,
/// from lenient compatible servers, the object itself.
fn arguments(value: Option<&Value>) -> Result<Value, String> {
    match value {
        None | Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(text)) => args::parse(text),
        Some(other) => Ok(other.clone()),
    }
}

/// `payload[key]` as a string.
fn text<'a>(payload: &'a Value, key: &str) -> Result<&'a str, CallError> {
    required_str(payload, key, "an OpenAI tool call", CALL_SHAPES)
}

impl Provider for OpenAi {
    fn name_rules(&self) -> SurfaceNameRules {
        NAMES
    }

    fn project(&self, def: &ToolDefinition, name: &str, description: &str) -> ToolProjection {
        let parameters = input_parameters(def);
        let (parameters, strict, notes) = if !self.strict {
            (parameters, false, Vec::new())
        } else {
            match strict_schema(&parameters) {
                Ok(strict) => (strict.schema, true, strict.notes),
                Err(reasons) => {
                    tracing::warn!(
                        tool = %def.name,
                        reasons = %reasons.join("; "),
                        "offering the tool to OpenAI without strict mode"
                    );
                    let notes = reasons
                        .into_iter()
                        .map(|reason| format!("not strict: {reason}"))
                        .collect();
                    (parameters, false, notes)
                }
            }
        };
        let function = json!({
            "name": name,
            "description": description,
            "parameters": parameters,
            "strict": strict,
        });
        let entry = match self.api {
            Api::ChatCompletions => json!({"type": "function", "function": function}),
            Api::Responses => {
                let mut entry = json!({"type": "function"});
                if let (Some(entry), Value::Object(function)) = (entry.as_object_mut(), function) {
                    entry.extend(function);
                }
                entry
            }
        };
        ToolProjection {
            tool: def.name.clone(),
            name: name.to_owned(),
            entry,
            notes,
        }
    }

    fn read_call(&self, payload: &Value) -> Result<ToolCall, CallError> {
        if let Some(function) = payload.get("function").filter(|f| f.is_object()) {
            return Ok(ToolCall {
                id: Some(text(payload, "id")?.to_owned()),
                name: text(function, "name")?.to_owned(),
                arguments: arguments(function.get("arguments")),
                form: CallForm::ChatCompletions,
            });
        }
        if payload.get("type").and_then(Value::as_str) == Some("function_call") {
            return Ok(ToolCall {
                id: Some(text(payload, "call_id")?.to_owned()),
                name: text(payload, "name")?.to_owned(),
                arguments: arguments(payload.get("arguments")),
                form: CallForm::Responses,
            });
        }
        Err(CallError::NotACall {
            expected: "an OpenAI tool call",
            problem: CALL_SHAPES.to_owned(),
        })
    }

    fn result(&self, call: &ToolCall, outcome: &Result<ToolOutput<Value>, ToolError>) -> Value {
        let (text, _) = outcome_text(outcome);
        let id = call.id.as_deref().unwrap_or_default();
        match call.form {
            CallForm::Responses => {
                json!({"type": "function_call_output", "call_id": id, "output": text})
            }
            _ => json!({"role": "tool", "tool_call_id": id, "content": text}),
        }
    }

    fn reply(&self, results: Vec<Value>) -> Vec<Value> {
        results
    }

    fn defer_loading(&self, entry: &mut Value) -> bool {
        super::mark_deferred(entry)
    }
}
