//! Plain text of displays and errors: what a terminal prints and what a
//! model reads in a tool result (the command line and the model-provider
//! projections render through here, so both say the same thing).

use serde_json::Value;

use crate::error::{ErrorCode, ValidationIssue};
use crate::event::{DisplayBlock, ResourceContents, ToolDisplay};

/// `value` as indented JSON.
pub(crate) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// One display block as text: markdown as it is, code fenced, JSON
/// indented, links as `title: url`, media as a bracketed placeholder.
pub fn block_text(block: &DisplayBlock) -> String {
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

/// A display as text: the string, or its blocks one after another.
pub fn display_text(display: &ToolDisplay) -> String {
    match display {
        ToolDisplay::Text(text) => text.clone(),
        ToolDisplay::Blocks(blocks) => blocks.iter().map(block_text).collect::<Vec<_>>().join("\n"),
    }
}

/// An error as text: `Error [CODE]: message`, then the details —
/// validation issues one per line (`  /path: message`), anything else as
/// indented JSON.
pub fn error_text(code: &ErrorCode, message: &str, details: Option<&Value>) -> String {
    let mut text = format!("Error [{code}]: {message}");
    let Some(details) = details else {
        return text;
    };
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
                text.push_str(&format!("\n  {path}: {}", issue.message));
            }
        }
        _ => {
            text.push('\n');
            text.push_str(&pretty(details));
        }
    }
    text
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
            display_text(&ToolDisplay::Blocks(blocks)),
            "plain\n# Title\n```rust\nfn main() {}\n```\n{\n  \"a\": 1\n}\nNote 1: https://example.invalid/n/1\n[image image/png — a chart]"
        );
        assert_eq!(display_text(&"done".into()), "done");
    }

    #[test]
    fn errors_show_code_message_and_details() {
        let issues = json!([{"path": "/query", "message": "\"\" is shorter than 1 character"}]);
        assert_eq!(
            error_text(&ErrorCode::InvalidInput, "Input validation failed", Some(&issues)),
            "Error [INVALID_INPUT]: Input validation failed\n  /query: \"\" is shorter than 1 character"
        );
        assert_eq!(
            error_text(
                &ErrorCode::custom("NOT_FOUND"),
                "No note 7",
                Some(&json!({"id": 7}))
            ),
            "Error [NOT_FOUND]: No note 7\n{\n  \"id\": 7\n}"
        );
        assert_eq!(
            error_text(&ErrorCode::Aborted, "Tool execution aborted", None),
            "Error [ABORTED]: Tool execution aborted"
        );
    }
}
