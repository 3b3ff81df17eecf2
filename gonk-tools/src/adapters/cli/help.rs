//! Help text generated from a tool's schema and hints: one line per
//! argument (description, constraints, default, required) and the
//! command's epilogue (examples, how `--input` works).

use serde_json::Value;

use super::coerce::{enum_text, Shape, ValueKind};

/// Collapses a (possibly multi-line) description into one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn number_text(schema: &Value, key: &str) -> Option<String> {
    schema
        .get(key)
        .filter(|v| v.is_number())
        .map(Value::to_string)
}

/// The constraint notes of a property, e.g. `[range: 1..=20]`.
fn constraints(schema: &Value, shape: &Shape) -> Vec<String> {
    let mut notes = Vec::new();
    let lower = number_text(schema, "minimum")
        .map(|n| (n, "="))
        .or_else(|| number_text(schema, "exclusiveMinimum").map(|n| (n, "")));
    let upper = number_text(schema, "maximum")
        .map(|n| (n, "="))
        .or_else(|| number_text(schema, "exclusiveMaximum").map(|n| (n, "")));
    match (lower, upper) {
        (Some((lo, _)), Some((hi, inclusive))) => {
            notes.push(format!("range: {lo}..{inclusive}{hi}"))
        }
        (Some((lo, "=")), None) => notes.push(format!("min: {lo}")),
        (Some((lo, _)), None) => notes.push(format!("greater than: {lo}")),
        (None, Some((hi, "="))) => notes.push(format!("max: {hi}")),
        (None, Some((hi, _))) => notes.push(format!("less than: {hi}")),
        (None, None) => {}
    }
    if let Some(n) = number_text(schema, "minLength") {
        notes.push(format!("min length: {n}"));
    }
    if let Some(n) = number_text(schema, "maxLength") {
        notes.push(format!("max length: {n}"));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        notes.push(format!("pattern: {pattern}"));
    }
    if matches!(shape, Shape::Single(ValueKind::String)) {
        if let Some(format) = schema.get("format").and_then(Value::as_str) {
            notes.push(format!("format: {format}"));
        }
    }
    if let Shape::Repeated(_) = shape {
        notes.push("repeatable".to_owned());
        if let Some(n) = number_text(schema, "minItems") {
            notes.push(format!("min items: {n}"));
        }
        if let Some(n) = number_text(schema, "maxItems") {
            notes.push(format!("max items: {n}"));
        }
    }
    notes
}

/// The help line of one argument.
pub(crate) fn argument_help(schema: &Value, shape: &Shape, required: bool) -> String {
    let mut parts = Vec::new();
    if let Some(description) = schema.get("description").and_then(Value::as_str) {
        let description = one_line(description);
        if !description.is_empty() {
            parts.push(description);
        }
    } else if let Some(title) = schema.get("title").and_then(Value::as_str) {
        parts.push(one_line(title));
    }
    for note in constraints(schema, shape) {
        parts.push(format!("[{note}]"));
    }
    match schema.get("default") {
        // An empty list is what a repeatable flag means when it is absent.
        Some(Value::Array(items)) if items.is_empty() => {}
        Some(Value::String(text)) if text.is_empty() => parts.push("[default: \"\"]".to_owned()),
        Some(default) => parts.push(format!("[default: {}]", enum_text(default))),
        None => {}
    }
    if required {
        parts.push("[required]".to_owned());
    }
    parts.join(" ")
}

/// The epilogue of a tool's help: its examples hint and how the input is
/// assembled.
pub(crate) fn after_help(examples: &[String], input_only: &[String]) -> String {
    let mut text = String::new();
    let examples: Vec<&str> = examples
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect();
    if !examples.is_empty() {
        text.push_str("Examples:\n");
        for example in examples {
            text.push_str("  ");
            text.push_str(&one_line(example));
            text.push('\n');
        }
        text.push('\n');
    }
    text.push_str(
        "Input: the arguments above build the tool's JSON input; --input '<json>' gives it\n\
         whole ('-' reads it from stdin), and arguments given as well override its keys.\n\
         Use --json for JSON Lines: every event of the call, one per line on stdout.",
    );
    if !input_only.is_empty() {
        text.push_str("\nOnly settable through --input: ");
        text.push_str(&input_only.join(", "));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn argument_help_lists_description_constraints_default_and_required() {
        let schema = json!({
            "type": "integer", "description": "How many\n  hits.",
            "minimum": 1, "maximum": 20, "default": 10
        });
        assert_eq!(
            argument_help(&schema, &Shape::Single(ValueKind::Integer), true),
            "How many hits. [range: 1..=20] [default: 10] [required]"
        );
        let schema = json!({"type": "string", "minLength": 1, "format": "email"});
        assert_eq!(
            argument_help(&schema, &Shape::Single(ValueKind::String), false),
            "[min length: 1] [format: email]"
        );
        let schema = json!({"type": "array", "maxItems": 3});
        assert_eq!(
            argument_help(&schema, &Shape::Repeated(ValueKind::String), false),
            "[repeatable] [max items: 3]"
        );
        let schema = json!({"type": "number", "exclusiveMinimum": 0});
        assert_eq!(
            argument_help(&schema, &Shape::Single(ValueKind::Number), false),
            "[greater than: 0]"
        );
    }

    #[test]
    fn after_help_shows_examples_and_input_only_fields() {
        let text = after_help(&["notes x  --limit 5".into(), " ".into()], &["help".into()]);
        assert!(text.starts_with("Examples:\n  notes x --limit 5\n\n"));
        assert!(text.ends_with("Only settable through --input: help"));
    }
}
