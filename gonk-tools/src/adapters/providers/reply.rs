//! The text a model reads for a call's outcome.

use serde_json::Value;

use crate::adapters::render::{display_text, error_text};
use crate::error::ToolError;
use crate::event::ToolOutput;

/// A result's text: its display rendered ([`crate::adapters::render`]), else its data
/// (a string as it is, anything else as compact JSON).
pub(crate) fn output_text(output: &ToolOutput<Value>) -> String {
    match (&output.display, &output.data) {
        (Some(display), _) => display_text(display),
        (None, Value::String(text)) => text.clone(),
        (None, data) => data.to_string(),
    }
}

/// An error's text: `Error [CODE]: message` and its details.
pub(crate) fn failure_text(error: &ToolError) -> String {
    error_text(&error.code, &error.message, error.details.as_ref())
}

/// The outcome's text and whether it is an error.
pub(crate) fn outcome_text(outcome: &Result<ToolOutput<Value>, ToolError>) -> (String, bool) {
    match outcome {
        Ok(output) => (output_text(output), false),
        Err(error) => (failure_text(error), true),
    }
}
