//! [`Resource`]: a resource known at compile time, as `#[resource]` makes
//! it — its URI template, the type of its variables, its definition.
//!
//! (Placeholder of the `macros` branch's file of the same name, which
//! holds this trait and more: on merge, that file wins.)

use super::ResourceDefinition;

/// A resource known at compile time: its URI (or URI template), the type
/// of its template variables, and its definition.
///
/// `#[resource("notes://{id}")]` implements it on a unit struct named like
/// the fn (`async fn note` → `Note`), so code that builds a URI or reads the
/// resource names a type the compiler checks, not a string.
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
