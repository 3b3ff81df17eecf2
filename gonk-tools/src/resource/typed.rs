//! [`Resource`]: a resource known at compile time, as `#[resource]` makes
//! it — its URI template, the type of its variables, its definition —;
//! [`UriVariable`], how `Resource::uri` writes a variable into a URI
//! (RFC 6570 levels 1–2); and what `#[resource]` requires of the fn's
//! types ([`DeserializeVariable`], [`VariableSchema`], [`ResourceOutput`]),
//! each a trait whose message says what to add, checked on the user's type.

use std::future::Future;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::{IntoResourceContents, ResourceBuilder, ResourceDefinition};
use crate::context::ToolContext;
use crate::error::ToolError;

/// A resource known at compile time: its URI (or URI template), the type
/// of its template variables, and its definition.
///
/// `#[resource("notes://{id}")]` implements it on a unit struct named like
/// the fn (`async fn note` → `Note`), so code that builds a URI or reads the
/// resource names a type the compiler checks, not a string.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource: it does not implement `gonk_tools::resource::Resource`",
    label = "not a resource",
    note = "use the type `#[resource]` generates for an async fn: `async fn note` gives `Note`"
)]
pub trait Resource: 'static {
    /// The URI, or the URI template, as advertised (`"notes://{id}"`).
    const URI: &'static str;
    /// The template variables: `()` for a fixed URI, the parameter's type
    /// for one variable, a generated `{Type}Params` struct with one public
    /// field per variable for several.
    type Params;
    /// The full definition, ready to register.
    fn definition() -> ResourceDefinition;
    /// The URI of the resource with these variables: the template
    /// expanded, `{var}` percent-encoded, `{+var}` and `{#var}` keeping
    /// reserved characters such as `/`.
    fn uri(params: &Self::Params) -> String;
}

/// How a template expression writes its variable (RFC 6570 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UriOperator {
    /// `{var}`: everything but unreserved characters (`A-Z a-z 0-9 - . _ ~`)
    /// percent-encoded.
    Simple,
    /// `{+var}`: reserved characters (`/`, `?`, `:`, …) kept as they are.
    Reserved,
    /// `{#var}`: `#`, then the value as for [`Reserved`](UriOperator::Reserved).
    Fragment,
}

/// A value `Resource::uri` can write into a URI: any `Serialize` type. A
/// string is written as it is, a number or a bool as its JSON text, `None`
/// (or a value that fails to serialize) as nothing (RFC 6570's undefined
/// variable), anything else as its JSON text — each percent-encoded for
/// its operator.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written into a resource URI: it does not implement `Serialize`",
    label = "add `#[derive(Serialize)]` to `{Self}`",
    note = "`Resource::uri` writes each template variable into the URI from its serialized value"
)]
pub trait UriVariable {
    /// Appends the expansion of this value to `uri`.
    fn write_uri_variable(&self, operator: UriOperator, uri: &mut String);
}

#[diagnostic::do_not_recommend]
impl<T: Serialize + ?Sized> UriVariable for T {
    fn write_uri_variable(&self, operator: UriOperator, uri: &mut String) {
        let text = match serde_json::to_value(self) {
            Ok(Value::String(s)) => s,
            Ok(Value::Null) | Err(_) => return,
            Ok(other) => other.to_string(),
        };
        if operator == UriOperator::Fragment {
            uri.push('#');
        }
        percent_encode(&text, operator != UriOperator::Simple, uri);
    }
}

/// A template variable's type: deserialized from the URI's text.
#[diagnostic::on_unimplemented(
    message = "the template variable type `{Self}` does not implement `Deserialize`",
    label = "add `#[derive(Deserialize)]` to `{Self}`",
    note = "a template variable is read from the URI: its text is converted to the type its schema asks for, then deserialized"
)]
pub trait DeserializeVariable {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> DeserializeVariable for T {}

/// A template variable's type: its JSON Schema says what a URI's text
/// must be (an integer, a boolean, a string).
#[diagnostic::on_unimplemented(
    message = "the template variable type `{Self}` does not implement `JsonSchema`",
    label = "add `#[derive(JsonSchema)]` to `{Self}`",
    note = "a read's variables are validated against their schema before the fn runs"
)]
pub trait VariableSchema {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema> VariableSchema for T {}

/// What a `#[resource]` fn returns: its contents.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not resource contents",
    label = "return `String` (text), `Vec<u8>` (bytes), `ResourceContents`, `Vec<ResourceContents>` or `Json<T>`",
    note = "wrap a value to send as JSON in `gonk_tools::resource::Json(..)`"
)]
pub trait ResourceOutput {
    #[doc(hidden)]
    const CHECK: () = ();
}

#[diagnostic::do_not_recommend]
impl<T: IntoResourceContents> ResourceOutput for T {}

/// Autoref selection for `#[resource]`: the handler is attached only when
/// the variables and the output meet the builder's bounds; otherwise a
/// no-op is picked, so the only error is the spanned requirement above
/// on the user's type. Not a public API.
#[doc(hidden)]
pub mod __select {
    use super::*;

    /// Picks [`Typed`] when `V` and `O` meet the handler's bounds.
    pub struct Select<V, O>(PhantomData<fn() -> (V, O)>);

    impl<V, O> Select<V, O> {
        /// The selector.
        #[allow(clippy::new_without_default)]
        pub fn new() -> Self {
            Select(PhantomData)
        }
    }

    /// The bounds hold.
    pub struct Typed<V, O>(PhantomData<fn() -> (V, O)>);

    /// The bounds do not hold; a spanned requirement reports why.
    pub struct Fallback;

    /// Preferred by method resolution.
    pub trait SelectTyped<V, O> {
        /// Selects [`Typed`].
        fn select(&self) -> Typed<V, O>;
    }

    impl<V, O> SelectTyped<V, O> for &Select<V, O>
    where
        V: DeserializeOwned + JsonSchema + Send + 'static,
        O: IntoResourceContents + Send + 'static,
    {
        fn select(&self) -> Typed<V, O> {
            Typed(PhantomData)
        }
    }

    /// Taken when [`SelectTyped`] does not apply.
    pub trait SelectFallback {
        /// Selects [`Fallback`].
        fn select(&self) -> Fallback;
    }

    impl<V, O> SelectFallback for Select<V, O> {
        fn select(&self) -> Fallback {
            Fallback
        }
    }

    impl<V, O> Typed<V, O>
    where
        V: DeserializeOwned + JsonSchema + Send + 'static,
        O: IntoResourceContents + Send + 'static,
    {
        /// [`ResourceBuilder::handler`].
        pub fn handler<F, Fut>(self, builder: ResourceBuilder, f: F) -> ResourceBuilder
        where
            F: Fn(V, ToolContext) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
        {
            builder.handler(f)
        }
    }

    impl Fallback {
        /// Leaves the builder as it is.
        pub fn handler<F>(self, builder: ResourceBuilder, _f: F) -> ResourceBuilder {
            builder
        }
    }
}

/// RFC 3986's unreserved characters.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986's reserved characters (gen-delims and sub-delims).
fn reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

/// Appends `text` to `out`, percent-encoding every byte that is not
/// unreserved (nor reserved, with `keep_reserved`). A `%` is always
/// encoded, so the URI reads back to the same value
/// ([`UriTemplate::matches`](super::UriTemplate::matches) decodes), as
/// [`UriTemplate::expand`](super::UriTemplate::expand) does.
fn percent_encode(text: &str, keep_reserved: bool, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in text.bytes() {
        if unreserved(b) || (keep_reserved && reserved(b)) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(value: &(impl Serialize + ?Sized), operator: UriOperator) -> String {
        let mut uri = String::new();
        value.write_uri_variable(operator, &mut uri);
        uri
    }

    #[test]
    fn rfc_6570_examples() {
        // RFC 6570 §1.2, levels 1 and 2.
        assert_eq!(expand("value", UriOperator::Simple), "value");
        assert_eq!(
            expand("Hello World!", UriOperator::Simple),
            "Hello%20World%21"
        );
        assert_eq!(
            expand("Hello World!", UriOperator::Reserved),
            "Hello%20World!"
        );
        assert_eq!(expand("/foo/bar", UriOperator::Simple), "%2Ffoo%2Fbar");
        assert_eq!(expand("/foo/bar", UriOperator::Reserved), "/foo/bar");
        assert_eq!(expand("value", UriOperator::Fragment), "#value");
        assert_eq!(
            expand("Hello World!", UriOperator::Fragment),
            "#Hello%20World!"
        );
        // `%` is data, not an escape: the URI reads back to the value.
        assert_eq!(expand("50%25", UriOperator::Reserved), "50%2525");
        assert_eq!(expand("50%25", UriOperator::Simple), "50%2525");
        assert_eq!(expand("ü", UriOperator::Simple), "%C3%BC");
    }

    #[test]
    fn typed_values() {
        assert_eq!(expand(&42u64, UriOperator::Simple), "42");
        assert_eq!(expand(&-1.5f64, UriOperator::Simple), "-1.5");
        assert_eq!(expand(&true, UriOperator::Simple), "true");
        // Undefined: nothing, not even the fragment's `#`.
        assert_eq!(expand(&None::<String>, UriOperator::Fragment), "");
        assert_eq!(expand(&Some("a b"), UriOperator::Simple), "a%20b");
    }
}
