//! Anthropic tools: `{name, description, input_schema}`, `tool_use` in,
//! `tool_result` out.

use serde_json::{json, Value};

use super::reply::outcome_text;
use super::{
    input_parameters, required_str, CallError, CallForm, Provider, ToolCall, ToolProjection,
};
use crate::adapters::names::SurfaceNameRules;
use crate::adapters::render::block_text;
use crate::definition::ToolDefinition;
use crate::error::ToolError;
use crate::event::ToolOutput;
use crate::event::{DisplayBlock, ToolDisplay};

/// Anthropic Messages API tools. The input schema is the schema dispatch
/// enforces (Anthropic takes JSON Schema as it is), its root an object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Anthropic;

const NAMES: SurfaceNameRules = SurfaceNameRules::FUNCTION_NAME.for_surface("Anthropic");

const CALL_SHAPE: &str =
    "expected a `{\"type\": \"tool_use\", \"id\", \"name\", \"input\"}` content block";

/// `payload[key]` as a string.
fn text<'a>(payload: &'a Value, key: &str) -> Result<&'a str, CallError> {
    required_str(payload, key, "an Anthropic tool_use block", CALL_SHAPE)
}

/// A successful result's content blocks: images as image blocks, the
/// rest as text.
fn content(output: &ToolOutput<Value>) -> Vec<Value> {
    let Some(ToolDisplay::Blocks(blocks)) = &output.display else {
        let (text, _) = outcome_text(&Ok(output.clone()));
        return vec![json!({"type": "text", "text": text})];
    };
    blocks
        .iter()
        .map(|block| match block {
            DisplayBlock::Image {
                mime_type, data, ..
            } => json!({
                "type": "image",
                "source": {"type": "base64", "media_type": mime_type, "data": data},
            }),
            other => json!({"type": "text", "text": block_text(other)}),
        })
        .collect()
}

impl Provider for Anthropic {
    fn name_rules(&self) -> SurfaceNameRules {
        NAMES
    }

    fn project(&self, def: &ToolDefinition, name: &str, description: &str) -> ToolProjection {
        ToolProjection {
            tool: def.name.clone(),
            name: name.to_owned(),
            entry: json!({
                "name": name,
                "description": description,
                "input_schema": input_parameters(def),
            }),
            notes: Vec::new(),
        }
    }

    fn read_call(&self, payload: &Value) -> Result<ToolCall, CallError> {
        if payload.get("type").and_then(Value::as_str) != Some("tool_use") {
            return Err(CallError::NotACall {
                expected: "an Anthropic tool_use block",
                problem: CALL_SHAPE.to_owned(),
            });
        }
        Ok(ToolCall {
            id: Some(text(payload, "id")?.to_owned()),
            name: text(payload, "name")?.to_owned(),
            arguments: Ok(payload.get("input").cloned().unwrap_or(Value::Null)),
            form: CallForm::ToolUse,
        })
    }

    fn result(&self, call: &ToolCall, outcome: &Result<ToolOutput<Value>, ToolError>) -> Value {
        let id = call.id.as_deref().unwrap_or_default();
        match outcome {
            Ok(output) => json!({
                "type": "tool_result",
                "tool_use_id": id,
                "content": content(output),
            }),
            Err(_) => {
                let (text, _) = outcome_text(outcome);
                json!({
                    "type": "tool_result",
                    "tool_use_id": id,
                    "content": [{"type": "text", "text": text}],
                    "is_error": true,
                })
            }
        }
    }

    fn reply(&self, results: Vec<Value>) -> Vec<Value> {
        vec![json!({"role": "user", "content": results})]
    }

    fn defer_loading(&self, entry: &mut Value) -> bool {
        super::mark_deferred(entry)
    }
}
