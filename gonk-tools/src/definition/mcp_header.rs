//! MCP parameter headers: an input property whose argument a client also
//! sends as the HTTP header `Mcp-Param-<Name>`, so gateways and load
//! balancers route on it without parsing the body. A tool declares one
//! (`#[tool(mcp(header(region = "Region")))]`, [`ToolBuilder::mcp_header`])
//! and the advertised input schema carries `"x-mcp-header": "<Name>"` on
//! that property; rmcp then checks the header against the body on every
//! call (a mismatch is an HTTP 400) and its client sends the header.
//!
//! The rules, checked at registration ([`ToolDefinition::check_mcp_headers`])
//! for declared headers and for any `x-mcp-header` already in a schema:
//! a name is HTTP token characters, unique within the tool ignoring case;
//! the property is a top-level property whose type is `string`, `integer`
//! or `boolean` (MCP allows no other type: no `number`, no `null` in a
//! type list). A client that finds a tool breaking them drops the tool
//! from its listing, so the registry refuses it instead.
//!
//! [`ToolBuilder::mcp_header`]: super::ToolBuilder::mcp_header
//! [`ToolDefinition::check_mcp_headers`]: super::ToolDefinition::check_mcp_headers

use std::borrow::Cow;
use std::num::{
    NonZeroI128, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroI8, NonZeroIsize, NonZeroU128,
    NonZeroU16, NonZeroU32, NonZeroU64, NonZeroU8, NonZeroUsize,
};
use std::rc::Rc;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::name::{check_header_name, check_header_token, same_header, HEADER_PREFIX};

/// The input-schema keyword that marks a property as a header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// One input property sent as an MCP parameter header (see
/// [`ToolMetadata::mcp_headers`](super::ToolMetadata::mcp_headers)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpParamHeader {
    /// The top-level input property, as the input schema names it. The
    /// builder resolves a Rust field name to it (see
    /// [`ToolBuilder::mcp_header`](super::ToolBuilder::mcp_header)).
    pub property: String,
    /// The header name without its prefix: `Region` is sent as
    /// `Mcp-Param-Region`.
    pub header: String,
}

/// A type whose values can travel as an MCP parameter header: a string,
/// an integer or a bool, or an `Option` of one (an absent argument sends
/// no header). `#[tool(mcp(header(field = "Name")))]` requires it of the
/// field, at compile time.
///
/// Floats are not: MCP allows `string`, `integer` and `boolean` headers,
/// and a float's schema type is `number`. A unit enum that serializes as
/// a string (its schema is `type: string` with an `enum`) can be one:
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::definition::McpHeaderValue;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "kebab-case")]
/// pub enum Region { EuWest, UsEast }
///
/// impl McpHeaderValue for Region {}
/// ```
///
/// Registration checks the property's schema type as well, so an impl for
/// a type whose schema is not a string, integer or boolean is refused
/// there.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as an MCP header",
    label = "this field is not a string, an integer or a bool",
    note = "an `Mcp-Param-*` header carries a string, integer or boolean argument, or an `Option` of one; MCP allows no floats, arrays or objects there",
    note = "a type of your own whose schema is a string, an integer or a boolean (a unit enum) can be one: `impl gonk_tools::definition::McpHeaderValue for MyEnum {{}}`"
)]
pub trait McpHeaderValue {
    /// What `#[tool]` calls on the field to prove the bound (spanned on
    /// the field, so the error names it).
    #[doc(hidden)]
    fn __mcp_header_value(&self) {}
}

// `do_not_recommend`: a missing impl reports the trait's message, not a
// list of the types below.
macro_rules! header_values {
    ($($ty:ty),* $(,)?) => {
        $(
            #[diagnostic::do_not_recommend]
            impl McpHeaderValue for $ty {}
        )*
    };
}

header_values!(
    String,
    str,
    char,
    bool,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    NonZeroI8,
    NonZeroI16,
    NonZeroI32,
    NonZeroI64,
    NonZeroI128,
    NonZeroIsize,
    NonZeroU8,
    NonZeroU16,
    NonZeroU32,
    NonZeroU64,
    NonZeroU128,
    NonZeroUsize,
);

#[diagnostic::do_not_recommend]
impl<T: McpHeaderValue + ?Sized> McpHeaderValue for &T {}
#[diagnostic::do_not_recommend]
impl<T: McpHeaderValue + ?Sized> McpHeaderValue for Box<T> {}
#[diagnostic::do_not_recommend]
impl<T: McpHeaderValue + ?Sized> McpHeaderValue for Arc<T> {}
#[diagnostic::do_not_recommend]
impl<T: McpHeaderValue + ?Sized> McpHeaderValue for Rc<T> {}
#[diagnostic::do_not_recommend]
impl McpHeaderValue for Cow<'_, str> {}
#[diagnostic::do_not_recommend]
impl<T: McpHeaderValue> McpHeaderValue for Option<T> {}

/// Why a tool's MCP parameter headers are refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("input property `{property}` cannot be an MCP header: {reason}")]
pub struct McpHeaderError {
    /// The input property (a dotted path for a nested one), or the header
    /// name when no property carries it.
    pub property: String,
    /// What is wrong, and how to fix it.
    pub reason: String,
}

impl McpHeaderError {
    fn new(property: impl Into<String>, reason: impl Into<String>) -> Self {
        McpHeaderError {
            property: property.into(),
            reason: reason.into(),
        }
    }
}

/// The names `serde(rename_all = ..)` gives a snake_case field, in
/// serde's order of rules.
fn renamed_forms(field: &str) -> [String; 6] {
    let pascal: String = field
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect();
    let camel = match pascal.chars().next() {
        Some(first) => first.to_ascii_lowercase().to_string() + &pascal[first.len_utf8()..],
        None => String::new(),
    };
    let screaming = field.to_ascii_uppercase();
    [
        field.to_ascii_lowercase(),
        pascal,
        camel,
        screaming.clone(),
        field.replace('_', "-"),
        screaming.replace('_', "-"),
    ]
}

/// The property of `schema` that `name` means: `name` itself, else the one
/// property that a `serde(rename_all = ..)` form of `name` gives (so a
/// `#[tool]` naming the Rust field `region_code` finds `regionCode` under
/// `rename_all = "camelCase"`). `#[prompt]` resolves its completions'
/// field names by it too.
pub(crate) fn resolve<'a>(properties: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    if let Some((key, _)) = properties.get_key_value(name) {
        return Some(key);
    }
    let mut found: Option<&str> = None;
    for form in renamed_forms(name) {
        if let Some((key, _)) = properties.get_key_value(&form) {
            if found.is_some_and(|f| f != key) {
                return None;
            }
            found = Some(key);
        }
    }
    found
}

/// Writes `"x-mcp-header"` on the property of each declared header in
/// `schema` (a missing property is left for registration to report), and
/// records the property name it resolved to.
pub(crate) fn annotate(schema: &mut Value, headers: &mut [McpParamHeader]) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for header in headers {
        let Some(property) = resolve(properties, &header.property).map(str::to_owned) else {
            continue;
        };
        if let Some(Value::Object(schema)) = properties.get_mut(&property) {
            schema.insert(X_MCP_HEADER.into(), Value::String(header.header.clone()));
        }
        header.property = property;
    }
}

/// The schema types a header may have.
const HEADER_TYPES: &[&str] = &["string", "integer", "boolean"];

/// Checks the declared headers and every `x-mcp-header` annotation of the
/// advertised input `schema`.
pub(crate) fn check(schema: &Value, declared: &[McpParamHeader]) -> Result<(), McpHeaderError> {
    for (i, header) in declared.iter().enumerate() {
        check_header_name(&header.header)
            .map_err(|e| McpHeaderError::new(&header.property, e.describe(&header.header)))?;
        if let Some(first) = declared[..i].iter().find(|d| d.property == header.property) {
            return Err(McpHeaderError::new(
                &header.property,
                format!(
                    "it is declared twice (as `{}` and as `{}`); one property is one header",
                    first.header, header.header
                ),
            ));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for header in declared {
        let annotated = properties
            .and_then(|p| p.get(&header.property))
            .and_then(|p| p.get(X_MCP_HEADER))
            .and_then(Value::as_str);
        if annotated != Some(header.header.as_str()) {
            let known = properties
                .map(|p| {
                    p.keys()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .filter(|k| !k.is_empty())
                .unwrap_or_else(|| "none".to_owned());
            return Err(McpHeaderError::new(
                &header.property,
                format!(
                    "the input schema has no top-level property `{}` (its properties: {known}); name the property as the schema does, or, for a field renamed with `#[serde(rename = ..)]`, put `#[schemars(extend(\"{X_MCP_HEADER}\" = \"{}\"))]` on the field instead",
                    header.property, header.header
                ),
            ));
        }
    }
    check_annotations(schema)
}

/// The rules MCP clients apply to a listed tool's `x-mcp-header`
/// annotations (one breaking them drops the tool): on properties reached
/// from the root through `properties` alone, names unique ignoring case,
/// primitive types only.
fn check_annotations(schema: &Value) -> Result<(), McpHeaderError> {
    let Some(root) = schema.as_object() else {
        return Ok(());
    };
    if root.contains_key(X_MCP_HEADER) {
        return Err(McpHeaderError::new(
            "(input)",
            "`x-mcp-header` is on the input itself; it belongs on one of its properties",
        ));
    }
    let mut found = Vec::new();
    walk(root, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<(&str, String)> = Vec::new();
    for (path, header, property) in &found {
        let Value::String(header) = header else {
            return Err(McpHeaderError::new(
                path,
                "`x-mcp-header` must be a string (the header name)",
            ));
        };
        check_header_token(header).map_err(|e| McpHeaderError::new(path, e.describe(header)))?;
        if let Some((_, other)) = seen.iter().find(|(seen, _)| same_header(seen, header)) {
            return Err(McpHeaderError::new(
                path,
                format!(
                    "the header `{HEADER_PREFIX}{header}` is also sent for `{other}` (header names ignore case); give each property its own name"
                ),
            ));
        }
        seen.push((header, path.clone()));
        match property.get("type") {
            Some(Value::String(t)) if HEADER_TYPES.contains(&t.as_str()) => {}
            other => {
                let shown = match other {
                    Some(t) => format!("type {t}"),
                    None => "no single type".to_owned(),
                };
                return Err(McpHeaderError::new(
                    path,
                    format!(
                        "it has {shown}; a header carries a `string`, `integer` or `boolean` property (MCP allows no other type, nor `null` in a type list: make an optional field `Option<T>` without `#[schemars(required)]`)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// An annotation: the property's dotted path, the header, its schema.
type Found<'a> = (String, &'a Value, &'a Map<String, Value>);

/// Collects the annotations of `schema`'s properties (recursively along
/// `properties`); an annotation anywhere else is an error. `on_chain`: the
/// schema was reached from the root through `properties` alone.
fn walk<'a>(
    schema: &'a Map<String, Value>,
    path: &mut Vec<&'a str>,
    on_chain: bool,
    found: &mut Vec<Found<'a>>,
) -> Result<(), McpHeaderError> {
    for (key, value) in schema {
        match key.as_str() {
            X_MCP_HEADER if !on_chain => {
                return Err(McpHeaderError::new(
                    path.join("."),
                    "`x-mcp-header` is inside a subschema (`items`, `anyOf`, `$defs`, ..); clients send only properties reached through `properties` from the input",
                ));
            }
            "properties" => {
                let Some(properties) = value.as_object() else {
                    continue;
                };
                for (name, property) in properties {
                    let Some(property) = property.as_object() else {
                        continue;
                    };
                    path.push(name);
                    if on_chain {
                        if let Some(header) = property.get(X_MCP_HEADER) {
                            found.push((path.join("."), header, property));
                        }
                    }
                    walk(property, path, on_chain, found)?;
                    path.pop();
                }
            }
            // Instance data and property names, not subschemas.
            "default" | "const" | "enum" | "examples" | "dependentRequired" => {}
            _ => walk_value(value, path, found)?,
        }
    }
    Ok(())
}

/// [`walk`] for a value off the `properties` chain.
fn walk_value<'a>(
    value: &'a Value,
    path: &mut Vec<&'a str>,
    found: &mut Vec<Found<'a>>,
) -> Result<(), McpHeaderError> {
    match value {
        Value::Object(schema) => walk(schema, path, false, found),
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| walk_value(item, path, found)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn header(property: &str, header: &str) -> McpParamHeader {
        McpParamHeader {
            property: property.into(),
            header: header.into(),
        }
    }

    fn annotated(mut schema: Value, headers: &[McpParamHeader]) -> (Value, Vec<McpParamHeader>) {
        let mut headers = headers.to_vec();
        annotate(&mut schema, &mut headers);
        (schema, headers)
    }

    #[test]
    fn the_annotation_lands_on_the_property() {
        let schema = json!({"type": "object", "properties": {"region": {"type": "string"}}});
        let (schema, headers) = annotated(schema, &[header("region", "Region")]);
        assert_eq!(schema["properties"]["region"]["x-mcp-header"], "Region");
        assert_eq!(check(&schema, &headers), Ok(()));
    }

    #[test]
    fn a_rust_field_name_finds_its_rename_all_form() {
        for key in [
            "regionCode",
            "RegionCode",
            "region-code",
            "REGION_CODE",
            "REGION-CODE",
        ] {
            let schema = json!({"type": "object", "properties": {key: {"type": "string"}, "other": {"type": "string"}}});
            let (schema, headers) = annotated(schema, &[header("region_code", "Region")]);
            assert_eq!(headers[0].property, key);
            assert_eq!(schema["properties"][key]["x-mcp-header"], "Region");
            assert_eq!(check(&schema, &headers), Ok(()));
        }
    }

    #[test]
    fn a_missing_property_is_a_registration_error() {
        let schema = json!({"type": "object", "properties": {"zone": {"type": "string"}}});
        let (schema, headers) = annotated(schema, &[header("region", "Region")]);
        let error = check(&schema, &headers).unwrap_err();
        assert_eq!(error.property, "region");
        assert!(
            error.reason.contains("no top-level property `region`")
                && error.reason.contains("`zone`"),
            "{}",
            error.reason
        );
    }

    #[test]
    fn declared_names_follow_the_rule() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}});
        for (name, expected) in [
            ("", "is empty"),
            ("Re gion", "contains a space"),
            ("a:b", "contains `:`"),
            ("Mcp-Param-Region", "write `Region`"),
        ] {
            let (schema, headers) = annotated(schema.clone(), &[header("a", name)]);
            let error = check(&schema, &headers).unwrap_err();
            assert!(error.reason.contains(expected), "{name}: {}", error.reason);
        }
        let (schema, headers) = annotated(schema, &[header("a", "Region"), header("b", "REGION")]);
        let error = check(&schema, &headers).unwrap_err();
        assert_eq!(error.property, "b");
        assert!(error.reason.contains("ignore case"), "{}", error.reason);
    }

    #[test]
    fn only_string_integer_and_boolean_properties_carry_headers() {
        for ok in ["string", "integer", "boolean"] {
            let schema =
                json!({"type": "object", "properties": {"p": {"type": ok, "x-mcp-header": "P"}}});
            assert_eq!(check(&schema, &[]), Ok(()), "{ok}");
        }
        for bad in [
            json!({"type": "number"}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": ["string", "null"]}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        ] {
            let mut property = bad.clone();
            property["x-mcp-header"] = json!("P");
            let schema = json!({"type": "object", "properties": {"p": property}});
            let error = check(&schema, &[]).unwrap_err();
            assert_eq!(error.property, "p");
            assert!(
                error.reason.contains("`string`, `integer` or `boolean`"),
                "{bad}: {}",
                error.reason
            );
        }
    }

    #[test]
    fn annotations_off_the_properties_chain_are_refused() {
        let root = json!({"type": "string", "x-mcp-header": "P"});
        assert!(check(&root, &[]).is_err());
        let in_items = json!({"type": "object", "properties": {"list": {"type": "array", "items": {"type": "string", "x-mcp-header": "P"}}}});
        assert!(check(&in_items, &[]).is_err());
        let in_defs = json!({"type": "object", "$defs": {"D": {"type": "object", "properties": {"p": {"type": "string", "x-mcp-header": "P"}}}}});
        assert!(check(&in_defs, &[]).is_err());
        let nested = json!({"type": "object", "properties": {"outer": {"type": "object", "properties": {"inner": {"type": "string", "x-mcp-header": "Inner"}}}}});
        assert_eq!(check(&nested, &[]), Ok(()));
        let in_default = json!({"type": "object", "properties": {"p": {"type": "object", "default": {"x-mcp-header": 1}}}});
        assert_eq!(check(&in_default, &[]), Ok(()));
    }

    #[test]
    fn a_property_declared_twice_is_refused() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let (schema, headers) = annotated(schema, &[header("a", "A"), header("a", "B")]);
        let error = check(&schema, &headers).unwrap_err();
        assert!(error.reason.contains("declared twice"), "{}", error.reason);
    }
}
