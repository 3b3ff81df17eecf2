//! The [`Tool`] trait: a tool known at compile time, as `#[tool]` makes it.

use crate::definition::ToolDefinition;

/// A tool known at compile time. `#[tool]` implements it on a generated
/// type (`notes_search` → `NotesSearch`); typed composition
/// ([`ToolContext::call`](crate::context::ToolContext::call)) and typed
/// clients use it so a call cannot name a tool that does not exist.
pub trait Tool {
    /// The registered name.
    const NAME: &'static str;
    /// The input type.
    type Input;
    /// The output data type.
    type Output;
    /// The full definition, ready to register.
    fn definition() -> ToolDefinition;
}
