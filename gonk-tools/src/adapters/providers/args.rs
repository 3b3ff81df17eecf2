//! Arguments as models write them → the input dispatch validates.
//!
//! Strict projections make every optional field required-but-nullable, so a
//! model that means "absent" sends `null`; our schemas (and serde's
//! `Option`) mean absent by leaving the key out. Reading `null` as absent —
//! only where the original schema makes the field optional and does not
//! accept `null` itself — keeps "the projection accepts exactly what
//! dispatch accepts" true without loosening the enforced schema.

use serde_json::{Map, Value};

use crate::context::ToolContext;
use crate::definition::ToolDefinition;
use crate::error::{ToolError, ValidationIssue};
use crate::event::{collect_tool_outcome, ToolOutput};
use crate::registry::ToolRegistry;
use crate::schema::{wrap_non_object, WRAPPED_INPUT_KEY};

/// Arguments sent as a JSON string: `""` means none (`null`), anything
/// else must parse.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(text)
        .map_err(|e| format!("the arguments are not valid JSON ({e}): {text}"))
}

/// Runs registry tool `tool` with `arguments` as a model sent them (or
/// why they could not be read) through dispatch, and collects the outcome.
pub(crate) async fn run(
    registry: &ToolRegistry,
    tool: &str,
    arguments: Result<Value, String>,
    ctx: ToolContext,
) -> Result<ToolOutput<Value>, ToolError> {
    let arguments = arguments.map_err(|problem| unreadable(&problem))?;
    let input = match registry.get(tool) {
        Some(def) => prepare(&def, arguments),
        // Removed meanwhile: dispatch answers TOOL_NOT_FOUND.
        None => arguments,
    };
    collect_tool_outcome(registry.invoke(tool, input, ctx), |_| {}).await
}

/// `INVALID_INPUT` for arguments that could not be read at all.
pub(crate) fn unreadable(problem: &str) -> ToolError {
    ToolError::invalid_input(vec![ValidationIssue {
        path: String::new(),
        message: problem.to_owned(),
    }])
}

/// The input to dispatch for `arguments` sent to `def`: unwrapped from
/// `{"value": …}` for a non-object input, `null` read as `{}` for an object
/// input, and `null` optional fields removed.
pub(crate) fn prepare(def: &ToolDefinition, arguments: Value) -> Value {
    let schema = def.effective_input_schema();
    let mut input = if wrap_non_object(schema).is_some() {
        match arguments {
            Value::Object(mut map) if map.len() == 1 && map.contains_key(WRAPPED_INPUT_KEY) => {
                map.remove(WRAPPED_INPUT_KEY).unwrap_or(Value::Null)
            }
            other => other,
        }
    } else if arguments.is_null() {
        Value::Object(Map::new())
    } else {
        arguments
    };
    strip_optional_nulls(&mut input, schema, schema, 0);
    input
}

/// How deep `$ref`s are followed; values nest no deeper in practice, and
/// the limit keeps a pathological schema from recursing forever.
const MAX_DEPTH: usize = 64;

/// Follows a local `$ref` (`#` or `#/$defs/Name`).
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some("#") => root,
        Some(reference) => reference
            .strip_prefix("#/$defs/")
            .and_then(|name| root.get("$defs")?.get(name))
            .unwrap_or(schema),
        None => schema,
    }
}

/// Whether `schema` lets `null` through (a `null` type, a `null` in an
/// enum or const, or no type constraint at all).
fn accepts_null(schema: &Value, root: &Value) -> bool {
    let schema = resolve(schema, root);
    let Some(map) = schema.as_object() else {
        return schema.as_bool() == Some(true);
    };
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return values.iter().any(Value::is_null);
    }
    if let Some(value) = map.get("const") {
        return value.is_null();
    }
    match map.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(_) => false,
        None => ["anyOf", "oneOf"].iter().all(|key| {
            map.get(*key)
                .and_then(Value::as_array)
                .is_none_or(|alternatives| alternatives.iter().any(|a| accepts_null(a, root)))
        }),
    }
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn is_required(schema: &Value, key: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|required| required.iter().any(|r| r == key))
}

/// Removes `null` members that `schema` makes optional and that do not
/// accept `null`, recursively through properties, items, maps and the
/// alternative of a union the value's keys match.
fn strip_optional_nulls(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = resolve(schema, root);
    match value {
        Value::Object(members) => {
            if let Some(alternative) = matching_alternative(members, schema) {
                strip_optional_nulls(value, alternative, root, depth + 1);
                return;
            }
            let props = properties(schema);
            let extra = schema.get("additionalProperties").filter(|s| s.is_object());
            members.retain(|key, member| {
                let Some(prop) = props.and_then(|p| p.get(key)) else {
                    return true;
                };
                !(member.is_null() && !is_required(schema, key) && !accepts_null(prop, root))
            });
            for (key, member) in members.iter_mut() {
                if let Some(sub) = props.and_then(|p| p.get(key)).or(extra) {
                    strip_optional_nulls(member, sub, root, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            let prefix = schema.get("prefixItems").and_then(Value::as_array);
            let rest = schema.get("items");
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(sub) = prefix.and_then(|p| p.get(i)).or(rest) {
                    strip_optional_nulls(item, sub, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// For a union schema (`anyOf` / `oneOf`): the first object alternative
/// that declares every non-null key of the value (how a serde enum's
/// variants tell themselves apart).
fn matching_alternative<'a>(members: &Map<String, Value>, schema: &'a Value) -> Option<&'a Value> {
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .find(|alternative| {
            properties(alternative).is_some_and(|props| {
                members
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .all(|(k, _)| props.contains_key(k))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strip(mut value: Value, schema: Value) -> Value {
        strip_optional_nulls(&mut value, &schema, &schema, 0);
        value
    }

    #[test]
    fn optional_nulls_go_required_and_nullable_ones_stay() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer"},
                "note": {"type": ["string", "null"]},
                "any": {}
            },
            "required": ["query"]
        });
        assert_eq!(
            strip(
                json!({"query": null, "limit": null, "note": null, "any": null, "extra": null}),
                schema
            ),
            json!({"query": null, "note": null, "any": null, "extra": null})
        );
    }

    #[test]
    fn nested_objects_arrays_maps_and_refs_are_followed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "author": {"type": "object", "properties": {"email": {"type": "string"}}},
                "people": {"type": "array", "items": {"$ref": "#/$defs/P"}},
                "by_id": {"type": "object", "additionalProperties": {"$ref": "#/$defs/P"}},
                "tree": {"$ref": "#"}
            },
            "$defs": {"P": {"type": "object", "properties": {"nick": {"type": "string"}}}}
        });
        assert_eq!(
            strip(
                json!({
                    "author": {"email": null},
                    "people": [{"nick": null}, {"nick": "x"}],
                    "by_id": {"a": {"nick": null}},
                    "tree": {"author": {"email": null}, "tree": null}
                }),
                schema
            ),
            json!({"author": {}, "people": [{}, {"nick": "x"}], "by_id": {"a": {}}, "tree": {"author": {}}})
        );
    }

    #[test]
    fn unions_use_the_alternative_the_keys_match() {
        let schema = json!({"type": "object", "properties": {"shape": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "circle"}, "radius": {"type": "number"}}, "required": ["kind", "radius"]},
            {"type": "object", "properties": {"kind": {"const": "rect"}, "w": {"type": "number"}, "label": {"type": "string"}}, "required": ["kind", "w"]}
        ]}}});
        assert_eq!(
            strip(
                json!({"shape": {"kind": "rect", "w": 1, "label": null}}),
                schema.clone()
            ),
            json!({"shape": {"kind": "rect", "w": 1}})
        );
        assert_eq!(
            strip(json!({"shape": {"kind": "circle", "radius": null}}), schema),
            json!({"shape": {"kind": "circle", "radius": null}}),
            "a required field keeps its null (and fails validation)"
        );
    }
}
