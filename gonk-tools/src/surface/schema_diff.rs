//! How one JSON Schema differs from another, as effects on the set of
//! values it accepts: narrowed (accepts less), widened (accepts more),
//! changed (neither a subset nor a superset — or nothing we can tell),
//! fields added or removed, documentation. Whether an effect breaks
//! callers depends on the side: a narrowed input breaks callers, a
//! narrowed output does not ([`super::diff`] decides).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// What a schema change does to the accepted values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Accepts fewer values.
    Narrowed,
    /// Accepts more values.
    Widened,
    /// Accepts different values, or we cannot tell.
    Changed,
    /// Only words changed (descriptions, titles, examples, defaults).
    Documentation,
    /// A property is gone; `closed` when the object refuses unknown fields
    /// (so old values carrying it are now refused).
    FieldRemoved { closed: bool },
    /// A new property.
    FieldAdded { required: bool },
    /// An existing property became required.
    BecameRequired,
    /// A required property became optional.
    BecameOptional,
}

/// One difference: where (a path into the values, `""` for the root), its
/// effect and what happened in words.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SchemaChange {
    pub(crate) path: String,
    pub(crate) effect: Effect,
    pub(crate) what: String,
}

/// Keywords that only document.
const DOCUMENTATION: &[&str] = &[
    "description",
    "title",
    "examples",
    "default",
    "deprecated",
    "$comment",
];

/// Lower bounds: raising one narrows.
const LOWER_BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];

/// Upper bounds: lowering one narrows.
const UPPER_BOUNDS: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// Constraints whose addition narrows and whose removal widens.
const CONSTRAINTS: &[&str] = &["pattern", "format", "multipleOf", "uniqueItems"];

/// Keywords handled structurally below.
const STRUCTURAL: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "anyOf",
    "oneOf",
    "$defs",
];

/// The changes from `old` to `new`.
pub(crate) fn schema_changes(old: &Value, new: &Value) -> Vec<SchemaChange> {
    let mut changes = Vec::new();
    compare(old, new, "", &mut changes);
    changes
}

fn push(changes: &mut Vec<SchemaChange>, path: &str, effect: Effect, what: impl Into<String>) {
    changes.push(SchemaChange {
        path: path.to_owned(),
        effect,
        what: what.into(),
    });
}

fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

fn compare(old: &Value, new: &Value, path: &str, changes: &mut Vec<SchemaChange>) {
    if old == new {
        return;
    }
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        // `true`/`false` schemas, or a schema replaced by one.
        let effect = match (old, new) {
            (Value::Bool(true), _) | (_, Value::Bool(false)) => Effect::Narrowed,
            (_, Value::Bool(true)) | (Value::Bool(false), _) => Effect::Widened,
            _ => Effect::Changed,
        };
        push(changes, path, effect, format!("schema {old} → {new}"));
        return;
    };
    types(o, n, path, changes);
    values(o, n, path, changes);
    bounds(o, n, path, changes);
    properties(o, n, path, changes);
    additional(o, n, path, changes);
    if let (Some(a), Some(b)) = (o.get("items"), n.get("items")) {
        compare(a, b, &format!("{path}/*"), changes);
    } else if o.get("items") != n.get("items") {
        let effect = if n.contains_key("items") {
            Effect::Narrowed
        } else {
            Effect::Widened
        };
        push(changes, path, effect, "item schema added or removed");
    }
    if o.get("prefixItems") != n.get("prefixItems") {
        push(changes, path, Effect::Changed, "tuple items changed");
    }
    alternatives(o, n, path, changes);
    definitions(o, n, changes);
    let docs: Vec<&str> = DOCUMENTATION
        .iter()
        .copied()
        .filter(|k| o.get(*k) != n.get(*k))
        .collect();
    if !docs.is_empty() {
        push(
            changes,
            path,
            Effect::Documentation,
            format!("{} changed", docs.join(", ")),
        );
    }
    let known = |k: &str| {
        DOCUMENTATION.contains(&k)
            || LOWER_BOUNDS.contains(&k)
            || UPPER_BOUNDS.contains(&k)
            || CONSTRAINTS.contains(&k)
            || STRUCTURAL.contains(&k)
    };
    let others: BTreeSet<&String> = o
        .keys()
        .chain(n.keys())
        .filter(|k| !known(k) && o.get(*k) != n.get(*k))
        .collect();
    for key in others {
        push(changes, path, Effect::Changed, format!("`{key}` changed"));
    }
}

/// The JSON types a schema allows (`None`: any).
fn type_set(map: &Map<String, Value>) -> Option<BTreeSet<String>> {
    let mut set: BTreeSet<String> = match map.get("type")? {
        Value::String(t) => [t.clone()].into(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => return None,
    };
    // Every integer is a number.
    if set.contains("number") {
        set.insert("integer".into());
    }
    Some(set)
}

fn shown(set: &Option<BTreeSet<String>>) -> String {
    match set {
        None => "any".into(),
        Some(set) => set.iter().cloned().collect::<Vec<_>>().join(" | "),
    }
}

fn types(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    changes: &mut Vec<SchemaChange>,
) {
    let (old, new) = (type_set(o), type_set(n));
    if old == new {
        return;
    }
    let effect = match (&old, &new) {
        (None, Some(_)) => Effect::Narrowed,
        (Some(_), None) => Effect::Widened,
        (Some(a), Some(b)) if b.is_subset(a) => Effect::Narrowed,
        (Some(a), Some(b)) if a.is_subset(b) => Effect::Widened,
        _ => Effect::Changed,
    };
    push(
        changes,
        path,
        effect,
        format!("type {} → {}", shown(&old), shown(&new)),
    );
}

fn values(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    changes: &mut Vec<SchemaChange>,
) {
    match (
        o.get("enum").and_then(Value::as_array),
        n.get("enum").and_then(Value::as_array),
    ) {
        (Some(a), Some(b)) => {
            // Values only in `from`: removed (narrowed), then added (widened).
            for (from, to, effect, verb) in [
                (a, b, Effect::Narrowed, "removed"),
                (b, a, Effect::Widened, "added"),
            ] {
                let only: Vec<String> = from
                    .iter()
                    .filter(|v| !to.contains(v))
                    .map(Value::to_string)
                    .collect();
                if !only.is_empty() {
                    let what = format!("enum values {verb}: {}", only.join(", "));
                    push(changes, path, effect, what);
                }
            }
        }
        (None, Some(_)) => push(changes, path, Effect::Narrowed, "now limited to an enum"),
        (Some(_), None) => push(
            changes,
            path,
            Effect::Widened,
            "no longer limited to an enum",
        ),
        (None, None) => {}
    }
    match (o.get("const"), n.get("const")) {
        (Some(a), Some(b)) if a != b => {
            push(changes, path, Effect::Changed, format!("const {a} → {b}"))
        }
        (None, Some(b)) => push(
            changes,
            path,
            Effect::Narrowed,
            format!("now the constant {b}"),
        ),
        (Some(a), None) => push(
            changes,
            path,
            Effect::Widened,
            format!("no longer the constant {a}"),
        ),
        _ => {}
    }
}

fn bounds(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    changes: &mut Vec<SchemaChange>,
) {
    for (keys, lower) in [(LOWER_BOUNDS, true), (UPPER_BOUNDS, false)] {
        for key in keys.iter().copied() {
            let (a, b) = (o.get(key), n.get(key));
            if a == b {
                continue;
            }
            let effect = match (a.and_then(Value::as_f64), b.and_then(Value::as_f64)) {
                (None, Some(_)) => Effect::Narrowed,
                (Some(_), None) => Effect::Widened,
                (Some(x), Some(y)) if (y > x) == lower => Effect::Narrowed,
                (Some(_), Some(_)) => Effect::Widened,
                (None, None) => Effect::Changed,
            };
            push(changes, path, effect, moved(key, a, b));
        }
    }
    for key in CONSTRAINTS.iter().copied() {
        let (a, b) = (o.get(key), n.get(key));
        let effect = match (a, b) {
            (x, y) if x == y => continue,
            (_, None) => Effect::Widened,
            // A pattern or format that is new or different refuses values the old one took.
            _ => Effect::Narrowed,
        };
        push(changes, path, effect, moved(key, a, b));
    }
}

/// `maximum 20 → 10`.
fn moved(key: &str, before: Option<&Value>, after: Option<&Value>) -> String {
    let show = |v: Option<&Value>| v.map_or_else(|| "none".to_owned(), Value::to_string);
    format!("{key} {} → {}", show(before), show(after))
}

fn required(map: &Map<String, Value>) -> BTreeSet<&str> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn properties(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    changes: &mut Vec<SchemaChange>,
) {
    let old = o
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(empty());
    let new = n
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(empty());
    let (old_required, new_required) = (required(o), required(n));
    let closed = n.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, schema) in old {
        let at = format!("{path}/{name}");
        match new.get(name) {
            None => push(
                changes,
                &at,
                Effect::FieldRemoved { closed },
                "field removed",
            ),
            Some(next) => {
                compare(schema, next, &at, changes);
                match (
                    old_required.contains(name.as_str()),
                    new_required.contains(name.as_str()),
                ) {
                    (false, true) => push(
                        changes,
                        &at,
                        Effect::BecameRequired,
                        "field became required",
                    ),
                    (true, false) => push(
                        changes,
                        &at,
                        Effect::BecameOptional,
                        "field became optional",
                    ),
                    _ => {}
                }
            }
        }
    }
    for name in new.keys().filter(|name| !old.contains_key(*name)) {
        let required = new_required.contains(name.as_str());
        let what = if required {
            "new required field"
        } else {
            "new optional field"
        };
        push(
            changes,
            &format!("{path}/{name}"),
            Effect::FieldAdded { required },
            what,
        );
    }
}

fn additional(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    changes: &mut Vec<SchemaChange>,
) {
    let (a, b) = (o.get("additionalProperties"), n.get("additionalProperties"));
    if a == b {
        return;
    }
    let open = |v: Option<&Value>| matches!(v, None | Some(Value::Bool(true)));
    match (a, b) {
        (Some(x), Some(y)) if x.is_object() && y.is_object() => {
            compare(x, y, &format!("{path}/*"), changes)
        }
        (x, y) if open(x) && open(y) => {}
        (x, _) if open(x) => push(
            changes,
            path,
            Effect::Narrowed,
            "unknown fields now refused",
        ),
        (_, y) if open(y) => push(
            changes,
            path,
            Effect::Widened,
            "unknown fields now accepted",
        ),
        _ => push(
            changes,
            path,
            Effect::Changed,
            "additional properties changed",
        ),
    }
}

fn alternatives(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    changes: &mut Vec<SchemaChange>,
) {
    for key in ["anyOf", "oneOf"] {
        let old = o
            .get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let new = n
            .get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if old == new {
            continue;
        }
        if old.len() == new.len() {
            for (i, (a, b)) in old.iter().zip(new).enumerate() {
                compare(a, b, &format!("{path}/{key}[{i}]"), changes);
            }
            continue;
        }
        let removed = old.iter().filter(|a| !new.contains(a)).count();
        let added = new.iter().filter(|b| !old.contains(b)).count();
        let effect = match (removed, added) {
            (0, _) => Effect::Widened,
            (_, 0) => Effect::Narrowed,
            _ => Effect::Changed,
        };
        push(
            changes,
            path,
            effect,
            format!("{key}: {removed} alternative(s) removed, {added} added"),
        );
    }
}

fn definitions(o: &Map<String, Value>, n: &Map<String, Value>, changes: &mut Vec<SchemaChange>) {
    let old = o.get("$defs").and_then(Value::as_object).unwrap_or(empty());
    let new = n.get("$defs").and_then(Value::as_object).unwrap_or(empty());
    for (name, schema) in old {
        let at = format!("#/$defs/{name}");
        match new.get(name) {
            Some(next) => compare(schema, next, &at, changes),
            None => push(changes, &at, Effect::Changed, "definition removed"),
        }
    }
    for name in new.keys().filter(|name| !old.contains_key(*name)) {
        push(
            changes,
            &format!("#/$defs/{name}"),
            Effect::Changed,
            "definition added",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn effects(old: Value, new: Value) -> Vec<(String, Effect)> {
        schema_changes(&old, &new)
            .into_iter()
            .map(|c| (c.path, c.effect))
            .collect()
    }

    #[test]
    fn bounds_types_and_enums_narrow_or_widen() {
        assert_eq!(
            effects(json!({"maximum": 20}), json!({"maximum": 10})),
            [("".into(), Effect::Narrowed)]
        );
        assert_eq!(
            effects(json!({"minLength": 1}), json!({})),
            [("".into(), Effect::Widened)]
        );
        assert_eq!(
            effects(json!({"type": "number"}), json!({"type": "integer"})),
            [("".into(), Effect::Narrowed)]
        );
        assert_eq!(
            effects(
                json!({"type": "string"}),
                json!({"type": ["string", "null"]})
            ),
            [("".into(), Effect::Widened)]
        );
        assert_eq!(
            effects(json!({"type": "string"}), json!({"type": "integer"})),
            [("".into(), Effect::Changed)]
        );
        assert_eq!(
            effects(json!({"enum": ["a", "b"]}), json!({"enum": ["b", "c"]})),
            [("".into(), Effect::Narrowed), ("".into(), Effect::Widened)]
        );
        assert_eq!(
            effects(
                json!({"type": "string"}),
                json!({"type": "string", "pattern": "^x"})
            ),
            [("".into(), Effect::Narrowed)]
        );
        assert_eq!(
            effects(json!({"description": "a"}), json!({"description": "b"})),
            [("".into(), Effect::Documentation)]
        );
        assert_eq!(
            effects(json!({"x-custom": 1}), json!({"x-custom": 2})),
            [("".into(), Effect::Changed)]
        );
    }

    #[test]
    fn fields_are_followed_by_path() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "n": {"type": "object", "properties": {"x": {"type": "string"}}}}, "required": ["a"]});
        let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "c": {"type": "string"}, "n": {"type": "object", "properties": {"x": {"type": "string", "maxLength": 3}}}}, "required": ["a", "c"], "additionalProperties": false});
        assert_eq!(
            effects(old, new),
            [
                ("/b".into(), Effect::FieldRemoved { closed: true }),
                ("/n/x".into(), Effect::Narrowed),
                ("/c".into(), Effect::FieldAdded { required: true }),
                ("".into(), Effect::Narrowed),
            ]
        );
    }
}
