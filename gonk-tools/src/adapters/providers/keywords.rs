//! What the two schema conversions (OpenAI's strict subset in `strict`,
//! Gemini's OpenAPI subset in `openapi`) share: the keywords that say
//! nothing to a model, the findings they collect, and how a removed
//! constraint is restated in a description.

use serde_json::{Map, Value};

/// Keywords that say nothing to a model; both conversions drop them.
pub(crate) const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$comment",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
];

/// How a path reads in notes (`(input)` for the root).
pub(crate) fn shown(at: &str) -> &str {
    if at.is_empty() {
        "(input)"
    } else {
        at
    }
}

/// What a conversion found: notes on what it changed, and blockers — why
/// the schema cannot be converted at all.
#[derive(Default)]
pub(crate) struct Findings {
    pub(crate) notes: Vec<String>,
    pub(crate) blockers: Vec<String>,
}

impl Findings {
    /// The node at `at` cannot be converted, because `why`.
    pub(crate) fn block(&mut self, at: &str, why: impl std::fmt::Display) {
        self.blockers.push(format!("{}: {why}", shown(at)));
    }

    /// The node at `at` was changed: `what`.
    pub(crate) fn note(&mut self, at: &str, what: impl std::fmt::Display) {
        self.notes.push(format!("{}: {what}", shown(at)));
    }
}

/// Appends the removed constraints `restated` to `map`'s description
/// (`"Free text. (at least 1 character)"`), so the model still reads them.
pub(crate) fn restate(map: &mut Map<String, Value>, restated: &[String]) {
    if restated.is_empty() {
        return;
    }
    let text = restated.join(", ");
    let description = match map.get("description").and_then(Value::as_str) {
        Some(description) if !description.is_empty() => format!("{description} ({text})"),
        _ => format!("({text})"),
    };
    map.insert("description".into(), Value::String(description));
}
