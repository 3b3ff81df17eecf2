//! Tool names in Pi. Pi hands them to model providers, most of which accept
//! only `[a-zA-Z0-9_-]{1,64}`, so a dotted registry name is mapped
//! (`notes.search` → `notes_search`) unless the tool gives a Pi name of its
//! own (`hints.pi.pi_name`, `#[tool(pi(name = "..."))]`).
//!
//! The mapping is reversible because it is checked for collisions: the
//! catalog keeps Pi name → registry name, and two exposed tools that would
//! share one Pi name are refused ([`PiNameError::Collision`]).

use std::borrow::Cow;

use crate::definition::ToolDefinition;

/// The longest name providers accept.
pub const MAX_PI_NAME_LEN: usize = 64;

/// Why a registry cannot be projected into Pi under unambiguous names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PiNameError {
    /// Two tools map to one Pi name.
    #[error("tools `{first}` and `{second}` both map to the Pi name `{pi_name}`; give one of them another Pi name (`#[tool(pi(name = \"...\"))]` or `hints.pi.pi_name`)")]
    Collision {
        /// The shared Pi name.
        pi_name: String,
        /// The tool that claimed it first (registration order).
        first: String,
        /// The tool that collides with it.
        second: String,
    },
    /// A tool's Pi name breaks the providers' rule.
    #[error("tool `{tool}` has the Pi name `{pi_name}`, which {reason}; set a Pi name of 1-64 characters of A-Za-z0-9_- (`#[tool(pi(name = \"...\"))]` or `hints.pi.pi_name`)")]
    Invalid {
        /// The registry name.
        tool: String,
        /// The Pi name it would have.
        pi_name: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The name `def` has in Pi: its `pi_name` hint, else its registry name
/// with every `.` replaced by `_`.
pub fn pi_name(def: &ToolDefinition) -> Cow<'_, str> {
    match &def.hints.pi.pi_name {
        Some(name) => Cow::Borrowed(name),
        None if def.name.contains('.') => Cow::Owned(def.name.replace('.', "_")),
        None => Cow::Borrowed(&def.name),
    }
}

/// Checks a Pi name against the providers' rule (`[a-zA-Z0-9_-]{1,64}`).
pub fn check_pi_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("is empty".to_owned());
    }
    if name.len() > MAX_PI_NAME_LEN {
        return Err(format!(
            "is {} characters long (the limit is {MAX_PI_NAME_LEN})",
            name.len()
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
    {
        Some(bad) => Err(format!("contains `{bad}`")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::PiHints;
    use crate::prelude::*;
    use serde_json::Value;

    fn tool(name: &str, pi: Option<&str>) -> ToolDefinition {
        ToolDefinition::builder(name)
            .description("A tool.")
            .pi(PiHints {
                pi_name: pi.map(str::to_owned),
                ..PiHints::default()
            })
            .raw_handler(|v: Value, _| async move { Ok(ToolOutput::new(v)) })
            .build()
    }

    #[test]
    fn dots_map_to_underscores_unless_a_pi_name_is_given() {
        assert_eq!(pi_name(&tool("notes.search", None)), "notes_search");
        assert_eq!(pi_name(&tool("a.b.c-d", None)), "a_b_c-d");
        assert_eq!(pi_name(&tool("plain_name", None)), "plain_name");
        assert_eq!(pi_name(&tool("notes.search", Some("find"))), "find");
    }

    #[test]
    fn pi_names_follow_the_providers_rule() {
        assert!(check_pi_name("notes_search-2").is_ok());
        assert_eq!(check_pi_name("").unwrap_err(), "is empty");
        assert_eq!(check_pi_name("a.b").unwrap_err(), "contains `.`");
        assert!(check_pi_name(&"x".repeat(64)).is_ok());
        assert!(check_pi_name(&"x".repeat(65))
            .unwrap_err()
            .contains("the limit is 64"));
    }
}
