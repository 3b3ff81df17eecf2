//! Input and output schemas: the client-ready projection that adapters
//! advertise, and the compiled validator that enforces that same schema.
//!
//! Schemas come from [`schemars`] and are post-processed into the shape MCP
//! clients (Cursor, Windsurf, LangGraph, Gemini CLI) accept:
//!
//! * no `$schema` key and no root `title`;
//! * `$ref`s inlined (only recursive types keep their `$defs`);
//! * `Option<T>` fields optional (not `required`) and not `null`-able —
//!   never `["T", "null"]` unions; the typed client and `ctx.call` send
//!   `None` as an absent key ([`encode_input`]);
//! * doc comments as `description`, `#[serde(deny_unknown_fields)]` as
//!   `additionalProperties: false`, unit enums as string `enum`s (schemars
//!   does these);
//! * integer widths as explicit `minimum`/`maximum` (a `u8` field says
//!   `maximum: 255`), so the schema refuses what serde would refuse;
//! * an input root that is always `type: object`.
//!
//! The same schema is compiled ([`CompiledSchema`]) and enforced on every
//! call, so what a client is told is exactly what is accepted.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::error::ValidationIssue;

mod coerce;
mod encode;

pub use coerce::coerce_string_arguments;
pub use encode::encode_input;

/// The client-ready JSON Schema of `T`, as adapters advertise it.
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    make_client_ready(&mut schema);
    schema
}

/// The client-ready input schema of `T`: [`schema_for`], with a non-object
/// root replaced by an object schema (a unit `()` input is `{}`-shaped).
pub fn input_schema_for<T: JsonSchema>() -> Value {
    let mut schema = schema_for::<T>();
    ensure_object_root(&mut schema);
    schema
}

/// The empty-object schema of a tool that takes no input.
pub fn empty_object_schema() -> Value {
    serde_json::json!({ "type": "object", "properties": {} })
}

/// A `null` (unit) root becomes the empty object; a root without a `type`
/// (an internally tagged enum's `oneOf` of objects) gets `type: object`.
/// A root of another type (a `String` input) is left as it is: such an
/// input is not an object, and no client can send it as tool arguments.
fn ensure_object_root(schema: &mut Value) {
    if schema.as_bool() == Some(true) {
        *schema = serde_json::json!({ "type": "object" });
        return;
    }
    let is_null = schema.get("type").and_then(Value::as_str) == Some("null");
    if is_null {
        *schema = empty_object_schema();
    } else if let Some(map) = schema.as_object_mut() {
        if !map.contains_key("type") {
            map.insert("type".into(), Value::String("object".into()));
        }
    }
}

/// A `oneOf` of string `const`s (a unit enum whose variants have doc
/// comments) → `type: string` + `enum`; variant docs are folded into the
/// description as a list.
fn unit_enum(map: &mut Map<String, Value>) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(alternatives)) = map.get(key) else {
            continue;
        };
        let mut values = Vec::new();
        let mut docs = Vec::new();
        for alt in alternatives {
            let Some(alt) = alt.as_object() else {
                return;
            };
            let is_string_const = alt.get("const").is_some_and(Value::is_string)
                && alt.get("type").is_none_or(|t| t == "string")
                && alt
                    .keys()
                    .all(|k| matches!(k.as_str(), "const" | "type" | "description"));
            if !is_string_const {
                return;
            }
            let value = alt["const"].clone();
            if let Some(doc) = alt.get("description").and_then(Value::as_str) {
                docs.push(format!("- `{}`: {doc}", value.as_str().unwrap_or_default()));
            }
            values.push(value);
        }
        if values.is_empty() {
            return;
        }
        map.remove(key);
        map.insert("type".into(), Value::String("string".into()));
        map.insert("enum".into(), Value::Array(values));
        if !docs.is_empty() {
            let head = map
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!("{d}\n"))
                .unwrap_or_default();
            map.insert(
                "description".into(),
                Value::String(format!("{head}{}", docs.join("\n"))),
            );
        }
        return;
    }
}

/// The range of each integer `format` schemars emits.
fn integer_range(format: &str) -> Option<(Value, Value)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0.into(), u8::MAX.into()),
        "uint16" => (0.into(), u16::MAX.into()),
        "uint32" => (0.into(), u32::MAX.into()),
        "uint64" | "uint" => (0.into(), u64::MAX.into()),
        _ => return None,
    })
}

/// Adds the bounds an integer `format` implies, unless a tighter bound is
/// already there.
fn integer_bounds(map: &mut Map<String, Value>) {
    let is_integer = match map.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    if !is_integer {
        return;
    }
    let Some((min, max)) = map
        .get("format")
        .and_then(Value::as_str)
        .and_then(integer_range)
    else {
        return;
    };
    let tighter = |existing: Option<&Value>, implied: &Value, lower: bool| match existing
        .and_then(Value::as_f64)
    {
        Some(e) => {
            let i = implied.as_f64().unwrap_or(e);
            if lower {
                e >= i
            } else {
                e <= i
            }
        }
        None => false,
    };
    if !tighter(map.get("minimum"), &min, true) && !map.contains_key("exclusiveMinimum") {
        map.insert("minimum".into(), min);
    }
    if !tighter(map.get("maximum"), &max, false) && !map.contains_key("exclusiveMaximum") {
        map.insert("maximum".into(), max);
    }
}

/// Rewrites a schemars schema into the client-ready shape (in place).
pub fn make_client_ready(schema: &mut Value) {
    let Some(root) = schema.as_object_mut() else {
        return;
    };
    root.remove("$schema");
    root.remove("title");
    let defs = root.remove("$defs").and_then(|d| match d {
        Value::Object(map) => Some(map),
        _ => None,
    });
    let mut kept = Map::new();
    if let Some(defs) = &defs {
        let mut stack = Vec::new();
        inline_refs(schema, defs, &mut stack, &mut kept);
    }
    simplify(schema);
    if !kept.is_empty() {
        for value in kept.values_mut() {
            simplify(value);
        }
        if let Some(root) = schema.as_object_mut() {
            root.insert("$defs".into(), Value::Object(kept));
        }
    }
}

/// Replaces `{"$ref": "#/$defs/X"}` by the definition. A reference back into
/// a definition being inlined (a recursive type) stays a `$ref`, and that
/// definition is kept in `kept`.
fn inline_refs(
    value: &mut Value,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    kept: &mut Map<String, Value>,
) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                if let Some(name) = reference.strip_prefix("#/$defs/") {
                    let name = name.to_owned();
                    if stack.contains(&name) {
                        if !kept.contains_key(&name) {
                            if let Some(def) = defs.get(&name) {
                                kept.insert(name.clone(), Value::Null);
                                let mut def = def.clone();
                                let mut inner = vec![name.clone()];
                                inline_refs(&mut def, defs, &mut inner, kept);
                                kept.insert(name, def);
                            }
                        }
                        return;
                    }
                    if let Some(def) = defs.get(&name) {
                        let mut def = def.clone();
                        stack.push(name);
                        inline_refs(&mut def, defs, stack, kept);
                        stack.pop();
                        map.remove("$ref");
                        if let Value::Object(def) = def {
                            for (k, v) in def {
                                map.entry(k).or_insert(v);
                            }
                        }
                        return;
                    }
                }
            }
            for child in map.values_mut() {
                inline_refs(child, defs, stack, kept);
            }
        }
        Value::Array(items) => {
            for child in items {
                inline_refs(child, defs, stack, kept);
            }
        }
        _ => {}
    }
}

/// Makes optional properties plain: `type: ["T", "null"]` → `type: "T"`, and
/// `anyOf: [S, {type: null}]` → `S`, for properties that are not required.
fn simplify(value: &mut Value) {
    match value {
        Value::Object(map) => {
            integer_bounds(map);
            unit_enum(map);
            let required = required_names(map);
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                for (name, prop) in props.iter_mut() {
                    if !required.contains(name) {
                        strip_null(prop);
                    }
                }
            }
            for child in map.values_mut() {
                simplify(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(simplify),
        _ => {}
    }
}

fn strip_null(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    let null_schema = |v: &Value| {
        v.get("type").and_then(Value::as_str) == Some("null")
            && v.as_object().is_some_and(|o| o.len() == 1)
    };
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = map.get_mut(key) {
            if options.iter().any(null_schema) {
                options.retain(|o| !null_schema(o));
                if options.len() == 1 {
                    let only = options.remove(0);
                    map.remove(key);
                    if let Value::Object(only) = only {
                        for (k, v) in only {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

/// A schema compiled once, used to check every value before serde sees it.
pub struct CompiledSchema {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}

impl CompiledSchema {
    /// Compiles `schema` (draft 2020-12 unless it says otherwise).
    pub fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(schema)
            .map(|validator| CompiledSchema { validator })
            .map_err(|e| e.to_string())
    }

    /// `Ok` when `value` matches; otherwise one issue per violation.
    pub fn validate(&self, value: &Value) -> Result<(), Vec<ValidationIssue>> {
        if self.validator.is_valid(value) {
            return Ok(());
        }
        let issues: Vec<ValidationIssue> = self
            .validator
            .iter_errors(value)
            .map(|error| {
                // The offending value is quoted cut to its start and size.
                let quoted = crate::error::quote(error.instance());
                ValidationIssue::new(
                    error.instance_path().to_string(),
                    error.masked_with(quoted).to_string(),
                )
            })
            .collect();
        if issues.is_empty() {
            // is_valid and iter_errors disagree only on a validator bug; fail closed.
            return Err(vec![ValidationIssue::new(
                "",
                "value does not match the schema",
            )]);
        }
        Err(issues)
    }
}

/// The names an object schema lists as `required`, in its order (none
/// when it has no `required` array; entries that are not strings are
/// skipped).
///
/// ```
/// use gonk_tools::schema::{input_schema_for, required_names};
/// # use gonk_tools::prelude::*;
/// #[derive(Deserialize, JsonSchema)]
/// struct Search { query: String, limit: Option<u32> }
///
/// let schema = input_schema_for::<Search>();
/// assert_eq!(required_names(schema.as_object().unwrap()), ["query"]);
/// ```
pub fn required_names(map: &Map<String, Value>) -> Vec<String> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `schema` describes JSON objects (`"type": "object"`).
pub fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The key a non-object input travels under on surfaces whose arguments
/// are always an object (MCP, model providers): `{"value": …}`.
pub const WRAPPED_INPUT_KEY: &str = "value";

/// Keywords that only annotate: a schema made of them alone accepts any
/// value.
const ANNOTATIONS: [&str; 10] = [
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Whether `schema` accepts any value: `true`, `{}`, or annotations only
/// (a tool that declares no input shape, or takes any JSON).
pub fn is_open_schema(schema: &Value) -> bool {
    match schema {
        Value::Bool(accepts) => *accepts,
        Value::Object(map) => map.keys().all(|key| ANNOTATIONS.contains(&key.as_str())),
        _ => false,
    }
}

/// The input schema a surface that only passes objects as arguments (MCP,
/// Pi, model providers) advertises, and whether calls arrive wrapped as
/// `{"value": …}`:
///
/// * an object schema, as it is;
/// * an open schema ([`is_open_schema`]), as an open object — `{"type":
///   "object"}` with its annotations — whose arguments pass through as
///   they are (the original's `{}` advertised as is);
/// * any other schema, wrapped ([`wrap_non_object`]).
pub fn object_input_schema(schema: &Value) -> (std::borrow::Cow<'_, Value>, bool) {
    if is_object_schema(schema) {
        return (std::borrow::Cow::Borrowed(schema), false);
    }
    if let Some(map) = schema.as_object().filter(|_| is_open_schema(schema)) {
        let mut open = map.clone();
        open.insert("type".into(), Value::String("object".into()));
        return (std::borrow::Cow::Owned(Value::Object(open)), false);
    }
    if schema.as_bool() == Some(true) {
        return (
            std::borrow::Cow::Owned(serde_json::json!({ "type": "object" })),
            false,
        );
    }
    match wrap_non_object(schema) {
        Some(wrapped) => (std::borrow::Cow::Owned(wrapped), true),
        None => (std::borrow::Cow::Borrowed(schema), false),
    }
}

/// For a surface that only passes objects as arguments: `None` when
/// `schema` already describes objects or accepts any value
/// ([`is_open_schema`]: arguments pass through), else the object schema
/// that carries the value under [`WRAPPED_INPUT_KEY`] (`{"value":
/// <schema>}`, required, nothing else allowed). Calls of such a tool
/// arrive wrapped and are unwrapped before dispatch. What such a surface
/// advertises is [`object_input_schema`].
pub fn wrap_non_object(schema: &Value) -> Option<Value> {
    if is_object_schema(schema) || is_open_schema(schema) {
        return None;
    }
    Some(serde_json::json!({
        "type": "object",
        "properties": { WRAPPED_INPUT_KEY: schema },
        "required": [WRAPPED_INPUT_KEY],
        "additionalProperties": false,
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn open_schemas_are_open_objects_and_others_are_wrapped() {
        for (schema, advertised) in [
            (json!({}), json!({"type": "object"})),
            (json!(true), json!({"type": "object"})),
            (
                json!({"title": "Any", "description": "d"}),
                json!({"type": "object", "title": "Any", "description": "d"}),
            ),
            (
                json!({"type": "object", "properties": {}}),
                json!({"type": "object", "properties": {}}),
            ),
        ] {
            let (object, wrapped) = super::object_input_schema(&schema);
            assert_eq!(
                (object.into_owned(), wrapped),
                (advertised, false),
                "{schema}"
            );
            assert!(super::wrap_non_object(&schema).is_none(), "{schema}");
        }
        let integer = json!({"type": "integer"});
        let (object, wrapped) = super::object_input_schema(&integer);
        assert!(wrapped);
        assert_eq!(object["required"], json!(["value"]));
        assert!(!super::is_open_schema(&json!({"minimum": 1})));
    }
}
