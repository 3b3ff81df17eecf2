//! Two surfaces compared: every change, and whether it breaks callers.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::schema_diff::{schema_changes, Effect};

/// Whether a change breaks existing callers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A caller written against the old surface may now fail: a tool
    /// removed or renamed (also on one surface), a new required input
    /// field, a narrowed input type, enum or bound, an input field removed
    /// from an object that refuses unknown fields, an output field removed
    /// or no longer guaranteed, a widened output, the approval tier raised,
    /// a required OAuth scope added, or a schema change whose effect
    /// cannot be told.
    Breaking,
    /// Old callers keep working: a new tool, a new optional field, a
    /// widened input, a new or narrowed output, a lower approval tier, a
    /// required scope dropped, descriptions and other metadata.
    Additive,
}

/// Which part of a tool a change is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// The tool as a whole (added, removed, renamed).
    Tool,
    /// The input schema.
    Input,
    /// The output schema.
    Output,
    /// The approval declaration.
    Approval,
    /// Names, descriptions, visibility, annotations, hints and the rest.
    Metadata,
    /// A resource or resource template (the change's `tool` is its URI as
    /// written; `path` the field that changed, empty for the whole).
    Resource,
    /// A prompt (the change's `tool` is its name; `path` is
    /// `arguments/NAME` for an argument, or the field that changed).
    Prompt,
}

impl Part {
    fn label(self) -> &'static str {
        match self {
            Part::Tool => "",
            Part::Input => "input",
            Part::Output => "output",
            Part::Approval => "approval",
            Part::Metadata => "metadata",
            Part::Resource => "resource",
            Part::Prompt => "prompt",
        }
    }
}

/// One change between two surfaces.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// Breaking or additive.
    pub severity: Severity,
    /// The tool (its old name when it was removed or renamed); for a
    /// [`Part::Resource`] the resource's URI as written, for a
    /// [`Part::Prompt`] the prompt's name.
    pub tool: String,
    /// Which part of it.
    pub part: Part,
    /// Where in the part: a path into the input or output values
    /// (`/author/email`, `*` for array items and map values), or the
    /// metadata field; empty for the whole part.
    pub path: String,
    /// What happened, in words (`new required field`, `maximum 20 → 10`).
    pub what: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Breaking => "BREAKING",
            Severity::Additive => "additive",
        };
        let label = self.part.label();
        if matches!(self.part, Part::Resource | Part::Prompt) {
            // `resource notes://{id}`: the kind first, so a prompt and a
            // tool of the same name read apart.
            write!(f, "{severity:<9} {label} {}", self.tool)?;
        } else {
            write!(f, "{severity:<9} {}", self.tool)?;
            if !label.is_empty() {
                write!(f, " {label}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, " {}", self.path)?;
        }
        write!(f, ": {}", self.what)
    }
}

/// Every change from one surface to another, breaking ones first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SurfaceDiff {
    /// The changes, breaking first, then by tool, part and path.
    pub changes: Vec<Change>,
}

impl SurfaceDiff {
    /// Whether the surfaces are the same.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Whether any change breaks callers.
    pub fn is_breaking(&self) -> bool {
        self.changes
            .iter()
            .any(|c| c.severity == Severity::Breaking)
    }

    /// How many changes have `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.changes
            .iter()
            .filter(|c| c.severity == severity)
            .count()
    }
}

impl fmt::Display for SurfaceDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} breaking, {} additive",
            self.count(Severity::Breaking),
            self.count(Severity::Additive)
        )?;
        for change in &self.changes {
            write!(f, "\n  {change}")?;
        }
        Ok(())
    }
}

fn tools(surface: &Value) -> BTreeMap<&str, &Value> {
    entries(surface, "tools")
}

fn entries<'a>(surface: &'a Value, key: &str) -> BTreeMap<&'a str, &'a Value> {
    surface
        .get(key)
        .and_then(Value::as_object)
        .map(|tools| tools.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default()
}

/// The changes from surface `old` to surface `new` (both as
/// [`surface`](super::surface) makes them).
pub fn diff(old: &Value, new: &Value) -> SurfaceDiff {
    let (old_tools, new_tools) = (tools(old), tools(new));
    let mut changes = Vec::new();
    let mut added: Vec<&str> = new_tools
        .keys()
        .copied()
        .filter(|name| !old_tools.contains_key(name))
        .collect();
    for (name, before) in &old_tools {
        if let Some(after) = new_tools.get(name) {
            tool_changes(name, before, after, &mut changes);
            continue;
        }
        // Same schemas under another name: a rename.
        let renamed = added.iter().position(|candidate| {
            let after = new_tools[candidate];
            after.get("input") == before.get("input") && after.get("output") == before.get("output")
        });
        let what = match renamed {
            Some(i) => format!("renamed to `{}`", added.remove(i)),
            None => "tool removed".to_owned(),
        };
        changes.push(change(Severity::Breaking, name, Part::Tool, "", what));
    }
    for name in added {
        changes.push(change(
            Severity::Additive,
            name,
            Part::Tool,
            "",
            "tool added",
        ));
    }
    resource_diff(old, new, &mut changes);
    prompt_diff(old, new, &mut changes);
    changes.sort_by(|a, b| {
        (a.severity, &a.tool, a.part, &a.path).cmp(&(b.severity, &b.tool, b.part, &b.path))
    });
    SurfaceDiff { changes }
}

fn change(
    severity: Severity,
    tool: &str,
    part: Part,
    path: &str,
    what: impl Into<String>,
) -> Change {
    Change {
        severity,
        tool: tool.to_owned(),
        part,
        path: path.to_owned(),
        what: what.into(),
    }
}

/// Hints that name the tool on a surface or shape its call: changing one
/// breaks that surface's callers.
const NAMING_HINTS: &[(&str, &str)] = &[
    ("mcp", "mcpName"),
    ("pi", "piName"),
    ("cli", "command"),
    ("cli", "positional"),
];

fn tool_changes(name: &str, before: &Value, after: &Value, changes: &mut Vec<Change>) {
    let none = Value::Null;
    let field = |v: &'_ Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    // Input and output schemas.
    let input = schema_changes(
        before.get("input").unwrap_or(&none),
        after.get("input").unwrap_or(&none),
    );
    for c in input {
        let severity = match c.effect {
            Effect::Widened
            | Effect::Documentation
            | Effect::FieldRemoved { closed: false }
            | Effect::FieldAdded { required: false }
            | Effect::BecameOptional => Severity::Additive,
            _ => Severity::Breaking,
        };
        changes.push(change(severity, name, Part::Input, &c.path, c.what));
    }
    match (before.get("output"), after.get("output")) {
        (Some(a), Some(b)) => {
            for c in schema_changes(a, b) {
                let severity = match c.effect {
                    Effect::Narrowed
                    | Effect::Documentation
                    | Effect::FieldAdded { .. }
                    | Effect::BecameRequired => Severity::Additive,
                    _ => Severity::Breaking,
                };
                let what = match c.effect {
                    Effect::BecameOptional => "field no longer guaranteed".to_owned(),
                    _ => c.what,
                };
                changes.push(change(severity, name, Part::Output, &c.path, what));
            }
        }
        (Some(_), None) => changes.push(change(
            Severity::Breaking,
            name,
            Part::Output,
            "",
            "output schema removed",
        )),
        (None, Some(_)) => changes.push(change(
            Severity::Additive,
            name,
            Part::Output,
            "",
            "output schema added",
        )),
        (None, None) => {}
    }
    approval_change(
        name,
        &field(before, "approval"),
        &field(after, "approval"),
        changes,
    );
    scope_changes(name, before, after, changes);
    // Surface names and call shapes.
    let hint = |v: &Value, surface: &str, key: &str| {
        v.get("hints")
            .and_then(|h| h.get(surface))
            .and_then(|s| s.get(key))
            .cloned()
    };
    for (surface, key) in NAMING_HINTS {
        let (a, b) = (hint(before, surface, key), hint(after, surface, key));
        if a != b {
            let show = |v: Option<Value>| v.map_or_else(|| "default".to_owned(), |v| v.to_string());
            changes.push(change(
                Severity::Breaking,
                name,
                Part::Metadata,
                &format!("hints.{surface}.{key}"),
                format!("{} → {}", show(a), show(b)),
            ));
        }
    }
    // Everything else is metadata a caller does not depend on.
    let keys = |v: &Value| {
        v.as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let mut all: Vec<String> = keys(before).into_iter().chain(keys(after)).collect();
    all.sort();
    all.dedup();
    for key in all {
        if matches!(key.as_str(), "input" | "output" | "approval" | "scopes") {
            continue;
        }
        let (a, b) = (field(before, &key), field(after, &key));
        if key == "hints" {
            let (a, b) = (without_naming_hints(a), without_naming_hints(b));
            if a != b {
                changes.push(change(
                    Severity::Additive,
                    name,
                    Part::Metadata,
                    "hints",
                    "other hints changed",
                ));
            }
            continue;
        }
        if a != b {
            let what = match (&a, &b) {
                (Value::String(_), Value::String(_)) if key.ends_with("escription") => {
                    "reworded".to_owned()
                }
                _ => format!("{a} → {b}"),
            };
            changes.push(change(Severity::Additive, name, Part::Metadata, &key, what));
        }
    }
}

/// Required OAuth scopes: one added refuses callers whose tokens were
/// enough before (breaking); one dropped refuses nobody (additive).
fn scope_changes(name: &str, before: &Value, after: &Value, changes: &mut Vec<Change>) {
    let scopes = |v: &Value| -> Vec<String> {
        v.get("scopes")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old, new) = (scopes(before), scopes(after));
    for scope in new.iter().filter(|s| !old.contains(s)) {
        changes.push(change(
            Severity::Breaking,
            name,
            Part::Metadata,
            "scopes",
            format!("requires scope {scope}"),
        ));
    }
    for scope in old.iter().filter(|s| !new.contains(s)) {
        changes.push(change(
            Severity::Additive,
            name,
            Part::Metadata,
            "scopes",
            format!("no longer requires scope {scope}"),
        ));
    }
}

fn without_naming_hints(mut hints: Value) -> Value {
    for (surface, key) in NAMING_HINTS {
        if let Some(map) = hints.get_mut(*surface).and_then(Value::as_object_mut) {
            map.remove(*key);
        }
    }
    hints
}

/// The tier's rank; a dynamic approval may pick any tier, so it ranks as
/// the highest.
fn rank(approval: &Value) -> (u8, String) {
    if approval.get("dynamic").is_some() {
        return (3, "decided per call".into());
    }
    let tier = approval
        .get("tier")
        .and_then(Value::as_str)
        .unwrap_or("exec");
    let rank = match tier {
        "read" => 0,
        "write" => 1,
        _ => 2,
    };
    (rank, tier.to_owned())
}

fn approval_change(name: &str, before: &Value, after: &Value, changes: &mut Vec<Change>) {
    if before == after {
        return;
    }
    let ((old, old_tier), (new, new_tier)) = (rank(before), rank(after));
    let (severity, what) = if new > old {
        (
            Severity::Breaking,
            format!("raised from {old_tier} to {new_tier}"),
        )
    } else if new < old {
        (
            Severity::Additive,
            format!("lowered from {old_tier} to {new_tier}"),
        )
    } else {
        (Severity::Additive, format!("{before} → {after}"))
    };
    changes.push(change(severity, name, Part::Approval, "", what));
}

/// Resources and templates, by URI as written. A URI gone is breaking
/// (readers of it get `RESOURCE_NOT_FOUND`): when a new URI carries the
/// same name it is reported as the template (or URI) changed, with the
/// variables before and after. A new URI is additive. Within a URI, a
/// changed MIME type is breaking (readers parse by it); names, titles,
/// descriptions, sizes and completable variables are metadata.
fn resource_diff(old: &Value, new: &Value, changes: &mut Vec<Change>) {
    let (before, after) = (entries(old, "resources"), entries(new, "resources"));
    let mut added: Vec<&str> = after
        .keys()
        .copied()
        .filter(|uri| !before.contains_key(uri))
        .collect();
    let variables = |entry: &Value| {
        let names: Vec<&str> = entry
            .get("variables")
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    for (uri, entry) in &before {
        if let Some(now) = after.get(uri) {
            entry_changes(uri, Part::Resource, entry, now, &["mimeType"], changes);
            continue;
        }
        let moved = added
            .iter()
            .position(|candidate| after[candidate].get("name") == entry.get("name"));
        let what = match moved {
            Some(i) => {
                let to = added.remove(i);
                format!(
                    "URI changed to `{to}` (variables {} → {})",
                    variables(entry),
                    variables(after[to])
                )
            }
            None => "resource removed".to_owned(),
        };
        changes.push(change(Severity::Breaking, uri, Part::Resource, "", what));
    }
    for uri in added {
        changes.push(change(
            Severity::Additive,
            uri,
            Part::Resource,
            "",
            "resource added",
        ));
    }
}

/// Prompts, by name. A prompt gone is breaking (reported as renamed when
/// a new prompt has the same arguments), a new one additive. Arguments: a
/// new required one, an optional one made required, or one removed is
/// breaking (a caller's `prompts/get` is refused, or loses what it
/// passed); a new optional one or a required one made optional is
/// additive; descriptions, titles and completable arguments are metadata.
fn prompt_diff(old: &Value, new: &Value, changes: &mut Vec<Change>) {
    let (before, after) = (entries(old, "prompts"), entries(new, "prompts"));
    let mut added: Vec<&str> = after
        .keys()
        .copied()
        .filter(|name| !before.contains_key(name))
        .collect();
    for (name, entry) in &before {
        if let Some(now) = after.get(name) {
            argument_changes(name, entry, now, changes);
            entry_changes(name, Part::Prompt, entry, now, &[], changes);
            continue;
        }
        let renamed = added
            .iter()
            .position(|candidate| after[candidate].get("arguments") == entry.get("arguments"));
        let what = match renamed {
            Some(i) => format!("renamed to `{}`", added.remove(i)),
            None => "prompt removed".to_owned(),
        };
        changes.push(change(Severity::Breaking, name, Part::Prompt, "", what));
    }
    for name in added {
        changes.push(change(
            Severity::Additive,
            name,
            Part::Prompt,
            "",
            "prompt added",
        ));
    }
}

fn argument_changes(name: &str, before: &Value, after: &Value, changes: &mut Vec<Change>) {
    let arguments = |entry: &Value| {
        entry
            .get("arguments")
            .and_then(Value::as_object)
            .map(|a| {
                a.iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<BTreeMap<String, Value>>()
            })
            .unwrap_or_default()
    };
    let required = |argument: &Value| argument.get("required") == Some(&Value::Bool(true));
    let (old, new) = (arguments(before), arguments(after));
    for (argument, was) in &old {
        let path = format!("arguments/{argument}");
        let Some(now) = new.get(argument) else {
            changes.push(change(
                Severity::Breaking,
                name,
                Part::Prompt,
                &path,
                "argument removed",
            ));
            continue;
        };
        match (required(was), required(now)) {
            (false, true) => changes.push(change(
                Severity::Breaking,
                name,
                Part::Prompt,
                &path,
                "became required",
            )),
            (true, false) => changes.push(change(
                Severity::Additive,
                name,
                Part::Prompt,
                &path,
                "became optional",
            )),
            _ => {}
        }
        if was.get("description") != now.get("description") {
            changes.push(change(
                Severity::Additive,
                name,
                Part::Prompt,
                &format!("{path}/description"),
                "reworded",
            ));
        }
    }
    for (argument, now) in &new {
        if old.contains_key(argument) {
            continue;
        }
        let (severity, what) = if required(now) {
            (Severity::Breaking, "new required argument")
        } else {
            (Severity::Additive, "new optional argument")
        };
        changes.push(change(
            severity,
            name,
            Part::Prompt,
            &format!("arguments/{argument}"),
            what,
        ));
    }
}

/// The changes of one resource's or prompt's fields other than its
/// arguments: those in `breaking` break callers, the rest is metadata.
fn entry_changes(
    key: &str,
    part: Part,
    before: &Value,
    after: &Value,
    breaking: &[&str],
    changes: &mut Vec<Change>,
) {
    let keys = |v: &Value| {
        v.as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let mut all: Vec<String> = keys(before).into_iter().chain(keys(after)).collect();
    all.sort();
    all.dedup();
    for field in all {
        if field == "arguments" {
            continue;
        }
        let (a, b) = (
            before.get(&field).cloned().unwrap_or(Value::Null),
            after.get(&field).cloned().unwrap_or(Value::Null),
        );
        if a == b {
            continue;
        }
        let severity = if breaking.contains(&field.as_str()) {
            Severity::Breaking
        } else {
            Severity::Additive
        };
        let what = match (&a, &b) {
            (Value::String(_), Value::String(_)) if field == "description" => "reworded".to_owned(),
            _ => format!("{a} → {b}"),
        };
        changes.push(change(severity, key, part, &field, what));
    }
}
