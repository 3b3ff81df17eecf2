//! JSON Schema → the OpenAPI 3.0 subset of Gemini's `Schema` object
//! (<https://ai.google.dev/api/caching#Schema>): upper-case `type`s,
//! `nullable` instead of `null` in a type list, `anyOf` for `oneOf`, string
//! `enum`s only, no `$ref`, no `additionalProperties`, no `const`.
//!
//! Constraints Gemini lacks but that only narrow what is valid
//! (`exclusiveMinimum`, `multipleOf`, `uniqueItems`, …) are removed and
//! restated in the description (dispatch still enforces them). A schema
//! whose shape the subset cannot express — a recursive type, a map, a
//! tuple, a value of any type — is refused, and the caller falls back to
//! `parametersJsonSchema`.

use serde_json::{Map, Value};

use super::keywords::{restate, Findings, ANNOTATIONS};

/// A converted schema and what was changed on the way.
pub(crate) struct Converted {
    pub(crate) schema: Value,
    pub(crate) notes: Vec<String>,
}

/// Keywords Gemini's `Schema` takes as they are.
const KEPT: &[&str] = &[
    "title",
    "description",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "default",
];

/// Keywords whose shapes the subset cannot express.
const BLOCKING: &[&str] = &[
    "$ref",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "prefixItems",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// `format`s Gemini documents, per type.
fn format_supported(gemini_type: &str, format: &str) -> bool {
    matches!(
        (gemini_type, format),
        ("INTEGER", "int32" | "int64")
            | ("NUMBER", "float" | "double")
            | ("STRING", "enum" | "date-time")
    )
}

/// `schema` in Gemini's subset, or why it cannot be.
pub(crate) fn openapi_schema(schema: &Value) -> Result<Converted, Vec<String>> {
    let mut walk = Walk::default();
    let converted = walk.node(schema, "");
    match converted {
        Some(schema) if walk.found.blockers.is_empty() => Ok(Converted {
            schema,
            notes: walk.found.notes,
        }),
        _ => Err(walk.found.blockers),
    }
}

#[derive(Default)]
struct Walk {
    found: Findings,
}

fn gemini_type(json_type: &str) -> Option<&'static str> {
    Some(match json_type {
        "string" => "STRING",
        "integer" => "INTEGER",
        "number" => "NUMBER",
        "boolean" => "BOOLEAN",
        "array" => "ARRAY",
        "object" => "OBJECT",
        "null" => "NULL",
        _ => return None,
    })
}

impl Walk {
    fn block(&mut self, at: &str, why: impl std::fmt::Display) {
        self.found.block(at, why);
    }

    fn node(&mut self, schema: &Value, at: &str) -> Option<Value> {
        let Some(map) = schema.as_object() else {
            self.block(
                at,
                "accepts any JSON value, which Gemini's schema cannot express",
            );
            return None;
        };
        let mut out = Map::new();
        let mut restated = Vec::new();
        let mut nullable = false;
        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let non_null: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
        if types.len() != non_null.len() && !non_null.is_empty() {
            nullable = true;
        }
        match non_null.as_slice() {
            [] if types.contains(&"null") => {
                out.insert("type".into(), Value::String("NULL".into()));
            }
            [] => {}
            [single] => match gemini_type(single) {
                Some(t) => {
                    out.insert("type".into(), Value::String(t.into()));
                }
                None => self.block(at, format!("has the unknown type `{single}`")),
            },
            several => {
                // `["string", "integer"]` → one alternative per type.
                let mut alternatives = Vec::new();
                for t in several {
                    let mut alternative = map.clone();
                    alternative.insert("type".into(), Value::String((*t).to_owned()));
                    alternative.remove("description");
                    if let Some(converted) = self.node(&Value::Object(alternative), at) {
                        alternatives.push(converted);
                    }
                }
                if let Some(description) = map.get("description") {
                    out.insert("description".into(), description.clone());
                }
                out.insert("anyOf".into(), Value::Array(alternatives));
                if nullable {
                    out.insert("nullable".into(), Value::Bool(true));
                }
                return Some(Value::Object(out));
            }
        }
        let single_type = out.get("type").and_then(Value::as_str).map(str::to_owned);
        let mut alternatives: Vec<Value> = Vec::new();
        for (key, value) in map {
            match key.as_str() {
                "type" | "properties" | "required" | "items" | "additionalProperties" => {}
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                "format" => {
                    let format = value.as_str().unwrap_or_default();
                    match &single_type {
                        Some(t) if format_supported(t, format) => {
                            out.insert(key.clone(), value.clone());
                        }
                        // Integer widths (`uint32`) are already bounds.
                        Some(t) if t == "STRING" => restated.push(format!("format: {format}")),
                        _ => {}
                    }
                }
                "enum" => {
                    let values = value.as_array().cloned().unwrap_or_default();
                    let strings: Vec<Value> =
                        values.iter().filter(|v| v.is_string()).cloned().collect();
                    if values.iter().any(Value::is_null) {
                        nullable = true;
                    }
                    if strings.len() + usize::from(values.iter().any(Value::is_null))
                        != values.len()
                    {
                        self.block(
                            at,
                            "has an enum of non-string values; Gemini enums are strings",
                        );
                    } else {
                        out.insert("enum".into(), Value::Array(strings));
                        out.entry("type")
                            .or_insert_with(|| Value::String("STRING".into()));
                    }
                }
                "const" => match value {
                    Value::String(_) => {
                        out.insert("enum".into(), Value::Array(vec![value.clone()]));
                        out.entry("type")
                            .or_insert_with(|| Value::String("STRING".into()));
                    }
                    _ => self.block(
                        at,
                        "has a non-string `const`, which Gemini's schema cannot express",
                    ),
                },
                "anyOf" | "oneOf" => {
                    for (i, alternative) in value.as_array().into_iter().flatten().enumerate() {
                        let is_null = alternative.get("type").and_then(Value::as_str)
                            == Some("null")
                            && alternative.as_object().is_some_and(|a| a.len() == 1);
                        if is_null {
                            nullable = true;
                            continue;
                        }
                        if let Some(converted) = self.node(alternative, &format!("{at}/{key}[{i}]"))
                        {
                            alternatives.push(converted);
                        }
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" | "uniqueItems" => {
                    restated.push(match key.as_str() {
                        "exclusiveMinimum" => format!("greater than {value}"),
                        "exclusiveMaximum" => format!("less than {value}"),
                        "multipleOf" => format!("a multiple of {value}"),
                        _ => "items must be unique".into(),
                    });
                    self.found.note(at, format!("`{key}` is not in Gemini's schema; it is stated in the description and still enforced"));
                }
                k if ANNOTATIONS.contains(&k) || k == "$defs" => {}
                k if BLOCKING.contains(&k) => {
                    let why = if k == "$ref" {
                        "refers to itself (a recursive type), which Gemini's schema cannot express"
                            .to_owned()
                    } else {
                        format!("uses `{k}`, which Gemini's schema does not support")
                    };
                    self.block(at, why);
                }
                k => self.found.note(
                    at,
                    format!("dropped `{k}`, which Gemini's schema does not support"),
                ),
            }
        }
        let is_object = single_type.as_deref() == Some("OBJECT") || map.contains_key("properties");
        if is_object {
            self.object(map, &mut out, at);
        }
        if single_type.as_deref() == Some("ARRAY") {
            match map.get("items") {
                Some(items) => {
                    if let Some(items) = self.node(items, &format!("{at}/*")) {
                        out.insert("items".into(), items);
                    }
                }
                None => self.block(
                    at,
                    "is an array of any values, which Gemini's schema cannot express",
                ),
            }
        }
        if !alternatives.is_empty() {
            out.insert("anyOf".into(), Value::Array(alternatives));
        }
        if !out.contains_key("type") && !out.contains_key("anyOf") {
            self.block(
                at,
                "accepts any JSON value, which Gemini's schema cannot express",
            );
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        restate(&mut out, &restated);
        Some(Value::Object(out))
    }

    fn object(&mut self, map: &Map<String, Value>, out: &mut Map<String, Value>, at: &str) {
        out.entry("type")
            .or_insert_with(|| Value::String("OBJECT".into()));
        match map.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {}
            Some(_) => {
                self.block(
                    at,
                    "is a map (additionalProperties), which Gemini's schema cannot express",
                );
                return;
            }
        }
        let Some(properties) = map.get("properties").and_then(Value::as_object) else {
            if !at.is_empty() {
                self.block(
                    at,
                    "accepts any object, which Gemini's schema cannot express",
                );
            }
            out.insert("properties".into(), Value::Object(Map::new()));
            return;
        };
        let mut converted = Map::new();
        for (name, property) in properties {
            if let Some(property) = self.node(property, &format!("{at}/{name}")) {
                converted.insert(name.clone(), property);
            }
        }
        out.insert("properties".into(), Value::Object(converted));
        if let Some(required) = map.get("required").and_then(Value::as_array) {
            if !required.is_empty() {
                out.insert("required".into(), Value::Array(required.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_upper_case_nullable_and_unions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "Text."},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 1, "exclusiveMaximum": 21},
                "mode": {"oneOf": [{"const": "a", "type": "string"}, {"const": "b", "type": "string"}]},
                "strict": {"type": "boolean", "default": false}
            },
            "required": ["query"],
            "additionalProperties": false
        });
        let converted = openapi_schema(&schema).unwrap();
        assert_eq!(
            converted.schema,
            json!({
                "type": "OBJECT",
                "properties": {
                    "query": {"type": "STRING", "minLength": 1, "description": "Text."},
                    "limit": {"type": "INTEGER", "minimum": 1, "nullable": true, "description": "(less than 21)"},
                    "mode": {"anyOf": [{"type": "STRING", "enum": ["a"]}, {"type": "STRING", "enum": ["b"]}]},
                    "strict": {"type": "BOOLEAN", "default": false}
                },
                "required": ["query"]
            })
        );
        assert_eq!(converted.notes.len(), 1, "{:?}", converted.notes);
    }

    #[test]
    fn shapes_the_subset_cannot_express_are_refused() {
        let cases = [
            (
                json!({"type": "object", "properties": {"c": {"type": "array", "items": {"$ref": "#"}}}}),
                "/c/*: refers to itself",
            ),
            (
                json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}}),
                "/m: is a map",
            ),
            (
                json!({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "integer"}], "items": false}}}),
                "/t: uses `prefixItems`",
            ),
            (
                json!({"type": "object", "properties": {"v": {}}}),
                "/v: accepts any JSON value",
            ),
            (
                json!({"type": "object", "properties": {"n": {"enum": [1, 2]}}}),
                "/n: has an enum of non-string values",
            ),
        ];
        for (schema, expected) in cases {
            let blockers = openapi_schema(&schema)
                .err()
                .unwrap_or_else(|| panic!("{schema} should be refused"));
            assert!(
                blockers.iter().any(|b| b.contains(expected)),
                "{blockers:?} should mention {expected}"
            );
        }
    }
}
