//! What the types of a `#[tool]` fn must be, one trait per requirement,
//! each implemented for every type that meets it. `#[tool]` checks them on
//! the user's types, so a missing derive is one error on that type, in
//! words that say what to add (`#[diagnostic::on_unimplemented]`); the
//! blanket impls are `#[diagnostic::do_not_recommend]`, so the compiler
//! names the requirement instead of listing unrelated impls of serde's
//! traits.
//!
//! Each trait has a hidden `CHECK` constant: the macro writes
//! `let () = <T as DeserializeInput>::CHECK;` spanned on `T`. (No
//! supertraits on those: the compiler would report a missing supertrait in
//! its own words before the requirement's. The client traits keep theirs,
//! as bounds of `CallTool`, where they read well.)

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::ToolError;

/// A tool input: deserialized from the caller's JSON arguments.
#[diagnostic::on_unimplemented(
    message = "the tool input `{Self}` does not implement `Deserialize`",
    label = "add `#[derive(Deserialize)]` to `{Self}`",
    note = "a tool's input is deserialized from the caller's JSON arguments"
)]
pub trait DeserializeInput {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> DeserializeInput for T {}

/// A tool input: its JSON Schema is what clients see and what every call
/// is validated against.
#[diagnostic::on_unimplemented(
    message = "the tool input `{Self}` does not implement `JsonSchema`",
    label = "add `#[derive(JsonSchema)]` to `{Self}`",
    note = "the input schema that clients see, and that every call is validated against, is derived from the input type"
)]
pub trait InputSchema {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> InputSchema for T {}

/// A tool output: sent to the caller as JSON.
#[diagnostic::on_unimplemented(
    message = "the tool output `{Self}` does not implement `Serialize`",
    label = "add `#[derive(Serialize)]` to `{Self}`",
    note = "a tool's output is sent to the caller as JSON"
)]
pub trait SerializeOutput {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> SerializeOutput for T {}

/// A tool output with a JSON Schema: the advertised output schema.
#[diagnostic::on_unimplemented(
    message = "the tool output `{Self}` does not implement `JsonSchema`",
    label = "add `#[derive(JsonSchema)]` to `{Self}`, or opt out with `#[tool(output_schema = false)]`",
    note = "the advertised output schema is derived from the output type"
)]
pub trait OutputSchema {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> OutputSchema for T {}

/// The error of a tool returning `Result<O, E>`: anything that converts
/// into a [`ToolError`].
#[diagnostic::on_unimplemented(
    message = "the tool error `{Self}` does not convert into `ToolError`",
    label = "implement `From<{Self}> for ToolError`, or return another error type",
    note = "dispatch reports a tool's error with a code: implement `From<{Self}> for gonk_tools::ToolError` to choose it (`ToolError::new(ErrorCode::custom(\"NOT_FOUND\"), ..)`)",
    note = "or return `Box<dyn std::error::Error + Send + Sync>`, or `anyhow::Result` with the `anyhow` feature: an `INTERNAL` error carrying the error chain"
)]
pub trait IntoToolError {
    /// Converts the error.
    fn into_tool_error(self) -> ToolError;
}

#[diagnostic::do_not_recommend]
impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
    }
}

/// The input of a tool called through a typed client: serialized to JSON.
#[diagnostic::on_unimplemented(
    message = "the tool input `{Self}` does not implement `Serialize`, so a typed client cannot send it",
    label = "add `#[derive(Serialize)]` to `{Self}`",
    note = "a typed client serializes each tool's input to JSON; a tool set that is only served needs no `Serialize`"
)]
pub trait ClientInput: Serialize {}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ClientInput for T {}

/// The output of a tool called through a typed client: deserialized from
/// JSON.
#[diagnostic::on_unimplemented(
    message = "the tool output `{Self}` does not implement `Deserialize`, so a typed client cannot read it",
    label = "add `#[derive(Deserialize)]` to `{Self}`",
    note = "a typed client deserializes each tool's output from JSON; a tool set that is only served needs no `Deserialize`"
)]
pub trait ClientOutput: DeserializeOwned {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> ClientOutput for T {}
