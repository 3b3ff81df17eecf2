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

pub use crate::definition::name::{client_method_is, same_client_method};

// ---------------------------------------------------------------------
// Autoref specialization: the generated code attaches the typed handler
// only when the input/output bounds hold. When they do not, a no-op
// fallback is picked instead, so the only error is the spanned assertion
// on the user's type (not a second one on the attribute).

use std::future::Future;
use std::marker::PhantomData;

use futures::Stream;

use crate::definition::{ApprovalSpec, ToolBuilder};
use crate::event::ToolOutput;

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

// ---------------------------------------------------------------------
// The argument a field of `#[prompt(complete(field = ..))]` is: the
// property the arguments' schema names it by, which is serde's name (a
// field under `#[serde(rename_all = ..)]` is found by its Rust name, as
// `mcp_header` finds a header's field). Selected like the handler: without
// a schema, which the spanned requirement reports, the field name stays.

/// Picks [`SelectTypedProperty`] when `A: JsonSchema`.
pub struct SelectProperty<A>(PhantomData<fn() -> A>);

impl<A> SelectProperty<A> {
    /// The selector.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        SelectProperty(PhantomData)
    }
}

/// Preferred by method resolution.
pub trait SelectTypedProperty {
    /// The property of `A`'s schema that the field `field` is.
    fn property(&self, field: &str) -> String;
}

impl<A: JsonSchema> SelectTypedProperty for &SelectProperty<A> {
    fn property(&self, field: &str) -> String {
        let schema = crate::schema::input_schema_for::<A>();
        schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
            .and_then(|properties| crate::definition::mcp_header::resolve(properties, field))
            .unwrap_or(field)
            .to_owned()
    }
}

/// Taken when [`SelectTypedProperty`] does not apply.
pub trait SelectFallbackProperty {
    /// The field name as it is.
    fn property(&self, field: &str) -> String;
}

impl<A> SelectFallbackProperty for SelectProperty<A> {
    fn property(&self, field: &str) -> String {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_eq_in_constants() {
        const SAME: bool = str_eq("a.b", "a.b");
        assert!(SAME && !str_eq("a.b", "a.c") && !str_eq("a", "ab"));
    }

    // `&&` is how generated code selects; without a schema it is needless.
    #[allow(clippy::needless_borrow)]
    #[test]
    fn a_field_is_the_property_serde_names_it_by() {
        #[derive(serde::Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct Args {
            note_id: u64,
            #[serde(rename = "topic")]
            tag: String,
        }
        let select = SelectProperty::<Args>::new();
        assert_eq!((&&select).property("note_id"), "noteId");
        // A field renamed on its own cannot be found by its Rust name.
        assert_eq!((&&select).property("tag"), "tag");
        // Without a schema (an error reported elsewhere) the name stays.
        struct NoSchema;
        let _ = NoSchema;
        assert_eq!((&&SelectProperty::<NoSchema>::new()).property("a_b"), "a_b");
    }
}
