//! [`Prompt`]: a prompt known at compile time, as `#[prompt]` makes it —
//! its name, its arguments type, its definition —; and what `#[prompt]`
//! requires of the fn's types ([`DeserializeArguments`],
//! [`ArgumentsSchema`], [`PromptOutput`]), each a trait whose message says
//! what to add, checked on the user's type.

use std::future::Future;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::{IntoPromptResult, PromptBuilder, PromptDefinition};
use crate::context::ToolContext;
use crate::error::ToolError;

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

/// A prompt's arguments struct: deserialized from the client's arguments.
#[diagnostic::on_unimplemented(
    message = "the prompt arguments `{Self}` do not implement `Deserialize`",
    label = "add `#[derive(Deserialize)]` to `{Self}`",
    note = "a prompt's arguments arrive as strings, are converted to the field types and deserialized"
)]
pub trait DeserializeArguments {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> DeserializeArguments for T {}

/// A prompt's arguments struct: its schema's properties are the
/// advertised arguments.
#[diagnostic::on_unimplemented(
    message = "the prompt arguments `{Self}` do not implement `JsonSchema`",
    label = "add `#[derive(JsonSchema)]` to `{Self}`",
    note = "the advertised arguments (names, descriptions, which are required) come from the struct's schema"
)]
pub trait ArgumentsSchema {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> ArgumentsSchema for T {}

/// What a `#[prompt]` fn returns: its messages.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt's messages",
    label = "return `String` (one user message), `PromptMessage`, `Vec<PromptMessage>` or `PromptResult`"
)]
pub trait PromptOutput {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: IntoPromptResult> PromptOutput for T {}

/// Autoref selection for `#[prompt]`: the handler is attached only when
/// the arguments and the output meet the builder's bounds; otherwise a
/// no-op is picked, so the only error is the spanned requirement above
/// on the user's type. Not a public API.
#[doc(hidden)]
pub mod __select {
    use super::*;

    /// Picks [`Typed`] when `A` and `O` meet the handler's bounds.
    pub struct Select<A, O>(PhantomData<fn() -> (A, O)>);

    impl<A, O> Select<A, O> {
        /// The selector.
        #[allow(clippy::new_without_default)]
        pub fn new() -> Self {
            Select(PhantomData)
        }
    }

    /// The bounds hold.
    pub struct Typed<A, O>(PhantomData<fn() -> (A, O)>);

    /// The bounds do not hold; a spanned requirement reports why.
    pub struct Fallback;

    /// Preferred by method resolution.
    pub trait SelectTyped<A, O> {
        /// Selects [`Typed`].
        fn select(&self) -> Typed<A, O>;
    }

    impl<A, O> SelectTyped<A, O> for &Select<A, O>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: IntoPromptResult + Send + 'static,
    {
        fn select(&self) -> Typed<A, O> {
            Typed(PhantomData)
        }
    }

    /// Taken when [`SelectTyped`] does not apply.
    pub trait SelectFallback {
        /// Selects [`Fallback`].
        fn select(&self) -> Fallback;
    }

    impl<A, O> SelectFallback for Select<A, O> {
        fn select(&self) -> Fallback {
            Fallback
        }
    }

    impl<A, O> Typed<A, O>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: IntoPromptResult + Send + 'static,
    {
        /// [`PromptBuilder::handler`].
        pub fn handler<F, Fut>(self, builder: PromptBuilder, f: F) -> PromptBuilder
        where
            F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
        {
            builder.handler(f)
        }
    }

    impl Fallback {
        /// Leaves the builder as it is.
        pub fn handler<F>(self, builder: PromptBuilder, _f: F) -> PromptBuilder {
            builder
        }
    }
}
