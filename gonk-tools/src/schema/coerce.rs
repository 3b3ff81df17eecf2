//! Strings to the types a schema asks for: resource template variables
//! and prompt arguments arrive as strings (a URI, MCP's
//! `Record<string, string>`), the typed struct behind them may want a
//! number or a flag.

use serde_json::{Map, Value};

/// Converts each string value of `args` whose property in `schema` is an
/// `integer`, `number` or `boolean` (or an `Option` of one) to that type,
/// when it parses; anything else is left as it is for validation to
/// report against the advertised schema.
///
/// ```
/// use gonk_tools::schema::coerce_string_arguments;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {
///     "id": {"type": "integer"}, "draft": {"type": ["boolean", "null"]}, "tag": {"type": "string"}}});
/// let mut args = json!({"id": "12", "draft": "true", "tag": "7"}).as_object().unwrap().clone();
/// coerce_string_arguments(&schema, &mut args);
/// assert_eq!(serde_json::Value::Object(args), json!({"id": 12, "draft": true, "tag": "7"}));
/// ```
pub fn coerce_string_arguments(schema: &Value, args: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, value) in args.iter_mut() {
        let Value::String(text) = value else {
            continue;
        };
        let Some(property) = properties.get(name) else {
            continue;
        };
        if let Some(parsed) = types_of(property).find_map(|ty| parse_as(ty, text)) {
            *value = parsed;
        }
    }
}

/// The types a property allows: its `type` (one or a list), and the
/// `type` of each `anyOf` branch (schemars writes `Option<T>` of a
/// referenced type that way). Borrowed: nothing is allocated per call.
fn types_of(property: &Value) -> impl Iterator<Item = &str> + '_ {
    let ty = property.get("type");
    let single = ty.and_then(Value::as_str);
    let listed = ty
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let nested = property
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("type").and_then(Value::as_str));
    single.into_iter().chain(listed).chain(nested)
}

fn parse_as(ty: &str, text: &str) -> Option<Value> {
    match ty {
        "string" => Some(Value::String(text.to_owned())),
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| text.parse::<u64>().map(Value::from))
            .ok(),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        "boolean" => text.parse::<bool>().ok().map(Value::Bool),
        _ => None,
    }
}
