//! Writing to stdout and stderr. On a terminal, control characters in the
//! text — which may come from stored data (a note's title, a tool's
//! message) or argv — are shown escaped (`\u{1b}`, `\r`) instead of being
//! sent raw: a raw ESC could recolour, retitle or rewrite the user's
//! terminal, a raw CR overwrite what was printed, a bidi override reorder
//! it. Newlines and tabs pass. Piped output is written unchanged.
//!
//! Writes ignore I/O errors: a closed pipe (`tool | head -1`) must not turn
//! into a panic.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};

/// Whether `c` must not reach a terminal raw: C0 controls other than
/// newline and tab, DEL, C1 controls, and the bidirectional formatting
/// characters.
fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character escaped (`\r`, else `\u{hex}`).
pub(crate) fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A line of JSON with the unsafe characters JSON leaves raw (C1 controls,
/// DEL, bidi formatting) written as `\uXXXX` escapes: the same JSON value,
/// safe on a terminal. (serde_json already escapes C0 controls, and such
/// characters only occur inside strings.)
pub(crate) fn escape_json(line: &str) -> Cow<'_, str> {
    if !line.chars().any(is_unsafe) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Writes `text` to `stream`, through `escape` when it is a terminal.
fn write<S>(stream: S, text: &str, escape: fn(&str) -> Cow<'_, str>)
where
    S: IsTerminal + Write,
{
    let text = if stream.is_terminal() {
        escape(text)
    } else {
        Cow::Borrowed(text)
    };
    let mut stream = stream;
    let _ = stream.write_all(text.as_bytes());
    let _ = stream.flush();
}

/// Writes human-readable text to stdout.
pub(crate) fn stdout(text: &str) {
    write(std::io::stdout().lock(), text, escape_controls);
}

/// Writes human-readable text to stderr.
pub(crate) fn stderr(text: &str) {
    write(std::io::stderr().lock(), text, escape_controls);
}

/// Writes a line of JSON to stdout.
pub(crate) fn stdout_json(line: &str) {
    write(std::io::stdout().lock(), line, escape_json);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_text_is_kept() {
        assert_eq!(
            escape_controls("plain\ttext\nnext line — ünïcødé"),
            "plain\ttext\nnext line — ünïcødé"
        );
        assert_eq!(
            escape_controls("\u{1b}[31mred\u{1b}]0;title\u{7}"),
            "\\u{1b}[31mred\\u{1b}]0;title\\u{7}"
        );
        assert_eq!(escape_controls("over\rwrite"), "over\\rwrite");
        assert_eq!(
            escape_controls("c1 \u{9b}2J del \u{7f}"),
            "c1 \\u{9b}2J del \\u{7f}"
        );
        assert_eq!(escape_controls("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape_controls("nul\u{0}"), "nul\\u{0}");
    }

    #[test]
    fn json_lines_stay_the_same_json() {
        let value = serde_json::json!({"title": "a\u{9b}b\u{202e}c\u{1b}d\u{7f}"});
        let line = serde_json::to_string(&value).unwrap();
        let escaped = escape_json(&line);
        assert!(!escaped.chars().any(is_unsafe), "{escaped}");
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back, value);
    }
}
