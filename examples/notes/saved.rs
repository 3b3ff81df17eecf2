//! Saved searches: `NOTES_SAVED_SEARCHES="release=release checklist;rust=rust"`
//! adds one tool per entry (`saved.release`, `saved.rust`) that runs its
//! query, like `notes.search` with the text filled in.

use std::sync::Arc;

use gonk_tools::prelude::*;

use crate::store::Store;
use crate::tools::SearchResult;

/// The environment variable that holds the saved searches.
pub const ENV: &str = "NOTES_SAVED_SEARCHES";

/// The tools of the saved searches in `NOTES_SAVED_SEARCHES` (none when it
/// is unset); an entry that is not `name=query` is an error naming it.
pub fn from_env() -> Result<Vec<ToolDefinition>, String> {
    match std::env::var(ENV) {
        Ok(spec) => parse(&spec),
        Err(std::env::VarError::NotPresent) => Ok(Vec::new()),
        Err(error) => Err(format!("{ENV}: {error}")),
    }
}

/// `name=query;name=query` → one tool per entry.
pub fn parse(spec: &str) -> Result<Vec<ToolDefinition>, String> {
    spec.split(';')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| match entry.split_once('=') {
            Some((name, query)) if !name.trim().is_empty() && !query.trim().is_empty() => {
                Ok(saved_search(name.trim(), query.trim()))
            }
            _ => Err(format!(
                "{ENV}: `{entry}` is not `name=query` (entries are separated by `;`)"
            )),
        })
        .collect()
}

/// The tool `saved.NAME`: the notes that match `query`.
pub fn saved_search(name: &str, query: &str) -> ToolDefinition {
    // The builder is for tools whose name or shape is known only at run
    // time, like this one; a tool you can write down is a `#[tool]` fn.
    let query: Arc<str> = query.into();
    ToolDefinition::builder(format!("saved.{name}"))
        .description(format!("Saved search: the notes that match \"{query}\"."))
        .category("saved searches")
        .approval(ApprovalTier::Read)
        .scopes(["notes:read"])
        .capabilities(Capabilities {
            reads_fs: true,
            idempotent: true,
            ..Capabilities::default()
        })
        .requires_state::<Store>()
        .output_schema_for::<SearchResult>()
        .handler_with_output(move |_: NoInput, ctx: ToolContext| {
            let query = query.to_string();
            async move {
                let store = ctx
                    .state::<Store>()
                    .ok_or_else(|| ToolError::internal("the notes store is not registered"))?;
                crate::tools::search(&store, query, 20, false).await
            }
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_become_tools_and_malformed_ones_are_named() {
        let tools = parse("release=release checklist; rust = rust ;").unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["saved.release", "saved.rust"]);
        assert_eq!(
            tools[0].description,
            "Saved search: the notes that match \"release checklist\"."
        );
        let error = parse("ok=fine;broken").unwrap_err();
        assert!(error.contains("`broken` is not `name=query`"), "{error}");
        assert!(parse("=query").is_err());
        assert!(parse("").unwrap().is_empty());
    }
}
