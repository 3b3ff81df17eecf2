//! Output rendering: which channel each event goes to, and how a result's
//! display looks in a terminal.
//!
//! * human mode — the result's display (or its data as compact JSON) and
//!   data chunks (one JSON line each) on stdout; logs (`[level] message`),
//!   progress and errors (`Error [CODE]: message` + details) on stderr;
//! * `--json` — every event as one JSON line on stdout.
//!
//! On a terminal, control characters are shown escaped (see [`terminal`]).

use serde_json::Value;

use super::progress::Progress;
use super::terminal;
use crate::adapters::render::{display_text, error_text};
use crate::error::ErrorCode;
use crate::event::{ToolDisplay, ToolEvent};

/// How events are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// For people: displays, stderr for diagnostics.
    Human,
    /// JSON Lines of every event on stdout.
    Json,
}

/// Writes the events of one call.
pub(crate) struct Renderer {
    mode: Mode,
    progress: Progress,
}

fn with_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A result as terminal text: its display, else its data as compact JSON
/// (nothing for `null` data).
pub(crate) fn render_result(data: &Value, display: Option<&ToolDisplay>) -> String {
    match display {
        Some(ToolDisplay::Text(text)) => with_newline(text.clone()),
        Some(display @ ToolDisplay::Blocks(blocks)) if !blocks.is_empty() => {
            with_newline(display_text(display))
        }
        _ if data.is_null() => String::new(),
        // Compact: one line a script can pipe on (a JSON display is pretty).
        _ => with_newline(data.to_string()),
    }
}

/// An error as terminal text (see [`crate::adapters::render::error_text`]).
pub(crate) fn render_error(code: &ErrorCode, message: &str, details: Option<&Value>) -> String {
    with_newline(error_text(code, message, details))
}

impl Renderer {
    /// A renderer writing in `mode`; progress is a bar when stderr is a
    /// terminal.
    pub(crate) fn new(mode: Mode) -> Self {
        Renderer {
            mode,
            progress: Progress::for_stderr(),
        }
    }

    /// Writes one event to its channel.
    pub(crate) fn event(&mut self, event: &ToolEvent) {
        if self.mode == Mode::Json {
            let line = serde_json::to_string(event)
                .unwrap_or_else(|e| format!(r#"{{"type":"log","level":"error","message":"event could not be serialized: {e}"}}"#));
            terminal::stdout_json(&format!("{line}\n"));
            return;
        }
        match event {
            ToolEvent::Log {
                level,
                message,
                meta,
            } => {
                let line = match meta {
                    Some(meta) => format!("[{}] {message} {meta}\n", level.as_str()),
                    None => format!("[{}] {message}\n", level.as_str()),
                };
                self.progress.suspend(|| terminal::stderr(&line));
            }
            ToolEvent::Progress { percent, message } => {
                self.progress.update(*percent, message.as_deref());
            }
            ToolEvent::Data { chunk } => {
                let line = format!("{chunk}\n");
                self.progress.suspend(|| terminal::stdout(&line));
            }
            ToolEvent::Result { data, display } => {
                self.progress.finish();
                terminal::stdout(&render_result(data, display.as_ref()));
            }
            ToolEvent::Error {
                code,
                message,
                details,
            } => {
                self.progress.finish();
                terminal::stderr(&render_error(code, message, details.as_ref()));
            }
        }
    }

    /// A line for the user on stderr (not an event of the call).
    pub(crate) fn notice(&self, text: &str) {
        let line = with_newline(text.to_owned());
        self.progress.suspend(|| terminal::stderr(&line));
    }

    /// Ends the call: clears the progress bar.
    pub(crate) fn finish(&mut self) {
        self.progress.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_without_display_print_their_data() {
        assert_eq!(
            render_result(&json!({"id": 1, "tags": ["a"]}), None),
            "{\"id\":1,\"tags\":[\"a\"]}\n"
        );
        assert_eq!(
            render_result(&json!(3), Some(&ToolDisplay::Blocks(vec![]))),
            "3\n"
        );
        assert_eq!(render_result(&Value::Null, None), "");
        assert_eq!(render_result(&json!(1), Some(&"done".into())), "done\n");
    }

    #[test]
    fn errors_are_the_core_text_on_their_own_line() {
        // The text itself is `crate::adapters::render::error_text`'s (tested there).
        assert_eq!(
            render_error(&ErrorCode::Aborted, "Tool execution aborted", None),
            "Error [ABORTED]: Tool execution aborted\n"
        );
    }
}
