//! Helpers the macros expand to. Not a public API: names and signatures
//! change without notice.

pub use async_stream;
pub use futures;
pub use schemars;
pub use serde;
pub use serde_json;

use futures::future::{ready, Either, Ready};
use futures::stream::{once, Once};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::event::ToolEvent;
use crate::state::State;

/// Extracts `State<T>` for a `State<T>` parameter. Registration already
/// checked that the registry holds a `T`; a context made outside dispatch
/// gets `INTERNAL`, never a panic.
pub fn state<T: Send + Sync + 'static>(ctx: &ToolContext) -> Result<State<T>, ToolError> {
    ctx.state::<T>().ok_or_else(|| {
        ToolError::internal(format!(
            "tool {} needs application state `{}`, and the registry running it holds none; \
             provide it with ToolRegistry::builder().state(..) or insert_state(..)",
            ctx.tool_name().unwrap_or("?"),
            std::any::type_name::<T>()
        ))
    })
}

/// `E: Into<ToolError>` for a handler's error type.
pub fn into_tool_error<E: ToolErrorType>(error: E) -> ToolError {
    error.into()
}

/// A streaming handler's stream, or the error that stopped it before it
/// started (missing state).
pub type StreamOr<S, O> = Either<S, Once<Ready<ToolEvent<O>>>>;

/// See [`StreamOr`].
pub fn stream_or_error<S, O>(result: Result<S, ToolError>) -> StreamOr<S, O> {
    match result {
        Ok(stream) => Either::Left(stream),
        Err(error) => Either::Right(once(ready(ToolEvent::error(error)))),
    }
}

/// Bound of a `#[tool]` input type: deserializable.
#[diagnostic::on_unimplemented(
    message = "the tool input `{Self}` does not implement `Deserialize`",
    label = "add `#[derive(Deserialize)]` to `{Self}`",
    note = "a tool's input is deserialized from the caller's JSON arguments"
)]
pub trait InputDeserialize: DeserializeOwned {}
impl<T: DeserializeOwned> InputDeserialize for T {}

/// Bound of a `#[tool]` input type: has a JSON Schema.
#[diagnostic::on_unimplemented(
    message = "the tool input `{Self}` does not implement `JsonSchema`",
    label = "add `#[derive(JsonSchema)]` to `{Self}`",
    note = "the input schema that clients see, and that every call is validated against, is derived from the input type"
)]
pub trait InputSchema: JsonSchema {}
impl<T: JsonSchema> InputSchema for T {}

/// Bound of a `#[tool]` output type: serializable.
#[diagnostic::on_unimplemented(
    message = "the tool output `{Self}` does not implement `Serialize`",
    label = "add `#[derive(Serialize)]` to `{Self}`",
    note = "a tool's output is sent to the caller as JSON"
)]
pub trait OutputSerialize: Serialize {}
impl<T: Serialize> OutputSerialize for T {}

/// Bound of a `#[tool]` output type with an output schema.
#[diagnostic::on_unimplemented(
    message = "the tool output `{Self}` does not implement `JsonSchema`",
    label = "add `#[derive(JsonSchema)]` to `{Self}`, or opt out with `#[tool(output_schema = false)]`",
    note = "the advertised output schema is derived from the output type"
)]
pub trait OutputSchema: JsonSchema {}
impl<T: JsonSchema> OutputSchema for T {}

/// Bound of a handler's error type.
#[diagnostic::on_unimplemented(
    message = "the tool error `{Self}` does not convert into `ToolError`",
    label = "implement `From<{Self}> for gonk_tools::ToolError`",
    note = "a handler returning `Result<O, E>` needs `E: Into<ToolError>` so dispatch can report the error with a code"
)]
pub trait ToolErrorType: Into<ToolError> {}
impl<T: Into<ToolError>> ToolErrorType for T {}

/// Bound of a typed client's input: serializable.
#[diagnostic::on_unimplemented(
    message = "the input `{Self}` of a tool in a tool set does not implement `Serialize`",
    label = "add `#[derive(Serialize)]` to `{Self}`",
    note = "the typed client of a tool set serializes each tool's input to JSON"
)]
pub trait ClientInput: Serialize {}
impl<T: Serialize> ClientInput for T {}

/// Bound of a typed client's output: deserializable.
#[diagnostic::on_unimplemented(
    message = "the output `{Self}` of a tool in a tool set does not implement `Deserialize`",
    label = "add `#[derive(Deserialize)]` to `{Self}`",
    note = "the typed client of a tool set deserializes each tool's output from JSON"
)]
pub trait ClientOutput: DeserializeOwned {}
impl<T: DeserializeOwned> ClientOutput for T {}

/// Spanned assertion: `T` is a valid tool input.
pub fn assert_input_deserialize<T: InputDeserialize>() {}
/// Spanned assertion: `T` is a valid tool input.
pub fn assert_input_schema<T: InputSchema>() {}
/// Spanned assertion: `T` is a valid tool output.
pub fn assert_output_serialize<T: OutputSerialize>() {}
/// Spanned assertion: `T` has an output schema.
pub fn assert_output_schema<T: OutputSchema>() {}
/// Spanned assertion: `T` is a valid client input.
pub fn assert_client_input<T: ClientInput>() {}
/// Spanned assertion: `T` is a valid client output.
pub fn assert_client_output<T: ClientOutput>() {}
/// Spanned assertion: `T` is a tool (for `toolset!` entries).
pub fn assert_tool<T: crate::tool::StaticTool>() {}

/// `a == b`, usable in constants.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The longest client method name: a 128-character tool name with an
/// `_` before every hump.
const METHOD_MAX: usize = 256;

/// The client method of a tool name, in constants: separators (`.`, `-`)
/// become `_`, an upper-case letter after a lower-case letter or digit
/// starts a new `_` word, everything is lower-cased. Must agree with the
/// macros' `client_method` (tested in both crates).
pub const fn client_method(name: &str) -> ([u8; METHOD_MAX], usize) {
    let name = name.as_bytes();
    let mut out = [0u8; METHOD_MAX];
    let mut len = 0;
    let mut i = 0;
    while i < name.len() && len + 2 <= METHOD_MAX {
        let c = name[i];
        if c == b'.' || c == b'-' || c == b'_' {
            out[len] = b'_';
            len += 1;
        } else if c.is_ascii_uppercase() {
            if i > 0 && (name[i - 1].is_ascii_lowercase() || name[i - 1].is_ascii_digit()) {
                out[len] = b'_';
                len += 1;
            }
            out[len] = c.to_ascii_lowercase();
            len += 1;
        } else {
            out[len] = c;
            len += 1;
        }
        i += 1;
    }
    (out, len)
}

/// Whether the client method of tool name `name` is `method`.
pub const fn client_method_is(name: &str, method: &str) -> bool {
    let (out, len) = client_method(name);
    let method = method.as_bytes();
    if method.len() != len {
        return false;
    }
    let mut i = 0;
    while i < len {
        if out[i] != method[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether two tool names map to the same client method.
pub const fn same_client_method(a: &str, b: &str) -> bool {
    let (a, a_len) = client_method(a);
    let (b, b_len) = client_method(b);
    if a_len != b_len {
        return false;
    }
    let mut i = 0;
    while i < a_len {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

// ---------------------------------------------------------------------
// Autoref specialization: the generated code attaches the typed handler
// only when the input/output bounds hold. When they do not, a no-op
// fallback is picked instead, so the only error is the spanned assertion
// on the user's type (not a second one on the attribute).

use std::future::Future;
use std::marker::PhantomData;

use futures::Stream;

use crate::client::{ClientError, Transport};
use crate::definition::{ApprovalSpec, ToolBuilder};
use crate::outcome::ToolOutput;
use crate::tool::Tool;

/// Picks [`Typed`] when `I` and `O` satisfy the handler bounds.
pub struct Select<I, O>(PhantomData<fn() -> (I, O)>);

impl<I, O> Select<I, O> {
    /// The selector.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Select(PhantomData)
    }
}

/// The handler bounds hold.
pub struct Typed<I, O>(PhantomData<fn() -> (I, O)>);

/// The handler bounds do not hold; a spanned assertion reports why.
pub struct Fallback;

/// Preferred by method resolution (`(&&Select::<I, O>::new()).select()`).
pub trait SelectTyped<I, O> {
    /// Selects [`Typed`].
    fn select(&self) -> Typed<I, O>;
}

impl<I, O> SelectTyped<I, O> for &Select<I, O>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + Send + 'static,
{
    fn select(&self) -> Typed<I, O> {
        Typed(PhantomData)
    }
}

/// Taken when [`SelectTyped`] does not apply.
pub trait SelectFallback {
    /// Selects [`Fallback`].
    fn select(&self) -> Fallback;
}

impl<I, O> SelectFallback for Select<I, O> {
    fn select(&self) -> Fallback {
        Fallback
    }
}

impl<I, O> Typed<I, O>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + Send + 'static,
{
    /// [`ToolBuilder::handler`].
    pub fn handler<F, Fut>(self, builder: ToolBuilder, f: F) -> ToolBuilder
    where
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    {
        builder.handler(f)
    }

    /// [`ToolBuilder::handler_with_output`].
    pub fn handler_with_output<F, Fut>(self, builder: ToolBuilder, f: F) -> ToolBuilder
    where
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput<O>, ToolError>> + Send + 'static,
    {
        builder.handler_with_output(f)
    }

    /// [`ToolBuilder::stream_handler`].
    pub fn stream_handler<F, Fut, S>(self, builder: ToolBuilder, f: F) -> ToolBuilder
    where
        S: Stream<Item = ToolEvent<O>> + Send + 'static,
        F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = S> + Send + 'static,
    {
        builder.stream_handler(f)
    }

    /// [`ToolBuilder::approval_with`].
    pub fn approval_with<A: Into<ApprovalSpec>>(
        &self,
        builder: ToolBuilder,
        f: impl Fn(&I) -> A + Send + Sync + 'static,
    ) -> ToolBuilder {
        builder.approval_with(f)
    }
}

impl Fallback {
    /// Leaves the builder as it is (compilation fails elsewhere).
    pub fn handler<F>(self, builder: ToolBuilder, _f: F) -> ToolBuilder {
        builder
    }

    /// Leaves the builder as it is (compilation fails elsewhere).
    pub fn handler_with_output<F>(self, builder: ToolBuilder, _f: F) -> ToolBuilder {
        builder
    }

    /// Leaves the builder as it is (compilation fails elsewhere).
    pub fn stream_handler<F>(self, builder: ToolBuilder, _f: F) -> ToolBuilder {
        builder
    }

    /// Leaves the builder as it is (compilation fails elsewhere).
    pub fn approval_with<F>(&self, builder: ToolBuilder, _f: F) -> ToolBuilder {
        builder
    }
}

/// Picks [`TypedSchema`] when `O: JsonSchema`.
pub struct SelectSchema<O>(PhantomData<fn() -> O>);

impl<O> SelectSchema<O> {
    /// The selector.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        SelectSchema(PhantomData)
    }
}

/// `O: JsonSchema` holds.
pub struct TypedSchema<O>(PhantomData<fn() -> O>);

/// Preferred by method resolution.
pub trait SelectTypedSchema<O> {
    /// Selects [`TypedSchema`].
    fn select(&self) -> TypedSchema<O>;
}

impl<O: JsonSchema> SelectTypedSchema<O> for &SelectSchema<O> {
    fn select(&self) -> TypedSchema<O> {
        TypedSchema(PhantomData)
    }
}

/// Taken when [`SelectTypedSchema`] does not apply.
pub trait SelectFallbackSchema {
    /// Selects [`Fallback`].
    fn select(&self) -> Fallback;
}

impl<O> SelectFallbackSchema for SelectSchema<O> {
    fn select(&self) -> Fallback {
        Fallback
    }
}

impl<O: JsonSchema> TypedSchema<O> {
    /// [`ToolBuilder::output_schema_for`].
    pub fn output_schema(self, builder: ToolBuilder) -> ToolBuilder {
        builder.output_schema_for::<O>()
    }
}

impl Fallback {
    /// Leaves the builder as it is (compilation fails elsewhere).
    pub fn output_schema(self, builder: ToolBuilder) -> ToolBuilder {
        builder
    }
}

/// Picks [`TypedClient`] when tool `T`'s input and output can cross a
/// transport.
pub struct SelectClient<T>(PhantomData<fn() -> T>);

impl<T> SelectClient<T> {
    /// The selector.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        SelectClient(PhantomData)
    }
}

/// The client bounds hold.
pub struct TypedClient<T>(PhantomData<fn() -> T>);

/// Preferred by method resolution.
pub trait SelectTypedClient<T> {
    /// Selects [`TypedClient`].
    fn select(&self) -> TypedClient<T>;
}

impl<T> SelectTypedClient<T> for &SelectClient<T>
where
    T: Tool,
    T::Input: Serialize + JsonSchema,
    T::Output: DeserializeOwned,
{
    fn select(&self) -> TypedClient<T> {
        TypedClient(PhantomData)
    }
}

/// Taken when [`SelectTypedClient`] does not apply.
pub trait SelectFallbackClient {
    /// Selects [`Fallback`].
    fn select(&self) -> Fallback;
}

impl<T> SelectFallbackClient for SelectClient<T> {
    fn select(&self) -> Fallback {
        Fallback
    }
}

impl<T> TypedClient<T>
where
    T: Tool,
    T::Input: Serialize + JsonSchema,
    T::Output: DeserializeOwned,
{
    /// [`client::call`](crate::client::call).
    pub async fn call(
        self,
        transport: &(impl Transport + ?Sized),
        input: T::Input,
    ) -> Result<T::Output, ClientError> {
        crate::client::call::<T>(transport, input).await
    }
}

impl Fallback {
    /// Never runs: compilation fails elsewhere.
    pub async fn call<I, O>(
        self,
        _transport: &(impl Transport + ?Sized),
        _input: I,
    ) -> Result<O, ClientError> {
        Err(ClientError::Tool(ToolError::internal(
            "this tool's input or output cannot cross a transport",
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method(name: &str) -> String {
        let (out, len) = client_method(name);
        String::from_utf8(out[..len].to_vec()).unwrap()
    }

    #[test]
    fn client_method_rule() {
        assert_eq!(method("notes.search"), "notes_search");
        assert_eq!(method("fs-read_file"), "fs_read_file");
        assert_eq!(method("notes.createNote"), "notes_create_note");
        assert_eq!(method("v2Api"), "v2_api");
        assert_eq!(method("HTTPGet"), "httpget");
        assert!(client_method_is("notes.search", "notes_search"));
        assert!(!client_method_is("notes.search", "search"));
        assert!(same_client_method("notes.search", "notes_search"));
        assert!(!same_client_method("notes.search", "notes.find"));
        assert!(str_eq("a.b", "a.b") && !str_eq("a.b", "a.c"));
    }
}
