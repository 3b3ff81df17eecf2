//! Output rendering: which channel each event goes to, and how a result's
//! display looks in a terminal.
//!
//! * human mode — the result's display (or its data as pretty JSON) and
//!   data chunks (one JSON line each) on stdout; logs (`[level] message`),
//!   progress and errors (`Error [CODE]: message` + details) on stderr;
//! * `--json` — every event as one JSON line on stdout.
//!
//! On a terminal, control characters are shown escaped (see [`terminal`]).

use serde_json::Value;

use super::progress::Progress;
use super::terminal;
use crate::error::{ErrorCode, ValidationIssue};
use crate::event::{DisplayBlock, ResourceContents, ToolDisplay, ToolEvent};

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

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// One display block as terminal text.
fn render_block(block: &DisplayBlock) -> String {
    match block {
        DisplayBlock::Text { text } | DisplayBlock::Markdown { text } => text.clone(),
        DisplayBlock::Code {
            language,
            code,
            caption,
        } => {
            let mut text = String::new();
            if let Some(caption) = caption {
                text.push_str(caption);
                text.push('\n');
            }
            text.push_str("```");
            text.push_str(language);
            text.push('\n');
            text.push_str(code);
            if !code.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("```");
            text
        }
        DisplayBlock::Json { value, caption } => match caption {
            Some(caption) => format!("{caption}\n{}", pretty(value)),
            None => pretty(value),
        },
        DisplayBlock::Link { url, title } => match title {
            Some(title) => format!("{title}: {url}"),
            None => url.clone(),
        },
        DisplayBlock::Image { mime_type, alt, .. } => match alt {
            Some(alt) => format!("[image {mime_type} — {alt}]"),
            None => format!("[image {mime_type}]"),
        },
        DisplayBlock::Audio { mime_type, .. } => format!("[audio {mime_type}]"),
        DisplayBlock::Resource {
            uri,
            mime_type,
            contents,
        } => match contents {
            ResourceContents::Text { text } => text.clone(),
            ResourceContents::Blob { .. } => match mime_type {
                Some(mime) => format!("[resource {uri} ({mime})]"),
                None => format!("[resource {uri}]"),
            },
        },
    }
}

/// A result as terminal text: its display, else its data as pretty JSON
/// (nothing for `null` data).
pub(crate) fn render_result(data: &Value, display: Option<&ToolDisplay>) -> String {
    match display {
        Some(ToolDisplay::Text(text)) => with_newline(text.clone()),
        Some(ToolDisplay::Blocks(blocks)) if !blocks.is_empty() => {
            let parts: Vec<String> = blocks.iter().map(render_block).collect();
            with_newline(parts.join("\n"))
        }
        _ if data.is_null() => String::new(),
        _ => with_newline(pretty(data)),
    }
}

/// An error as terminal text: `Error [CODE]: message`, then the details —
/// validation issues one per line, anything else as pretty JSON.
pub(crate) fn render_error(code: &ErrorCode, message: &str, details: Option<&Value>) -> String {
    let mut text = format!("Error [{code}]: {message}\n");
    if let Some(details) = details {
        let issues: Option<Vec<ValidationIssue>> =
            if matches!(code, ErrorCode::InvalidInput | ErrorCode::OutputInvalid) {
                serde_json::from_value(details.clone()).ok()
            } else {
                None
            };
        match issues {
            Some(issues) if !issues.is_empty() => {
                for issue in issues {
                    let path = if issue.path.is_empty() {
                        "(input)"
                    } else {
                        &issue.path
                    };
                    text.push_str(&format!("  {path}: {}\n", issue.message));
                }
            }
            _ => text.push_str(&with_newline(pretty(details))),
        }
    }
    text
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
    fn display_blocks_render_per_kind() {
        let blocks = vec![
            DisplayBlock::Text {
                text: "plain".into(),
            },
            DisplayBlock::Markdown {
                text: "# Title".into(),
            },
            DisplayBlock::Code {
                language: "rust".into(),
                code: "fn main() {}".into(),
                caption: None,
            },
            DisplayBlock::Json {
                value: json!({"a": 1}),
                caption: None,
            },
            DisplayBlock::Link {
                url: "https://example.invalid/n/1".into(),
                title: Some("Note 1".into()),
            },
            DisplayBlock::Image {
                mime_type: "image/png".into(),
                data: "AAAA".into(),
                alt: Some("a chart".into()),
            },
        ];
        assert_eq!(
            render_result(&Value::Null, Some(&ToolDisplay::Blocks(blocks))),
            "plain\n# Title\n```rust\nfn main() {}\n```\n{\n  \"a\": 1\n}\nNote 1: https://example.invalid/n/1\n[image image/png — a chart]\n"
        );
    }

    #[test]
    fn results_without_display_print_their_data() {
        assert_eq!(
            render_result(&json!({"id": 1}), None),
            "{\n  \"id\": 1\n}\n"
        );
        assert_eq!(
            render_result(&json!(3), Some(&ToolDisplay::Blocks(vec![]))),
            "3\n"
        );
        assert_eq!(render_result(&Value::Null, None), "");
        assert_eq!(render_result(&json!(1), Some(&"done".into())), "done\n");
    }

    #[test]
    fn errors_show_code_message_and_details() {
        let issues = json!([{"path": "/query", "message": "\"\" is shorter than 1 character"}]);
        assert_eq!(
            render_error(&ErrorCode::InvalidInput, "Input validation failed", Some(&issues)),
            "Error [INVALID_INPUT]: Input validation failed\n  /query: \"\" is shorter than 1 character\n"
        );
        assert_eq!(
            render_error(
                &ErrorCode::custom("NOT_FOUND"),
                "No note 7",
                Some(&json!({"id": 7}))
            ),
            "Error [NOT_FOUND]: No note 7\n{\n  \"id\": 7\n}\n"
        );
        assert_eq!(
            render_error(&ErrorCode::Aborted, "Tool execution aborted", None),
            "Error [ABORTED]: Tool execution aborted\n"
        );
    }
}
