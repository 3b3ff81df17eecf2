//! The [`Tool`] trait: a tool known at compile time, as `#[tool]` makes it,
//! and the two ways to get its definition ([`StaticTool`] for free
//! functions, [`MethodTool`] for `&self` methods of a `#[tools]` impl).

use std::fmt;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Serialize, Serializer};

use crate::definition::ToolDefinition;

/// A tool known at compile time: its name and its input and output types.
///
/// `#[tool]` implements it on a generated type (`notes_search` →
/// `NotesSearch`). Typed composition
/// ([`ToolContext::call`](crate::context::ToolContext::call)) and typed
/// clients ([`client`](crate::client)) take a `Tool` type parameter, so a
/// call cannot name a tool that does not exist and its input and output
/// are checked by the compiler.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool: it does not implement `gonk_tools::Tool`",
    label = "not a tool",
    note = "use the type `#[tool]` generates for an async fn: `async fn notes_search` gives `NotesSearch`",
    note = "a tool defined at run time (the builder) has no type; call it by name with `ctx.invoke(name, json)`"
)]
pub trait Tool: 'static {
    /// The registered name.
    const NAME: &'static str;
    /// The input type ([`NoInput`] for a tool without an input parameter).
    type Input: 'static;
    /// The output data type.
    type Output: 'static;
}

/// A [`Tool`] whose definition needs nothing but its type: what `#[tool]`
/// generates for a free `async fn`.
pub trait StaticTool: Tool {
    /// The full definition, ready to register.
    fn definition() -> ToolDefinition;
}

/// A [`Tool`] that is an `&self` method: its definition captures the
/// receiver. `#[tools]` on an impl block generates it for every `#[tool]`
/// method.
pub trait MethodTool: Tool {
    /// The type whose method this is.
    type Receiver: Send + Sync + 'static;
    /// The definition of the tool bound to `receiver`.
    fn definition(receiver: Arc<Self::Receiver>) -> ToolDefinition;
}

/// The input of a tool that takes none: it is advertised as the empty
/// object schema, serializes as `{}`, and accepts any object (or `null`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NoInput;

impl Serialize for NoInput {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        serializer.serialize_map(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for NoInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NoInputVisitor;
        impl<'de> Visitor<'de> for NoInputVisitor {
            type Value = NoInput;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object (this tool takes no input)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoInput, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(NoInput)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<NoInput, E> {
                Ok(NoInput)
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<NoInput, E> {
                Ok(NoInput)
            }
        }
        deserializer.deserialize_any(NoInputVisitor)
    }
}

impl JsonSchema for NoInput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoInput".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({ "type": "object", "properties": {} })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_input_is_the_empty_object() {
        assert_eq!(serde_json::to_value(NoInput).unwrap(), serde_json::json!({}));
        let parsed: NoInput = serde_json::from_value(serde_json::json!({"x": 1})).unwrap();
        assert_eq!(parsed, NoInput);
        assert!(serde_json::from_value::<NoInput>(serde_json::json!(3)).is_err());
        assert_eq!(
            crate::schema::input_schema_for::<NoInput>(),
            crate::schema::empty_object_schema()
        );
    }
}
