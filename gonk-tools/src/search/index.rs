//! [`ToolIndex`]: a BM25 index over tool definitions (the `bm25` crate).

use std::collections::HashMap;

use bm25::{Language, SearchEngine, SearchEngineBuilder};
use serde_json::Value;

use crate::definition::ToolDefinition;

/// How many times a tool's name words are repeated in its document: a
/// query word that is part of the name counts more than one that only
/// appears in a property description.
const NAME_WEIGHT: usize = 3;

/// How deep the input schema is walked for property names and
/// descriptions (nested objects, array items, definitions).
const SCHEMA_DEPTH: usize = 4;

/// A BM25 index over tools: each tool is one document made of its name
/// (split into words: `billing.invoice_create` → `billing invoice
/// create`), its advertised description, its
/// [`search_text`](crate::definition::ToolMetadata::search_text) (an
/// untrusted source's own description, never shown), and its input schema's property
/// names and descriptions. English stemming and stop words (the `bm25`
/// crate's default tokenizer), so `deleting` finds `delete`.
///
/// Built once per catalog state; [`install`](super::install) rebuilds it
/// when the registry's [`generation`](crate::ToolRegistry::generation)
/// moves.
pub struct ToolIndex {
    engine: SearchEngine<usize>,
    names: Vec<String>,
    ids: HashMap<String, usize>,
    defs: Vec<ToolDefinition>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.names.len())
            .finish_non_exhaustive()
    }
}

/// One ranked tool.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolMatch {
    /// The tool's registry name.
    pub name: String,
    /// Its BM25 score: higher is more relevant; only comparable within one
    /// search.
    pub score: f32,
}

impl ToolIndex {
    /// Indexes `defs` (every definition given; callers leave out what must
    /// not be found).
    pub fn build(defs: impl IntoIterator<Item = ToolDefinition>) -> Self {
        let defs: Vec<ToolDefinition> = defs.into_iter().collect();
        let documents: Vec<bm25::Document<usize>> = defs
            .iter()
            .enumerate()
            .map(|(id, def)| bm25::Document::new(id, document_text(def)))
            .collect();
        let engine = if documents.is_empty() {
            SearchEngineBuilder::<usize>::with_avgdl(1.0).build()
        } else {
            SearchEngineBuilder::<usize>::with_documents(Language::English, documents).build()
        };
        let names: Vec<String> = defs.iter().map(|def| def.name.clone()).collect();
        let ids = names
            .iter()
            .enumerate()
            .map(|(id, name)| (name.clone(), id))
            .collect();
        ToolIndex {
            engine,
            names,
            ids,
            defs,
        }
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Every indexed tool matching `query`, best first (ties in
    /// registration order); tools sharing no word with the query are left
    /// out.
    pub fn search(&self, query: &str) -> Vec<ToolMatch> {
        let mut hits: Vec<(usize, f32)> = self
            .engine
            .search(&split_identifiers(query), None)
            .into_iter()
            .map(|hit| (hit.document.id, hit.score))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.into_iter()
            .filter_map(|(id, score)| {
                self.names.get(id).map(|name| ToolMatch {
                    name: name.clone(),
                    score,
                })
            })
            .collect()
    }

    /// The indexed definition named `name`.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.ids.get(name).and_then(|&id| self.defs.get(id))
    }
}

/// The text a tool is found by.
fn document_text(def: &ToolDefinition) -> String {
    let name = split_identifiers(&def.name);
    let mut text = String::new();
    for _ in 0..NAME_WEIGHT {
        text.push_str(&name);
        text.push_str(". ");
    }
    text.push_str(def.advertised_description());
    if let Some(hidden) = &def.search_text {
        text.push_str(". ");
        text.push_str(hidden);
    }
    let mut schema_words = Vec::new();
    schema_text(
        def.effective_input_schema(),
        SCHEMA_DEPTH,
        &mut schema_words,
    );
    for words in schema_words {
        text.push_str(". ");
        text.push_str(&words);
    }
    text
}

/// Property names (split into words) and descriptions of `schema`.
fn schema_text(schema: &Value, depth: usize, out: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(Value::String(description)) = object.get("description") {
        out.push(description.clone());
    }
    if depth == 0 {
        return;
    }
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (name, property) in properties {
            out.push(split_identifiers(name));
            schema_text(property, depth - 1, out);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = object.get(key) {
            schema_text(inner, depth - 1, out);
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = object.get(key) {
            for inner in defs.values() {
                schema_text(inner, depth - 1, out);
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = object.get(key) {
            for inner in branches {
                schema_text(inner, depth - 1, out);
            }
        }
    }
}

/// `notes.searchAll_v2` → `notes search All v2`: identifiers split at
/// `.`, `_`, `-`, `/` and lower-to-upper case changes, so their words
/// match the words of a query. Other text passes through.
fn split_identifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut previous: Option<char> = None;
    for c in text.chars() {
        match c {
            '.' | '_' | '-' | '/' | ':' => out.push(' '),
            c if c.is_uppercase() && previous.is_some_and(char::is_lowercase) => {
                out.push(' ');
                out.push(c);
            }
            c => out.push(c),
        }
        previous = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_split_into_words() {
        assert_eq!(
            split_identifiers("notes.searchAll_v2-x/y"),
            "notes search All v2 x y"
        );
        assert_eq!(split_identifiers("plain text."), "plain text ");
    }
}
