//! Encoding a typed input as the JSON its advertised schema describes.
//!
//! serde writes `None` as `null`, but a client-ready schema makes an
//! `Option` field optional and **not** nullable (what MCP clients accept),
//! and dispatch enforces that same schema. So the typed encoder drops a
//! `null` member wherever the input type's own schema says the property is
//! optional and does not accept `null`: `None` is sent as an absent key,
//! which serde reads back as `None`. Nothing else changes.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::schema;

fn schema_of<I: JsonSchema + 'static>() -> Arc<Value> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<Value>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(schema) = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&TypeId::of::<I>())
    {
        return Arc::clone(schema);
    }
    let schema = Arc::new(schema::input_schema_for::<I>());
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(TypeId::of::<I>(), Arc::clone(&schema));
    schema
}

/// Serializes a tool input to the JSON its schema describes (`None`
/// fields absent, not `null`): what typed clients and `ctx.call` send.
/// Fails only where serde does (e.g. a map with non-string keys).
pub fn encode_input<I>(input: &I) -> Result<Value, serde_json::Error>
where
    I: Serialize + JsonSchema + 'static,
{
    let mut value = serde_json::to_value(input)?;
    // Only `null` members are ever dropped: without one there is nothing
    // to look up (most inputs; the schema walk was most of a typed call's
    // encoding).
    if !has_null(&value) {
        return Ok(value);
    }
    let schema = schema_of::<I>();
    strip_absent(&mut value, &schema, &schema, 0);
    Ok(value)
}

/// Whether `value` holds a `null` anywhere.
fn has_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(has_null),
        Value::Object(members) => members.values().any(has_null),
        _ => false,
    }
}

/// Removes `null` members of objects where `schema` makes the property
/// optional and not nullable; recurses along `properties`,
/// `additionalProperties`, `items` and the matching `anyOf`/`oneOf`
/// alternative.
fn strip_absent(value: &mut Value, schema: &Value, root: &Value, depth: usize) {
    if depth > 64 {
        return;
    }
    let schema = resolve(schema, root);
    let Some(s) = schema.as_object() else {
        return;
    };
    match value {
        Value::Object(members) => {
            let properties = s.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(properties) = properties {
                members.retain(|key, member| {
                    let optional = !required.contains(&key.as_str());
                    !(member.is_null()
                        && optional
                        && properties
                            .get(key)
                            .is_some_and(|p| !accepts_null(p, root, depth)))
                });
            }
            for (key, member) in members.iter_mut() {
                let sub = properties
                    .and_then(|p| p.get(key))
                    .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()));
                if let Some(sub) = sub {
                    strip_absent(member, sub, root, depth + 1);
                }
            }
            if let Some(alt) = alternative(members, s, root) {
                strip_absent(value, alt, root, depth + 1);
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = s.get("items").filter(|i| i.is_object()) {
                for item in items {
                    strip_absent(item, item_schema, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Follows a local `$ref` (recursive types keep their `$defs`).
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .unwrap_or(schema),
        None => schema,
    }
}

/// The `anyOf`/`oneOf` alternative an object value is an instance of: the
/// first whose `const` properties match and whose properties cover the
/// value's keys.
fn alternative<'a>(
    members: &Map<String, Value>,
    schema: &'a Map<String, Value>,
    root: &'a Value,
) -> Option<&'a Value> {
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .find(|alt| {
            let alt = resolve(alt, root);
            let Some(properties) = alt.get("properties").and_then(Value::as_object) else {
                return false;
            };
            let consts_match = properties.iter().all(|(k, p)| match p.get("const") {
                Some(c) => members.get(k) == Some(c),
                None => true,
            });
            consts_match && members.keys().all(|k| properties.contains_key(k))
        })
}

fn accepts_null(schema: &Value, root: &Value, depth: usize) -> bool {
    if depth > 64 {
        return true;
    }
    let schema = resolve(schema, root);
    let Some(s) = schema.as_object() else {
        // `true` accepts everything, `false` nothing.
        return schema.as_bool().unwrap_or(true);
    };
    if let Some(t) = s.get("type") {
        let nullable = match t {
            Value::String(t) => t == "null",
            Value::Array(ts) => ts.iter().any(|t| t == "null"),
            _ => true,
        };
        if !nullable {
            return false;
        }
    }
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        if !values.iter().any(Value::is_null) {
            return false;
        }
    }
    if let Some(c) = s.get("const") {
        if !c.is_null() {
            return false;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            if !alts.iter().any(|a| accepts_null(a, root, depth + 1)) {
                return false;
            }
        }
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        if !all.iter().all(|a| accepts_null(a, root, depth + 1)) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Inner {
        note: Option<String>,
        any: Option<Value>,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(tag = "kind", rename_all = "lowercase")]
    enum Shape {
        Circle { radius: Option<f64> },
        Square { side: f64 },
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Outer {
        limit: Option<u32>,
        inner: Inner,
        list: Vec<Inner>,
        shape: Shape,
        map: std::collections::BTreeMap<String, Option<u8>>,
    }

    #[test]
    fn none_becomes_absent_and_nothing_else_changes() {
        let value = encode_input(&Outer {
            limit: None,
            inner: Inner {
                note: None,
                any: None,
            },
            list: vec![Inner {
                note: Some("x".into()),
                any: None,
            }],
            shape: Shape::Circle { radius: None },
            map: [("k".to_owned(), None)].into_iter().collect(),
        })
        .unwrap();
        assert_eq!(
            value,
            json!({
                // `Option<Value>` accepts null: kept.
                "inner": {"any": null},
                "list": [{"note": "x", "any": null}],
                "shape": {"kind": "circle"},
                // A map's values are not optional properties: kept.
                "map": {"k": null},
            })
        );
        let compiled =
            schema::CompiledSchema::compile(&schema::input_schema_for::<Outer>()).unwrap();
        assert_eq!(compiled.validate(&value), Ok(()));
        let back: Outer = serde_json::from_value(value).unwrap();
        assert!(back.limit.is_none());
    }
}
