//! The outcome rule: what dispatch makes of a handler's events, so that
//! every call's stream ends with exactly one outcome event, last.

use crate::context::Cancellation;
use serde_json::Value;

use crate::definition::{ToolDefinition, ValidateOutput};
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolEvent;
use crate::event::ToolOutput;

/// What to do with one event of a streaming handler.
pub(super) enum Step {
    /// Progress, a log line or a data chunk: emit it now.
    Pass(ToolEvent),
    /// A result: held (it replaces any earlier one) until the stream ends.
    Held,
    /// The call's outcome: an error (the handler's, or a strict output
    /// failure). Nothing follows it; the handler is dropped.
    End(ToolEvent),
}

/// A streaming handler's events under the rule: progress, logs and data
/// pass through; the latest result is held — checked per the output mode as
/// it arrives — and becomes the outcome when the handler's stream ends; an
/// error ends the call at once (a held result is dropped); a stream that
/// ends with neither ends with `NO_RESULT`.
#[derive(Default)]
pub(super) struct Outcome {
    held: Option<ToolOutput<Value>>,
}

impl Outcome {
    /// One event from `def`'s handler.
    pub(super) fn step(&mut self, def: &ToolDefinition, event: ToolEvent) -> Step {
        match event {
            ToolEvent::Result { data, display } => match check_output(def, &data) {
                Ok(()) => {
                    self.held = Some(ToolOutput { data, display });
                    Step::Held
                }
                Err(error) => Step::End(ToolEvent::error(error)),
            },
            event @ ToolEvent::Error { .. } => Step::End(event),
            event => Step::Pass(event),
        }
    }

    /// The handler's stream ended: the held result, or `NO_RESULT`.
    pub(super) fn end(self) -> ToolEvent {
        match self.held {
            Some(ToolOutput { data, display }) => ToolEvent::Result { data, display },
            None => ToolEvent::error(ToolError::new(
                ErrorCode::NoResult,
                "Tool produced no result",
            )),
        }
    }
}

/// The outcome of a handler's single return value.
#[inline]
pub(super) fn returned(def: &ToolDefinition, output: ToolOutput<Value>) -> ToolEvent {
    match check_output(def, &output.data) {
        Ok(()) => ToolEvent::Result {
            data: output.data,
            display: output.display,
        },
        Err(error) => ToolEvent::error(error),
    }
}

/// The outcome of a handler that settled, as the caller sees it: `ABORTED`
/// when its token fired before it settled (whatever it returned; the check
/// is one read of the token, after the handler is done).
#[inline]
pub(super) fn settled(outcome: &mut ToolEvent, token: &Cancellation) {
    if token.is_cancelled() {
        *outcome = ToolEvent::error(ToolError::aborted());
    }
}

/// Output validation per the tool's mode. `Err` replaces the result.
fn check_output(def: &ToolDefinition, data: &Value) -> Result<(), ToolError> {
    if def.validate_output == ValidateOutput::Off {
        return Ok(());
    }
    let Some(schema) = def.compiled().ok().and_then(|c| c.output.as_ref()) else {
        return Ok(());
    };
    match schema.validate(data) {
        Ok(()) => Ok(()),
        Err(issues) if def.validate_output == ValidateOutput::Strict => Err(ToolError::new(
            ErrorCode::OutputInvalid,
            format!(
                "Output validation failed: the output of {} does not match its output schema",
                def.name
            ),
        )
        .with_details(serde_json::to_value(&issues).unwrap_or(Value::Null))),
        Err(issues) => {
            tracing::warn!(target: "gonk_tools::dispatch", tool = %def.name, issues = ?issues, "tool output does not match its output schema");
            Ok(())
        }
    }
}
