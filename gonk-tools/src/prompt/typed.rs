//! [`Prompt`]: a prompt known at compile time, as `#[prompt]` makes it —
//! its name, its arguments type, its definition.

use super::PromptDefinition;

/// A prompt known at compile time: its name, the struct of its arguments,
/// and its definition.
///
/// `#[prompt]` implements it on a unit struct named like the fn
/// (`async fn summarize` → `Summarize`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt: it does not implement `gonk_tools::prompt::Prompt`",
    label = "not a prompt",
    note = "use the type `#[prompt]` generates for an async fn: `async fn summarize` gives `Summarize`"
)]
pub trait Prompt: 'static {
    /// The registered name.
    const NAME: &'static str;
    /// The arguments struct (its fields are the prompt's arguments), or
    /// [`NoInput`](crate::NoInput) for a prompt without arguments.
    type Arguments;
    /// The full definition, ready to register.
    fn definition() -> PromptDefinition;
}
