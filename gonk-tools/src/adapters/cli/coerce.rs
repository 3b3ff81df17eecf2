//! Coercion: what kind of value a schema property holds, and how one argv
//! word becomes that JSON value.
//!
//! Coercion only turns text into the JSON type the schema names; every
//! constraint (ranges, lengths, patterns, required fields) is left to the
//! dispatch path, which validates the assembled input against the very
//! schema it advertises.

use serde_json::{Map, Number, Value};

/// The JSON kind of a single flag or positional value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ValueKind {
    /// Any text.
    String,
    /// A whole number (`i64` or `u64`).
    Integer,
    /// Any finite number.
    Number,
    /// `true`/`false` (also `yes`/`no`, `on`/`off`, `1`/`0`).
    Boolean,
    /// One of a fixed set of JSON values; matched by their text form.
    Enum(Vec<Value>),
    /// A JSON document (objects, nested arrays).
    Json,
    /// No single type: JSON when the text parses as JSON, else a string.
    Any,
}

/// How a property is taken from argv.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shape {
    /// One value.
    Single(ValueKind),
    /// An array: the flag is repeated, one item per occurrence.
    Repeated(ValueKind),
}

impl ValueKind {
    /// The placeholder shown in help (`<INTEGER>`).
    pub(crate) fn value_name(&self) -> &'static str {
        match self {
            ValueKind::String => "STRING",
            ValueKind::Integer => "INTEGER",
            ValueKind::Number => "NUMBER",
            ValueKind::Boolean => "BOOL",
            ValueKind::Enum(_) => "VALUE",
            ValueKind::Json => "JSON",
            ValueKind::Any => "VALUE",
        }
    }
}

/// The text by which an enum value is typed on the command line: strings
/// as they are, anything else as compact JSON.
pub(crate) fn enum_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn schema_types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The fixed values a schema allows, when it is an enum: `enum`, `const`,
/// or a `oneOf`/`anyOf` whose every branch is one of those.
fn enum_values(schema: &Map<String, Value>) -> Option<Vec<Value>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        let values: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
        return (!values.is_empty()).then_some(values);
    }
    if let Some(value) = schema.get("const") {
        return (!value.is_null()).then(|| vec![value.clone()]);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            let mut all = Vec::new();
            for branch in branches {
                let branch = branch.as_object()?;
                if schema_types(branch) == ["null"] {
                    continue;
                }
                all.extend(enum_values(branch)?);
            }
            return (!all.is_empty()).then_some(all);
        }
    }
    None
}

/// The kind of one (non-array) value.
fn single_kind(schema: &Map<String, Value>) -> ValueKind {
    if let Some(values) = enum_values(schema) {
        return ValueKind::Enum(values);
    }
    let types: Vec<&str> = schema_types(schema)
        .into_iter()
        .filter(|t| *t != "null")
        .collect();
    match types.as_slice() {
        ["string"] => ValueKind::String,
        ["integer"] => ValueKind::Integer,
        ["number"] => ValueKind::Number,
        ["boolean"] => ValueKind::Boolean,
        ["object"] | ["array"] => ValueKind::Json,
        _ => ValueKind::Any,
    }
}

/// How the property described by `schema` is taken from argv.
pub(crate) fn shape_of(schema: &Value) -> Shape {
    let Some(schema) = schema.as_object() else {
        return Shape::Single(ValueKind::Any);
    };
    let types: Vec<&str> = schema_types(schema)
        .into_iter()
        .filter(|t| *t != "null")
        .collect();
    if types == ["array"] && enum_values(schema).is_none() {
        let item = match schema.get("items") {
            Some(Value::Object(items)) => match single_kind(items) {
                // Arrays of arrays take one JSON document per occurrence.
                ValueKind::Json => ValueKind::Json,
                kind => kind,
            },
            _ => ValueKind::Any,
        };
        return Shape::Repeated(item);
    }
    Shape::Single(single_kind(schema))
}

/// Turns one argv word into a JSON value of `kind`. The error says what was
/// expected; clap adds which argument it was.
pub(crate) fn coerce(kind: &ValueKind, text: &str) -> Result<Value, String> {
    match kind {
        ValueKind::String => Ok(Value::String(text.to_owned())),
        ValueKind::Integer => parse_integer(text)
            .map(Value::Number)
            .ok_or_else(|| format!("expected an integer, got `{text}`")),
        ValueKind::Number => parse_number(text)
            .map(Value::Number)
            .ok_or_else(|| format!("expected a number, got `{text}`")),
        ValueKind::Boolean => parse_bool(text)
            .map(Value::Bool)
            .ok_or_else(|| format!("expected true or false, got `{text}`")),
        ValueKind::Enum(values) => values
            .iter()
            .find(|v| enum_text(v) == text)
            .cloned()
            .ok_or_else(|| {
                let allowed: Vec<String> = values.iter().map(enum_text).collect();
                format!("expected one of {}, got `{text}`", allowed.join(", "))
            }),
        ValueKind::Json => {
            serde_json::from_str(text).map_err(|e| format!("expected JSON ({e}), got `{text}`"))
        }
        ValueKind::Any => {
            Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())))
        }
    }
}

fn parse_integer(text: &str) -> Option<Number> {
    let text = text.trim();
    if let Ok(n) = text.parse::<i64>() {
        return Some(n.into());
    }
    text.parse::<u64>().ok().map(Number::from)
}

fn parse_number(text: &str) -> Option<Number> {
    if let Some(n) = parse_integer(text) {
        return Some(n);
    }
    let f = text.trim().parse::<f64>().ok()?;
    // `inf`, `NaN`: not JSON numbers.
    Number::from_f64(f)
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_follow_the_schema_type() {
        assert_eq!(
            shape_of(&json!({"type": "integer", "minimum": 1})),
            Shape::Single(ValueKind::Integer)
        );
        assert_eq!(
            shape_of(&json!({"type": ["number", "null"]})),
            Shape::Single(ValueKind::Number)
        );
        assert_eq!(
            shape_of(&json!({"type": "boolean"})),
            Shape::Single(ValueKind::Boolean)
        );
        assert_eq!(
            shape_of(&json!({"type": "array", "items": {"type": "string"}})),
            Shape::Repeated(ValueKind::String)
        );
        assert_eq!(
            shape_of(&json!({"type": "array", "items": {"type": "array"}})),
            Shape::Repeated(ValueKind::Json)
        );
        assert_eq!(
            shape_of(&json!({"type": "object"})),
            Shape::Single(ValueKind::Json)
        );
        assert_eq!(shape_of(&json!({})), Shape::Single(ValueKind::Any));
        assert_eq!(shape_of(&json!(true)), Shape::Single(ValueKind::Any));
    }

    #[test]
    fn enums_come_from_enum_const_and_one_of() {
        assert_eq!(
            shape_of(&json!({"type": "string", "enum": ["a", "b", null]})),
            Shape::Single(ValueKind::Enum(vec![json!("a"), json!("b")]))
        );
        assert_eq!(
            shape_of(&json!({"oneOf": [
                {"type": "string", "const": "asc", "description": "Oldest first"},
                {"type": "string", "const": "desc"}
            ]})),
            Shape::Single(ValueKind::Enum(vec![json!("asc"), json!("desc")]))
        );
        // A oneOf with a non-const branch is not an enum.
        assert_eq!(
            shape_of(&json!({"oneOf": [{"const": "x"}, {"type": "integer"}]})),
            Shape::Single(ValueKind::Any)
        );
    }

    #[test]
    fn coercion_produces_the_named_json_type() {
        assert_eq!(coerce(&ValueKind::Integer, "42"), Ok(json!(42)));
        assert_eq!(
            coerce(&ValueKind::Integer, "18446744073709551615"),
            Ok(json!(18446744073709551615u64))
        );
        assert!(coerce(&ValueKind::Integer, "4.2").is_err());
        assert_eq!(coerce(&ValueKind::Number, "4.5"), Ok(json!(4.5)));
        assert_eq!(coerce(&ValueKind::Number, "3"), Ok(json!(3)));
        assert!(coerce(&ValueKind::Number, "NaN").is_err());
        assert!(coerce(&ValueKind::Number, "inf").is_err());
        assert_eq!(coerce(&ValueKind::Boolean, "no"), Ok(json!(false)));
        assert!(coerce(&ValueKind::Boolean, "maybe").is_err());
        assert_eq!(coerce(&ValueKind::String, "42"), Ok(json!("42")));
        assert_eq!(
            coerce(&ValueKind::Enum(vec![json!(1), json!("two")]), "1"),
            Ok(json!(1))
        );
        assert!(coerce(&ValueKind::Enum(vec![json!("a")]), "b")
            .unwrap_err()
            .contains("expected one of a"));
        assert_eq!(coerce(&ValueKind::Json, r#"{"a":1}"#), Ok(json!({"a": 1})));
        assert!(coerce(&ValueKind::Json, "{").is_err());
        assert_eq!(coerce(&ValueKind::Any, "7"), Ok(json!(7)));
        assert_eq!(coerce(&ValueKind::Any, "seven"), Ok(json!("seven")));
    }
}
