//! OpenAI's strict subset of JSON Schema (Structured Outputs, "supported
//! schemas"): every object closed, every property required, optional fields
//! as unions with `null`, only the supported keywords, within the limits.
//!
//! A constraint the subset lacks but that only *narrows* what is valid
//! (`minLength`, `default`, an unsupported `format`) is removed and
//! restated in the description: dispatch still enforces it. Anything whose
//! removal would change which *shape* the model produces (a map, a tuple,
//! an open object, a root union) cannot be strict: the caller sends the
//! tool non-strict instead.

use serde_json::{json, Map, Value};

use super::keywords::{restate, Findings, ANNOTATIONS};

/// A schema made strict, and what was changed on the way.
pub(crate) struct Strict {
    pub(crate) schema: Value,
    pub(crate) notes: Vec<String>,
}

/// Object nesting levels strict mode allows.
const MAX_DEPTH: usize = 10;
/// Object properties strict mode allows in one schema.
const MAX_PROPERTIES: usize = 5000;
/// Enum values strict mode allows in one schema.
const MAX_ENUM_VALUES: usize = 1000;

/// `format`s strict mode supports on strings.
const STRING_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords outside the strict subset that only narrow what is valid: they
/// move into the description.
const RESTATED: &[&str] = &[
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "default",
];

/// Keywords that change which shapes are valid and that strict mode lacks.
const BLOCKING: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "$dynamicRef",
    "$dynamicAnchor",
];

/// `schema` in the strict subset, or why it cannot be.
pub(crate) fn strict_schema(schema: &Value) -> Result<Strict, Vec<String>> {
    let mut walk = Walk::default();
    let mut schema = schema.clone();
    if let Some(root) = schema.as_object() {
        if root.contains_key("anyOf") || root.contains_key("oneOf") {
            walk.found.blockers.push(
                "the input is one of several shapes (a Rust enum as the whole input); strict mode needs a single object at the root".into(),
            );
        }
    }
    walk.node(&mut schema, "", 1, true);
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        for (name, def) in defs.iter_mut() {
            walk.node(def, &format!("#/$defs/{name}"), 1, false);
        }
    }
    if walk.properties > MAX_PROPERTIES {
        walk.found.blockers.push(format!(
            "{} properties; strict mode allows at most {MAX_PROPERTIES}",
            walk.properties
        ));
    }
    if walk.enum_values > MAX_ENUM_VALUES {
        walk.found.blockers.push(format!(
            "{} enum values; strict mode allows at most {MAX_ENUM_VALUES}",
            walk.enum_values
        ));
    }
    if walk.found.blockers.is_empty() {
        Ok(Strict {
            schema,
            notes: walk.found.notes,
        })
    } else {
        Err(walk.found.blockers)
    }
}

#[derive(Default)]
struct Walk {
    found: Findings,
    properties: usize,
    enum_values: usize,
}

fn type_names(map: &Map<String, Value>) -> Vec<&str> {
    match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_object(map: &Map<String, Value>) -> bool {
    type_names(map).contains(&"object") || map.contains_key("properties")
}

/// A keyword the description restates, as words.
fn in_words(keyword: &str, value: &Value) -> String {
    let count = |unit: &str| match value.as_u64() {
        Some(1) => format!("1 {unit}"),
        _ => format!("{value} {unit}s"),
    };
    match keyword {
        "minLength" => format!("at least {}", count("character")),
        "maxLength" => format!("at most {}", count("character")),
        "minProperties" => format!("at least {}", count("entry")),
        "maxProperties" => format!("at most {}", count("entry")),
        "uniqueItems" => "items must be unique".into(),
        "format" => format!("format: {}", value.as_str().unwrap_or_default()),
        "default" => format!("default: {value}"),
        _ => format!("{keyword}: {value}"),
    }
}

impl Walk {
    fn block(&mut self, at: &str, why: impl std::fmt::Display) {
        self.found.block(at, why);
    }

    /// Makes one schema node strict, in place.
    fn node(&mut self, node: &mut Value, at: &str, depth: usize, root: bool) {
        let Value::Object(map) = node else {
            self.block(
                at,
                "accepts any JSON value, which strict mode cannot express",
            );
            return;
        };
        if map.is_empty() || map.keys().all(|k| k == "description" || k == "title") {
            self.block(
                at,
                "accepts any JSON value, which strict mode cannot express",
            );
            return;
        }
        let mut restated = Vec::new();
        // In a fixed order, so descriptions read the same whatever order the map keeps.
        for key in RESTATED {
            if let Some(value) = map.remove(*key) {
                restated.push(in_words(key, &value));
                self.found.note(at, format!("`{key}` is not in the strict subset; it is stated in the description and still enforced"));
            }
        }
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            match key.as_str() {
                "type"
                | "description"
                | "title"
                | "enum"
                | "const"
                | "properties"
                | "required"
                | "additionalProperties"
                | "items"
                | "anyOf"
                | "$ref"
                | "$defs"
                | "pattern"
                | "minimum"
                | "maximum"
                | "exclusiveMinimum"
                | "exclusiveMaximum"
                | "multipleOf"
                | "minItems"
                | "maxItems" => {}
                "format" => {
                    let format = map
                        .get("format")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let on_string = type_names(map).contains(&"string");
                    if !(on_string && STRING_FORMATS.contains(&format)) {
                        if let Some(value) = map.remove("format") {
                            // Integer widths (`uint32`) are already bounds.
                            if on_string {
                                restated.push(in_words("format", &value));
                            }
                        }
                    }
                }
                k if RESTATED.contains(&k) => {}
                "oneOf" => {
                    if let Some(alternatives) = map.remove("oneOf") {
                        map.insert("anyOf".into(), alternatives);
                        self.found.note(at, "`oneOf` is offered as `anyOf` (strict mode has no `oneOf`); the alternatives exclude each other, so both accept the same values");
                    }
                }
                "unevaluatedProperties" if map.get(&key) == Some(&Value::Bool(false)) => {
                    map.remove(&key);
                }
                k if ANNOTATIONS.contains(&k) => {
                    map.remove(k);
                }
                k if BLOCKING.contains(&k) || k == "unevaluatedProperties" => {
                    self.block(
                        at,
                        format!("uses `{k}`, which strict mode does not support"),
                    );
                }
                k => {
                    map.remove(k);
                    self.found.note(
                        at,
                        format!("dropped `{k}`, which strict mode does not support"),
                    );
                }
            }
        }
        if let Some(values) = map.get("enum").and_then(Value::as_array) {
            self.enum_values += values.len();
        }
        if is_object(map) {
            self.object(map, at, depth, root);
        }
        if type_names(map).contains(&"array") {
            match map.get_mut("items") {
                Some(items) => self.node(items, &format!("{at}/*"), depth, false),
                None => self.block(
                    at,
                    "is an array of any values, which strict mode cannot express",
                ),
            }
        }
        if let Some(Value::Array(alternatives)) = map.get_mut("anyOf") {
            for alternative in alternatives {
                self.node(alternative, at, depth, false);
            }
        }
        restate(map, &restated);
    }

    /// Closes an object and makes every property required (optional ones
    /// nullable).
    fn object(&mut self, map: &mut Map<String, Value>, at: &str, depth: usize, root: bool) {
        if depth > MAX_DEPTH {
            self.block(
                at,
                format!("nests objects deeper than {MAX_DEPTH} levels, the strict limit"),
            );
            return;
        }
        let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                self.block(
                    at,
                    "is a map (additionalProperties), which strict mode cannot express",
                );
                return;
            }
        }
        if !map.contains_key("properties") {
            if !(root || closed) {
                self.block(at, "accepts any object, which strict mode cannot express");
                return;
            }
            map.insert("properties".into(), Value::Object(Map::new()));
        }
        if !map.contains_key("type") {
            map.insert("type".into(), Value::String("object".into()));
        }
        map.insert("additionalProperties".into(), Value::Bool(false));
        let required = crate::schema::required_names(map);
        let Some(Value::Object(properties)) = map.get_mut("properties") else {
            self.block(at, "has `properties` that are not an object");
            return;
        };
        self.properties += properties.len();
        // The declared order of the required fields, then the optional ones
        // by name: stable whatever order the map keeps.
        let mut optional = Vec::new();
        for (name, property) in properties.iter_mut() {
            let path = format!("{at}/{name}");
            self.node(property, &path, depth + 1, false);
            if !required.contains(name) {
                nullable(property);
                optional.push(name.clone());
            }
        }
        optional.sort();
        let all = required
            .into_iter()
            .filter(|name| properties.contains_key(name))
            .chain(optional)
            .map(Value::String)
            .collect();
        map.insert("required".into(), Value::Array(all));
    }
}

/// An optional property as strict mode wants it: required, and `null`
/// standing for "absent".
fn nullable(property: &mut Value) {
    let Value::Object(map) = property else {
        return;
    };
    let has_values = map.contains_key("enum") || map.contains_key("const");
    match map.get("type") {
        Some(Value::String(t)) if t == "null" => return,
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => return,
        // Scalars take a type union; objects, arrays and enums a union of schemas.
        Some(Value::String(t))
            if matches!(t.as_str(), "string" | "integer" | "number" | "boolean") && !has_values =>
        {
            let union = json!([t, "null"]);
            map.insert("type".into(), union);
            return;
        }
        _ => {}
    }
    let description = map.remove("description");
    let inner = std::mem::take(map);
    map.insert(
        "anyOf".into(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
    if let Some(description) = description {
        map.insert("description".into(), description);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_close_and_optionals_become_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "Free text."},
                "limit": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 20},
                "mode": {"type": "string", "enum": ["a", "b"], "description": "How."},
                "author": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}
            },
            "required": ["query"]
        });
        let strict = strict_schema(&schema).unwrap();
        assert_eq!(
            strict.schema,
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Free text. (at least 1 character)"},
                    "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 20},
                    "mode": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}], "description": "How."},
                    "author": {"anyOf": [{
                        "type": "object",
                        "properties": {"email": {"type": ["string", "null"], "format": "email"}},
                        "required": ["email"],
                        "additionalProperties": false
                    }, {"type": "null"}]}
                },
                "required": ["query", "author", "limit", "mode"],
                "additionalProperties": false
            })
        );
        assert_eq!(strict.notes.len(), 1, "{:?}", strict.notes);
    }

    #[test]
    fn shapes_strict_mode_cannot_express_block_it() {
        let cases = [
            (
                json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}}),
                "/m: is a map",
            ),
            (
                json!({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "integer"}]}}}),
                "/t: uses `prefixItems`",
            ),
            (
                json!({"type": "object", "properties": {"v": {}}}),
                "/v: accepts any JSON value",
            ),
            (
                json!({"type": "object", "properties": {"o": {"type": "object"}}}),
                "/o: accepts any object",
            ),
            (
                json!({"type": "object", "oneOf": [{"type": "object", "properties": {}}]}),
                "a single object at the root",
            ),
            (
                json!({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}}),
                "/a: uses `allOf`",
            ),
        ];
        for (schema, expected) in cases {
            let blockers = strict_schema(&schema)
                .err()
                .unwrap_or_else(|| panic!("{schema} should not be strict"));
            assert!(
                blockers.iter().any(|b| b.contains(expected)),
                "{blockers:?} should mention {expected}"
            );
        }
    }

    #[test]
    fn limits_are_checked() {
        let mut schema = json!({"type": "string"});
        for _ in 0..11 {
            schema = json!({"type": "object", "properties": {"x": schema}, "required": ["x"]});
        }
        let blockers = strict_schema(&schema).err().unwrap();
        assert!(
            blockers.iter().any(|b| b.contains("deeper than 10")),
            "{blockers:?}"
        );
        let values: Vec<Value> = (0..1001).map(|i| json!(format!("v{i}"))).collect();
        let many = json!({"type": "object", "properties": {"e": {"type": "string", "enum": values}}, "required": ["e"]});
        assert!(strict_schema(&many).err().unwrap()[0].contains("1001 enum values"));
    }

    #[test]
    fn recursion_through_refs_stays_strict() {
        let schema = json!({
            "type": "object",
            "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["value", "children"]
        });
        let strict = strict_schema(&schema).unwrap();
        assert_eq!(
            strict.schema["properties"]["children"]["items"],
            json!({"$ref": "#"})
        );
        assert_eq!(strict.schema["additionalProperties"], false);
    }
}
