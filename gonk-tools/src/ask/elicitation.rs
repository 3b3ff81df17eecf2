//! Elicitation forms from Rust types: the schema restricted to what MCP
//! elicitation allows (a flat object of strings, numbers, booleans and
//! enums), checked once per type when the schema is built.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{ErrorCode, ToolError};

/// The answer to an elicitation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The human filled in the form.
    Accepted(T),
    /// The human said no.
    Declined,
    /// The human dismissed the form without choosing.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(value) => Some(value),
            _ => None,
        }
    }
}

impl<T: DeserializeOwned> Elicited<T> {
    /// Reads an elicitation result (`{"action": …, "content": …}`).
    pub(crate) fn from_answer(answer: Value) -> Result<Self, ToolError> {
        let Value::Object(mut answer) = answer else {
            return Err(bad_answer("it is not an object"));
        };
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = answer
                    .remove("content")
                    .unwrap_or_else(|| Value::Object(Map::new()));
                serde_json::from_value(content)
                    .map(Elicited::Accepted)
                    .map_err(|e| bad_answer(&format!("its content does not fit the form: {e}")))
            }
            Some("decline") => Ok(Elicited::Declined),
            Some("cancel") => Ok(Elicited::Cancelled),
            _ => Err(bad_answer("its `action` is not accept, decline or cancel")),
        }
    }
}

fn bad_answer(why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::InvalidInput,
        format!("The caller's answer to the elicitation is not usable: {why}"),
    )
}

/// Why a type cannot be an elicitation form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{type_name} cannot be an elicitation form: {reason}. Elicitation allows a flat struct of strings, numbers, integers, booleans, enums of strings and lists of such enums")]
pub struct ElicitationSchemaError {
    /// The type.
    pub type_name: String,
    /// What is not allowed.
    pub reason: String,
}

/// The elicitation schema of `T` (its `requestedSchema`): the JSON Schema of
/// a flat struct whose fields are strings (optionally with an email, uri,
/// date or date-time format), numbers, integers, booleans, string enums, or
/// lists of string enums. Built and checked once per type.
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::ask::elicitation_schema;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Confirm {
///     /// Go ahead?
///     approve: bool,
/// }
/// let schema = elicitation_schema::<Confirm>().unwrap();
/// assert_eq!(schema["properties"]["approve"]["type"], "boolean");
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Nested { inner: Confirm }
/// assert!(elicitation_schema::<Nested>().is_err());
/// ```
pub fn elicitation_schema<T: JsonSchema + 'static>() -> Result<Arc<Value>, ElicitationSchemaError> {
    type Cache = Mutex<HashMap<TypeId, Result<Arc<Value>, ElicitationSchemaError>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(found) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&id) {
        return found.clone();
    }
    let built = restrict(crate::schema::schema_for::<T>())
        .map(Arc::new)
        .map_err(|reason| ElicitationSchemaError {
            type_name: std::any::type_name::<T>().to_owned(),
            reason,
        });
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, built.clone());
    built
}

/// Formats elicitation allows on a string field.
const FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

/// Restricts a client-ready schema to an elicitation form.
fn restrict(schema: Value) -> Result<Value, String> {
    let Value::Object(root) = schema else {
        return Err("its schema is not an object".to_owned());
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err("it is not a struct (the form's root must be an object)".to_owned());
    }
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    for key in ["title", "description"] {
        if let Some(value) = root.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    let mut properties = Map::new();
    if let Some(Value::Object(fields)) = root.get("properties") {
        for (name, field) in fields {
            let field = primitive(field).map_err(|why| format!("field `{name}` {why}"))?;
            properties.insert(name.clone(), field);
        }
    }
    out.insert("properties".into(), Value::Object(properties));
    if let Some(required) = root.get("required") {
        out.insert("required".into(), required.clone());
    }
    Ok(Value::Object(out))
}

/// One field, restricted to a primitive: its one non-null type and the
/// keywords elicitation knows.
fn primitive(field: &Value) -> Result<Value, String> {
    let Value::Object(field) = field else {
        return Err("has no schema".to_owned());
    };
    // `Option<T>` is `T` or null: optional is said by `required`.
    let kind = match field.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| *k != "null")
                .collect();
            match kinds.as_slice() {
                [kind] => (*kind).to_owned(),
                _ => return Err("has more than one type".to_owned()),
            }
        }
        None if field.contains_key("enum") || field.contains_key("oneOf") => "string".to_owned(),
        _ => return Err("is not a string, number, integer, boolean or enum".to_owned()),
    };
    let mut out = Map::new();
    out.insert("type".into(), Value::String(kind.clone()));
    let keep: &[&str] = match kind.as_str() {
        "string" => &[
            "title",
            "description",
            "default",
            "minLength",
            "maxLength",
            "enum",
            "enumNames",
            "oneOf",
        ],
        "number" | "integer" => &["title", "description", "default", "minimum", "maximum"],
        "boolean" => &["title", "description", "default"],
        "array" => &[
            "title",
            "description",
            "default",
            "minItems",
            "maxItems",
            "items",
        ],
        "object" => return Err("is a nested object".to_owned()),
        other => return Err(format!("has type `{other}`")),
    };
    for key in keep {
        if let Some(value) = field.get(*key) {
            out.insert((*key).into(), value.clone());
        }
    }
    if let Some(Value::Array(values)) = out.get_mut("enum") {
        values.retain(|v| !v.is_null());
        if !values.iter().all(Value::is_string) {
            return Err("is an enum of values that are not strings".to_owned());
        }
    }
    if kind == "string" {
        if let Some(format) = field.get("format").and_then(Value::as_str) {
            if FORMATS.contains(&format) {
                out.insert("format".into(), format.into());
            }
        }
    }
    if kind == "array" {
        let items = out.get("items").and_then(Value::as_object);
        let of_strings = items.is_some_and(|items| {
            items.contains_key("enum") || items.contains_key("anyOf") || items.contains_key("oneOf")
        });
        if !of_strings {
            return Err("is a list of something other than a string enum".to_owned());
        }
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Size {
        Small,
        Large,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Form {
        /// Your name.
        name: String,
        age: Option<u32>,
        size: Size,
        sizes: Vec<Size>,
        ok: bool,
    }

    #[test]
    fn a_flat_struct_becomes_a_form() {
        let schema = elicitation_schema::<Form>().unwrap();
        let props = &schema["properties"];
        assert_eq!(props["name"]["type"], "string");
        assert_eq!(props["name"]["description"], "Your name.");
        assert_eq!(props["age"]["type"], "integer");
        assert!(
            props["age"].get("format").is_none(),
            "uint32 is not an elicitation format"
        );
        assert_eq!(props["size"]["type"], "string");
        assert_eq!(props["size"]["enum"], serde_json::json!(["Small", "Large"]));
        assert_eq!(props["sizes"]["type"], "array");
        assert_eq!(props["ok"]["type"], "boolean");
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(!required.contains(&"age"));
        assert!(required.contains(&"name"));
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: i32,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Inner,
    }

    #[test]
    fn a_nested_struct_is_refused_naming_the_field() {
        let error = elicitation_schema::<Nested>().unwrap_err();
        assert!(
            error.reason.contains("field `inner` is a nested object"),
            "{error}"
        );
        assert!(error
            .to_string()
            .contains("Elicitation allows a flat struct"));
    }

    #[test]
    fn a_non_struct_is_refused() {
        assert!(elicitation_schema::<String>().is_err());
        assert!(elicitation_schema::<Vec<u8>>().is_err());
    }

    #[test]
    fn answers_read_by_action() {
        #[derive(Deserialize, Debug, PartialEq)]
        struct A {
            name: String,
        }
        let accepted = Elicited::<A>::from_answer(
            serde_json::json!({"action": "accept", "content": {"name": "Ada"}}),
        )
        .unwrap();
        assert_eq!(accepted, Elicited::Accepted(A { name: "Ada".into() }));
        assert_eq!(
            Elicited::<A>::from_answer(serde_json::json!({"action": "decline"})).unwrap(),
            Elicited::Declined
        );
        assert_eq!(
            Elicited::<A>::from_answer(serde_json::json!({"action": "cancel"})).unwrap(),
            Elicited::Cancelled
        );
        let wrong = Elicited::<A>::from_answer(
            serde_json::json!({"action": "accept", "content": {"name": 3}}),
        )
        .unwrap_err();
        assert_eq!(wrong.code, ErrorCode::InvalidInput);
        assert!(Elicited::<A>::from_answer(serde_json::json!(12345)).is_err());
    }
}
