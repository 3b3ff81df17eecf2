//! Gemini function declarations (the OpenAPI subset of `Schema`),
//! `functionCall` in, `functionResponse` out.

use serde_json::{json, Map, Value};

use super::openapi::openapi_schema;
use super::reply::output_text;
use super::{
    input_parameters, required_str, CallError, CallForm, Provider, ToolCall, ToolProjection,
};
use crate::adapters::names::SurfaceNameRules;
use crate::definition::ToolDefinition;
use crate::error::ToolError;
use crate::event::ToolOutput;

/// Gemini API `functionDeclarations`. Parameters are converted to the
/// OpenAPI subset Gemini's `Schema` accepts; a schema the subset cannot
/// express goes as `parametersJsonSchema` instead (see the
/// [module docs](super)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gemini;

const NAMES: SurfaceNameRules = SurfaceNameRules::FUNCTION_NAME.for_surface("Gemini");

const CALL_SHAPE: &str = "expected a `{\"functionCall\": {\"name\", \"args\", \"id\"?}}` part or the `functionCall` object itself";

impl Provider for Gemini {
    fn name_rules(&self) -> SurfaceNameRules {
        NAMES
    }

    fn project(&self, def: &ToolDefinition, name: &str, description: &str) -> ToolProjection {
        let parameters = input_parameters(def);
        let mut entry = Map::new();
        entry.insert("name".into(), Value::String(name.to_owned()));
        entry.insert("description".into(), Value::String(description.to_owned()));
        let notes = match openapi_schema(&parameters) {
            Ok(converted) => {
                // A function without parameters leaves them unset.
                let empty = converted.schema.get("anyOf").is_none()
                    && converted
                        .schema
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(Map::is_empty);
                if !empty {
                    entry.insert("parameters".into(), converted.schema);
                }
                converted.notes
            }
            Err(reasons) => {
                tracing::warn!(
                    tool = %def.name,
                    reasons = %reasons.join("; "),
                    "offering the tool to Gemini as parametersJsonSchema"
                );
                entry.insert("parametersJsonSchema".into(), parameters);
                reasons
                    .into_iter()
                    .map(|reason| format!("sent as parametersJsonSchema: {reason}"))
                    .collect()
            }
        };
        ToolProjection {
            tool: def.name.clone(),
            name: name.to_owned(),
            entry: Value::Object(entry),
            notes,
        }
    }

    fn read_call(&self, payload: &Value) -> Result<ToolCall, CallError> {
        let call = payload.get("functionCall").unwrap_or(payload);
        let name = required_str(call, "name", "a Gemini functionCall", CALL_SHAPE)?;
        Ok(ToolCall {
            id: call.get("id").and_then(Value::as_str).map(str::to_owned),
            name: name.to_owned(),
            arguments: Ok(call.get("args").cloned().unwrap_or(Value::Null)),
            form: CallForm::FunctionCall,
        })
    }

    fn result(&self, call: &ToolCall, outcome: &Result<ToolOutput<Value>, ToolError>) -> Value {
        let response = match outcome {
            Ok(output) => {
                let mut response = json!({"output": output.data});
                if output.display.is_some() {
                    response["display"] = Value::String(output_text(output));
                }
                response
            }
            Err(error) => json!({"error": error}),
        };
        let mut function_response = json!({"name": call.name, "response": response});
        if let Some(id) = &call.id {
            function_response["id"] = Value::String(id.clone());
        }
        json!({"functionResponse": function_response})
    }

    fn reply(&self, results: Vec<Value>) -> Vec<Value> {
        vec![json!({"role": "user", "parts": results})]
    }
}
