//! One operation of a document as a tool: its name, which routes are
//! imported ([`RouteMap`]), its approval tier from the HTTP method, and
//! its input schema (the path, query and header parameters and the JSON
//! body as one object) with the plan of how a call becomes the request.

use serde_json::{json, Map, Value};

use crate::definition::ApprovalTier;

use super::document::Document;

/// The HTTP methods an OpenAPI path item may hold, in the spec's order.
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Headers a parameter may not set: the spec says `Accept`,
/// `Content-Type` and `Authorization` parameters are ignored, and the
/// others are the HTTP client's (or the source's credentials).
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "authorization",
    "content-length",
    "host",
    "connection",
    "transfer-encoding",
    "cookie",
];

/// Which operations a source imports: a path pattern, methods and tags,
/// all of which must match (an empty part matches everything).
///
/// ```
/// use gonk_tools::adapters::openapi::RouteMap;
///
/// let deletes = RouteMap::parse("DELETE /todos/*").unwrap();
/// assert!(deletes.matches("delete", "/todos/{todo_id}", &[]));
/// assert!(!deletes.matches("get", "/todos/{todo_id}", &[]));
/// let admin = RouteMap::parse("tag:admin").unwrap();
/// assert!(admin.matches("post", "/users", &["admin".to_owned()]));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteMap {
    /// The path pattern (`*` matches any run of characters, `/` included);
    /// `None` matches every path.
    pub path: Option<String>,
    /// Upper-case methods; empty matches every method.
    pub methods: Vec<String>,
    /// Tags, any of which matches; empty matches every operation.
    pub tags: Vec<String>,
}

impl RouteMap {
    /// Operations whose path matches `pattern`.
    pub fn path(pattern: impl Into<String>) -> Self {
        RouteMap {
            path: Some(pattern.into()),
            ..RouteMap::default()
        }
    }

    /// Only these methods (`"GET"`, `"delete"`, …).
    pub fn methods<S: AsRef<str>>(mut self, methods: impl IntoIterator<Item = S>) -> Self {
        self.methods = methods
            .into_iter()
            .map(|m| m.as_ref().to_ascii_uppercase())
            .collect();
        self
    }

    /// Only operations with one of these tags.
    pub fn tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Reads the short form: `"/todos/*"`, `"GET /todos/*"`,
    /// `"GET,DELETE /todos/*"`, `"DELETE"`, `"tag:admin"`, or a method or
    /// path followed by ` tag:NAME`.
    pub fn parse(text: &str) -> Result<RouteMap, String> {
        let mut map = RouteMap::default();
        for word in text.split_whitespace() {
            if let Some(tag) = word.strip_prefix("tag:") {
                map.tags.push(tag.to_owned());
            } else if word.starts_with('/') {
                if map.path.is_some() {
                    return Err(format!("route {text:?} has two paths"));
                }
                map.path = Some(word.to_owned());
            } else {
                for method in word.split(',') {
                    let upper = method.to_ascii_uppercase();
                    if !METHODS.contains(&upper.to_ascii_lowercase().as_str()) {
                        return Err(format!(
                            "route {text:?}: {method:?} is not an HTTP method, a path (starting with /) or tag:NAME"
                        ));
                    }
                    map.methods.push(upper);
                }
            }
        }
        if map == RouteMap::default() {
            return Err(format!(
                "route {text:?} is empty; write e.g. \"GET /todos/*\" or \"tag:admin\""
            ));
        }
        Ok(map)
    }

    /// Whether the operation `method path` with `tags` matches.
    pub fn matches(&self, method: &str, path: &str, tags: &[String]) -> bool {
        let method_ok =
            self.methods.is_empty() || self.methods.iter().any(|m| m.eq_ignore_ascii_case(method));
        let path_ok = self.path.as_deref().is_none_or(|p| glob(p, path));
        let tags_ok = self.tags.is_empty() || self.tags.iter().any(|t| tags.contains(t));
        method_ok && path_ok && tags_ok
    }
}

/// `*` matches any run of characters; everything else itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// The default tier of an operation: reads for `GET`/`HEAD`/`OPTIONS`,
/// writes for `POST`/`PUT`/`PATCH`, `exec` (destructive) for `DELETE` and
/// anything else.
pub(super) fn tier_of(method: &str) -> ApprovalTier {
    match method {
        "get" | "head" | "options" => ApprovalTier::Read,
        "post" | "put" | "patch" => ApprovalTier::Write,
        _ => ApprovalTier::Exec,
    }
}

/// Where a parameter goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    Path,
    Query,
    Header,
}

/// One parameter as a call sends it.
#[derive(Clone, Debug)]
pub(super) struct Param {
    pub(super) name: String,
    pub(super) place: Place,
    /// Query arrays: repeated (`a=1&a=2`, the default) or comma-joined.
    pub(super) explode: bool,
}

/// Where a call's JSON body comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Body {
    /// The operation takes no JSON body.
    None,
    /// The input's `body` argument, as it is.
    Whole,
    /// The input's arguments that are not parameters: the body's top-level
    /// properties, flattened into the input. `required`: sent (as `{}`)
    /// even when none is given.
    Flat { required: bool },
}

/// An operation as the source imports it.
pub(super) struct Operation {
    /// The operation id (or the one made from method and path), cleaned.
    pub(super) remote: String,
    pub(super) method: String,
    pub(super) path: String,
    pub(super) tags: Vec<String>,
    pub(super) params: Vec<Param>,
    /// How the input carries the JSON body.
    pub(super) body: Body,
    pub(super) input_schema: Value,
    pub(super) output_schema: Option<Value>,
    /// The summary and description, for a trusted source.
    pub(super) text: Option<String>,
    /// The summary and description, for search only (untrusted).
    pub(super) search_text: Option<String>,
}

/// Every operation of `document` as `(method, path, raw operation, path
/// item)`, by path, then in the spec's method order.
pub(super) fn operations(
    document: &Document,
) -> Result<Vec<(String, String, &Value, &Value)>, String> {
    let mut found = Vec::new();
    let Some(Value::Object(paths)) = document.root.get("paths") else {
        return Ok(found);
    };
    for (path, item) in paths {
        if !path.starts_with('/') {
            return Err(format!("path {path:?} does not start with /"));
        }
        let item = document
            .deref(item)
            .map_err(|e| format!("path {path}: {e}"))?;
        for method in METHODS {
            if let Some(op) = item.get(*method) {
                found.push(((*method).to_owned(), path.clone(), op, item));
            }
        }
    }
    Ok(found)
}

/// The operation's tags.
pub(super) fn tags_of(op: &Value) -> Vec<String> {
    op.get("tags")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The operation's remote name: its `operationId` with every character
/// outside `A-Za-z0-9_.-` made `_`, or, without one, `<method>_<path>`
/// made the same way. An empty `operationId` is refused.
pub(super) fn remote_name(method: &str, path: &str, op: &Value) -> Result<String, String> {
    let raw = match op.get("operationId") {
        Some(Value::String(id)) if id.trim().is_empty() => {
            return Err(format!(
                "{} {path} has an empty operationId; give it one, or leave the field out",
                method.to_ascii_uppercase()
            ))
        }
        Some(Value::String(id)) => id.clone(),
        Some(other) => {
            return Err(format!(
                "{} {path}: operationId {} is not a string",
                method.to_ascii_uppercase(),
                crate::error::quote(other)
            ))
        }
        None => format!("{method}_{path}"),
    };
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if op.get("operationId").is_none() {
        // `get_/todos/{id}` → `get_todos_id`.
        while name.contains("__") {
            name = name.replace("__", "_");
        }
        name = name.trim_end_matches('_').to_owned();
    }
    Ok(name)
}

/// Builds the operation's input schema and call plan; `Err` refuses the
/// document, `Ok(Err)` skips this operation (something legitimate that
/// is not supported yet) with the reason.
pub(super) fn build(
    document: &Document,
    method: &str,
    path: &str,
    op: &Value,
    item: &Value,
    remote: String,
    trusted: bool,
) -> Result<Result<Operation, String>, String> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut params: Vec<Param> = Vec::new();
    // Operation-level parameters override path-level ones of the same name
    // and place.
    let mut raw_params: Vec<&Value> = Vec::new();
    for list in [item.get("parameters"), op.get("parameters")]
        .into_iter()
        .flatten()
    {
        let Value::Array(list) = list else {
            return Err("parameters is not an array".to_owned());
        };
        for raw in list {
            let param = document.deref(raw)?;
            let key = (param.get("name"), param.get("in"));
            raw_params.retain(|p| (p.get("name"), p.get("in")) != key);
            raw_params.push(param);
        }
    }
    for param in raw_params {
        let name = param
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a parameter has no name")?
            .to_owned();
        let place = match param.get("in").and_then(Value::as_str) {
            Some("path") => Place::Path,
            Some("query") => Place::Query,
            Some("header") if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) => {
                continue
            }
            Some("header") => Place::Header,
            Some("cookie") => {
                if param.get("required") == Some(&Value::Bool(true)) {
                    return Ok(Err(format!(
                        "it needs cookie parameter {name:?}, which is not sent"
                    )));
                }
                continue;
            }
            other => {
                return Err(format!(
                    "parameter {name:?} is in {}, not path, query, header or cookie",
                    other.unwrap_or("nowhere")
                ))
            }
        };
        let style = param.get("style").and_then(Value::as_str);
        if !matches!(style, None | Some("form") | Some("simple")) {
            return Ok(Err(format!(
                "parameter {name:?} has style {style:?}, which is not supported"
            )));
        }
        let Some(schema) = param.get("schema") else {
            return Ok(Err(format!(
                "parameter {name:?} has no schema (a content-typed parameter is not supported)"
            )));
        };
        let mut schema = document.json_schema(schema, trusted)?;
        let kind = schema.get("type").cloned();
        if kind == Some(json!("object")) {
            return Ok(Err(format!(
                "parameter {name:?} is an object, which is not supported"
            )));
        }
        if trusted {
            if let (Some(text), Value::Object(map)) = (param.get("description"), &mut schema) {
                map.entry("description").or_insert(text.clone());
            }
        }
        if properties.contains_key(&name) || name == "body" {
            return Err(format!(
                "parameter {name:?} appears twice (in two places) or is named \"body\", which is where the JSON body goes"
            ));
        }
        let needed = place == Place::Path || param.get("required") == Some(&Value::Bool(true));
        if needed {
            required.push(Value::String(name.clone()));
        }
        properties.insert(name.clone(), schema);
        params.push(Param {
            name,
            place,
            explode: param
                .get("explode")
                .and_then(Value::as_bool)
                .unwrap_or(true),
        });
    }
    for segment in template_names(path) {
        if !params
            .iter()
            .any(|p| p.place == Place::Path && p.name == segment)
        {
            return Err(format!("path parameter {{{segment}}} has no parameter"));
        }
    }
    let mut body = Body::None;
    if let Some(raw) = op.get("requestBody") {
        let request = document.deref(raw)?;
        let needed = request.get("required") == Some(&Value::Bool(true));
        match json_content(request) {
            Some(media) => {
                let schema = match media.get("schema") {
                    Some(schema) => document.json_schema(schema, trusted)?,
                    None => json!({}),
                };
                match flat_fields(&schema, &properties) {
                    // Its fields beside the parameters, so a transform can
                    // hide or rename one like any argument.
                    Some((fields, needed_fields)) => {
                        properties.extend(fields);
                        if needed {
                            required.extend(needed_fields.into_iter().map(Value::String));
                        }
                        body = Body::Flat { required: needed };
                    }
                    None => {
                        properties.insert("body".into(), schema);
                        if needed {
                            required.push("body".into());
                        }
                        body = Body::Whole;
                    }
                }
            }
            None if needed => {
                return Ok(Err(
                    "its request body is not JSON, which is not supported".to_owned()
                ))
            }
            None => {}
        }
    }
    let output_schema = success_schema(document, op, trusted)?;
    let input_schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    let prose = [op.get("summary"), op.get("description")]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let prose = (!prose.is_empty()).then_some(prose);
    let (text, search_text) = if trusted {
        (prose, None)
    } else {
        (None, prose)
    };
    Ok(Ok(Operation {
        remote,
        method: method.to_owned(),
        path: path.to_owned(),
        tags: tags_of(op),
        params,
        body,
        input_schema,
        output_schema,
        text,
        search_text,
    }))
}

/// The body schema's top-level properties and its required names, when
/// they can stand beside the parameters: a plain object schema (no
/// composition, no schema for extra fields) whose property names are not
/// parameter names. `None` keeps the body whole, under `body`.
#[allow(clippy::type_complexity)]
fn flat_fields(
    schema: &Value,
    params: &Map<String, Value>,
) -> Option<(Map<String, Value>, Vec<String>)> {
    let map = schema.as_object()?;
    let plain = map.keys().all(|k| {
        matches!(
            k.as_str(),
            "type" | "properties" | "required" | "additionalProperties" | "title" | "description"
        )
    });
    let object = map.get("type").is_none_or(|t| t == "object");
    let closed = map
        .get("additionalProperties")
        .is_none_or(|extra| extra == &Value::Bool(false));
    let fields = map.get("properties")?.as_object()?;
    if !plain || !object || !closed || fields.is_empty() {
        return None;
    }
    if fields.keys().any(|name| params.contains_key(name)) {
        return None;
    }
    let needed = map
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Some((fields.clone(), needed))
}

/// The `{name}`s of a path template.
pub(super) fn template_names(path: &str) -> Vec<&str> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .collect()
}

/// The JSON media type of a content map (`application/json`, or any
/// `…+json`).
fn json_content(holder: &Value) -> Option<&Value> {
    let Value::Object(content) = holder.get("content")? else {
        return None;
    };
    content.get("application/json").or_else(|| {
        content.iter().find_map(|(media, v)| {
            let base = media.split(';').next().unwrap_or_default().trim();
            (base == "application/json" || base.ends_with("+json")).then_some(v)
        })
    })
}

/// The schema of the first JSON 2xx response, if there is one.
fn success_schema(document: &Document, op: &Value, trusted: bool) -> Result<Option<Value>, String> {
    let Some(Value::Object(responses)) = op.get("responses") else {
        return Ok(None);
    };
    let mut codes: Vec<&String> = responses
        .keys()
        .filter(|c| c.starts_with('2') || c.eq_ignore_ascii_case("2XX"))
        .collect();
    codes.sort();
    for code in codes {
        let response = document.deref(&responses[code])?;
        if let Some(schema) = json_content(response).and_then(|m| m.get("schema")) {
            return document.json_schema(schema, trusted).map(Some);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_patterns_match_paths_methods_and_tags() {
        assert!(glob("/todos/*", "/todos/{id}/items"));
        assert!(glob("*/items", "/todos/{id}/items"));
        assert!(!glob("/users/*", "/todos/1"));
        assert!(glob("/todos", "/todos"));
        let map = RouteMap::parse("GET,DELETE /todos/* tag:a").unwrap();
        assert!(map.matches("delete", "/todos/1", &["a".into()]));
        assert!(!map.matches("delete", "/todos/1", &["b".into()]));
        assert!(!map.matches("post", "/todos/1", &["a".into()]));
        assert!(RouteMap::parse("FETCH /x")
            .unwrap_err()
            .contains("not an HTTP method"));
        assert!(RouteMap::parse("  ").unwrap_err().contains("is empty"));
    }

    #[test]
    fn names_come_from_the_operation_id_or_method_and_path() {
        let named = json!({"operationId": "create todo!"});
        assert_eq!(
            remote_name("post", "/todos", &named).unwrap(),
            "create_todo_"
        );
        assert_eq!(
            remote_name("get", "/todos/{todo_id}", &json!({})).unwrap(),
            "get_todos_todo_id"
        );
        let empty = remote_name("get", "/x", &json!({"operationId": " "})).unwrap_err();
        assert!(empty.contains("empty operationId"), "{empty}");
    }

    #[test]
    fn tiers_follow_the_method() {
        assert_eq!(tier_of("get"), ApprovalTier::Read);
        assert_eq!(tier_of("patch"), ApprovalTier::Write);
        assert_eq!(tier_of("delete"), ApprovalTier::Exec);
    }
}
