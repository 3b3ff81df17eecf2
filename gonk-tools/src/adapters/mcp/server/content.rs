//! `tools/call` results: a call's outcome as an MCP [`CallToolResult`], and
//! back (for the client transport).

use rmcp::model::{CallToolResult, ContentBlock, MetaObject, ResourceContents as McpResource};
use serde_json::{json, Map, Value};

use crate::error::{ErrorCode, ToolError};
use crate::event::ToolOutput;
use crate::event::{DisplayBlock, ResourceContents, ToolDisplay};

/// `_meta` key carrying non-object data next to a display, so the client
/// transport gets the data back losslessly.
pub(crate) const DATA_META_KEY: &str = "gonk-tools/data";

fn caption_prefix(caption: &Option<String>) -> String {
    caption
        .as_ref()
        .map(|c| format!("{c}\n"))
        .unwrap_or_default()
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// One display block as MCP content.
pub(crate) fn block_to_content(block: &DisplayBlock) -> ContentBlock {
    match block {
        DisplayBlock::Text { text } | DisplayBlock::Markdown { text } => ContentBlock::text(text),
        DisplayBlock::Code {
            language,
            code,
            caption,
        } => ContentBlock::text(format!(
            "{}```{language}\n{code}\n```",
            caption_prefix(caption)
        )),
        DisplayBlock::Json { value, caption } => {
            ContentBlock::text(format!("{}{}", caption_prefix(caption), pretty(value)))
        }
        DisplayBlock::Image {
            mime_type, data, ..
        } => ContentBlock::image(data, mime_type),
        DisplayBlock::Audio { mime_type, data } => ContentBlock::audio(data, mime_type),
        DisplayBlock::Link { url, title } => ContentBlock::text(match title {
            Some(title) => format!("{title}: {url}"),
            None => url.clone(),
        }),
        DisplayBlock::Resource {
            uri,
            mime_type,
            contents,
        } => {
            let resource = match contents {
                ResourceContents::Text { text } => McpResource::text(text, uri),
                ResourceContents::Blob { blob } => McpResource::blob(blob, uri),
            };
            let resource = match mime_type {
                Some(mime) => resource.with_mime_type(mime),
                None => resource,
            };
            ContentBlock::resource(resource)
        }
    }
}

/// A display as MCP content.
pub(crate) fn display_to_content(display: &ToolDisplay) -> Vec<ContentBlock> {
    match display {
        ToolDisplay::Text(text) => vec![ContentBlock::text(text)],
        ToolDisplay::Blocks(blocks) => blocks.iter().map(block_to_content).collect(),
    }
}

/// A successful outcome: display → content (or one text block holding the
/// JSON data), object data → `structuredContent`.
pub(crate) fn success_result(output: ToolOutput<Value>) -> CallToolResult {
    let ToolOutput { data, display } = output;
    let content = match &display {
        Some(display) => display_to_content(display),
        None => vec![ContentBlock::text(
            serde_json::to_string(&data).unwrap_or_else(|_| data.to_string()),
        )],
    };
    let mut result = CallToolResult::success(content);
    if data.is_object() {
        result.structured_content = Some(data);
    } else if display.is_some() {
        let mut meta = Map::new();
        meta.insert(DATA_META_KEY.to_owned(), data);
        result.meta = Some(MetaObject(meta));
    }
    result
}

/// `_meta` key carrying the error object of a tool that advertises an
/// output schema (see [`error_result`]).
pub(crate) const ERROR_META_KEY: &str = "gonk-tools/error";

/// Where the error object of an `isError` result goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorPlacement {
    /// `structuredContent.error` (tools without an output schema).
    Structured,
    /// `_meta["gonk-tools/error"]`: the tool advertises an output schema,
    /// and MCP clients (the TypeScript SDK) validate any `structuredContent`
    /// against it, error results included.
    Meta,
}

/// A failed outcome: an `isError` result with `"Error [CODE]: message"`
/// as text (and the details, as pretty JSON, in a second text item), and
/// the error object
/// `{error: {code, message, details?}}` as `structuredContent` (or, for a
/// tool with an output schema, in `_meta`).
pub(crate) fn error_result(error: &ToolError, placement: ErrorPlacement) -> CallToolResult {
    // The message, then the details as a text item of their own, so a
    // client shows them apart.
    let mut content = vec![ContentBlock::text(format!(
        "Error [{}]: {}",
        error.code, error.message
    ))];
    if let Some(details) = &error.details {
        content.push(ContentBlock::text(pretty(details)));
    }
    let mut body = Map::new();
    body.insert("code".into(), Value::String(error.code.as_str().to_owned()));
    body.insert("message".into(), Value::String(error.message.clone()));
    if let Some(details) = &error.details {
        body.insert("details".into(), details.clone());
    }
    let mut result = CallToolResult::error(content);
    match placement {
        ErrorPlacement::Structured => result.structured_content = Some(json!({ "error": body })),
        ErrorPlacement::Meta => {
            let mut meta = Map::new();
            meta.insert(ERROR_META_KEY.to_owned(), Value::Object(body));
            result.meta = Some(MetaObject(meta));
        }
    }
    result
}

/// Parses `"Error [CODE]: message"`, the text of an error result (and
/// `"…\n{details}"`, as other servers may send the details).
fn parse_error_text(text: &str) -> Option<ToolError> {
    let rest = text.strip_prefix("Error [")?;
    let (code, rest) = rest.split_once("]: ")?;
    let (message, details) = match rest.split_once('\n') {
        Some((message, details)) => (message, serde_json::from_str(details).ok()),
        None => (rest, None),
    };
    Some(ToolError {
        code: ErrorCode::parse(code),
        message: message.to_owned(),
        details,
    })
}

/// The one answer for a missing, hidden or withheld tool.
pub(crate) fn unknown_tool(name: &str) -> ToolError {
    ToolError::new(ErrorCode::ToolNotFound, format!("Unknown tool: {name}"))
}

fn content_to_block(content: &ContentBlock) -> Option<DisplayBlock> {
    Some(match content {
        ContentBlock::Text(text) => DisplayBlock::Text {
            text: text.text.clone(),
        },
        ContentBlock::Image(image) => DisplayBlock::Image {
            mime_type: image.mime_type.clone(),
            data: image.data.clone(),
            alt: None,
        },
        ContentBlock::Audio(audio) => DisplayBlock::Audio {
            mime_type: audio.mime_type.clone(),
            data: audio.data.clone(),
        },
        ContentBlock::Resource(embedded) => match &embedded.resource {
            McpResource::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => DisplayBlock::Resource {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                contents: ResourceContents::Text { text: text.clone() },
            },
            McpResource::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => DisplayBlock::Resource {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                contents: ResourceContents::Blob { blob: blob.clone() },
            },
            _ => return None,
        },
        ContentBlock::ResourceLink(link) => DisplayBlock::Link {
            url: link.uri.clone(),
            title: Some(link.name.clone()),
        },
        _ => return None,
    })
}

fn first_text(result: &CallToolResult) -> Option<&str> {
    result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.as_str()))
}

/// A `tools/call` result as a call outcome (the client transport's view):
/// `isError` results give the `structuredContent.error` (or the text as an
/// `INTERNAL` error); success gives the structured content, the data from
/// `_meta`, or the text parsed as JSON (else the text itself).
pub(crate) fn result_to_outcome(result: CallToolResult) -> Result<ToolOutput<Value>, ToolError> {
    if result.is_error == Some(true) {
        let structured = result
            .structured_content
            .as_ref()
            .and_then(|s| s.get("error"));
        let meta = result.meta.as_ref().and_then(|m| m.0.get(ERROR_META_KEY));
        if let Some(error) = structured.or(meta) {
            if let (Some(code), Some(message)) = (
                error.get("code").and_then(Value::as_str),
                error.get("message").and_then(Value::as_str),
            ) {
                return Err(ToolError {
                    code: ErrorCode::parse(code),
                    message: message.to_owned(),
                    details: error.get("details").cloned(),
                });
            }
        }
        let message = first_text(&result).unwrap_or("the tool reported an error without a message");
        let mut error =
            parse_error_text(message).unwrap_or_else(|| ToolError::internal(message.to_owned()));
        // The details as a second text item (how this crate's servers send them).
        if error.details.is_none() {
            error.details = result
                .content
                .iter()
                .filter_map(|c| c.as_text())
                .nth(1)
                .and_then(|t| serde_json::from_str(&t.text).ok());
        }
        return Err(error);
    }
    let blocks: Vec<DisplayBlock> = result.content.iter().filter_map(content_to_block).collect();
    let meta_data = result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(DATA_META_KEY))
        .cloned();
    let (data, display) = match (result.structured_content, meta_data) {
        (Some(data), _) | (None, Some(data)) => {
            let echo = serde_json::to_string(&data).ok();
            let only_echo =
                matches!(&blocks[..], [DisplayBlock::Text { text }] if Some(text) == echo.as_ref());
            let display = (!only_echo && !blocks.is_empty()).then_some(ToolDisplay::Blocks(blocks));
            (data, display)
        }
        (None, None) => {
            let text = first_text_of(&blocks);
            let data = match text {
                Some(text) => {
                    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
                }
                None => Value::Null,
            };
            let only_text = matches!(&blocks[..], [DisplayBlock::Text { .. }]);
            let display = (!only_text && !blocks.is_empty()).then_some(ToolDisplay::Blocks(blocks));
            (data, display)
        }
    };
    Ok(ToolOutput { data, display })
}

fn first_text_of(blocks: &[DisplayBlock]) -> Option<&str> {
    blocks.iter().find_map(|b| match b {
        DisplayBlock::Text { text } => Some(text.as_str()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_map_to_content() {
        let display = ToolDisplay::Blocks(vec![
            DisplayBlock::Markdown {
                text: "# Hi".into(),
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
                url: "https://example.invalid".into(),
                title: Some("Docs".into()),
            },
        ]);
        let content = serde_json::to_value(display_to_content(&display)).unwrap();
        assert_eq!(
            content,
            json!([
                {"type": "text", "text": "# Hi"},
                {"type": "text", "text": "```rust\nfn main() {}\n```"},
                {"type": "text", "text": "{\n  \"a\": 1\n}"},
                {"type": "text", "text": "Docs: https://example.invalid"},
            ])
        );
    }

    #[test]
    fn errors_carry_code_message_and_details() {
        let error = ToolError::new(ErrorCode::InvalidInput, "Input validation failed")
            .with_details(json!([{"path": "/query", "message": "too short"}]));
        let result =
            serde_json::to_value(error_result(&error, ErrorPlacement::Structured)).unwrap();
        assert_eq!(result["isError"], true);
        // The message, then the details as a second text item.
        assert_eq!(
            result["content"],
            json!([
                {"type": "text", "text": "Error [INVALID_INPUT]: Input validation failed"},
                {"type": "text", "text": "[\n  {\n    \"message\": \"too short\",\n    \"path\": \"/query\"\n  }\n]"},
            ])
        );
        assert_eq!(
            result["structuredContent"]["error"]["code"],
            "INVALID_INPUT"
        );
        assert_eq!(
            result["structuredContent"]["error"]["details"][0]["path"],
            "/query"
        );
        assert_eq!(
            result_to_outcome(error_result(&error, ErrorPlacement::Structured)).unwrap_err(),
            error
        );
        let meta = error_result(&error, ErrorPlacement::Meta);
        assert!(meta.structured_content.is_none());
        assert_eq!(result_to_outcome(meta).unwrap_err(), error);
        let mut text_only = error_result(&error, ErrorPlacement::Meta);
        text_only.meta = None;
        assert_eq!(result_to_outcome(text_only).unwrap_err(), error);
    }

    #[test]
    fn data_round_trips_through_a_result() {
        let object = ToolOutput::new(json!({"id": 7}));
        assert_eq!(
            result_to_outcome(success_result(object.clone())).unwrap(),
            object
        );
        let list = ToolOutput::new(json!([1, 2])).with_display("two numbers");
        assert_eq!(
            result_to_outcome(success_result(list.clone())).unwrap(),
            ToolOutput {
                data: json!([1, 2]),
                display: Some(ToolDisplay::Blocks(vec![DisplayBlock::Text {
                    text: "two numbers".into()
                }])),
            }
        );
        let number = ToolOutput::new(json!(5));
        assert_eq!(
            result_to_outcome(success_result(number.clone())).unwrap(),
            number
        );
    }
}
