//! Typed composition: [`ToolContext::call`] runs a [`Tool`] by its type
//! through the whole dispatch path, and [`typed_call_input`] is the JSON
//! every typed call sends (the typed clients' too).

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::Tool;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::event::collect_tool_outcome;

impl ToolContext {
    /// Typed composition: calls tool `T` with its input and returns its
    /// output, through the full dispatch path. A detached tool is waited
    /// for, as the typed client waits: the caller wants the output, not a
    /// job handle.
    ///
    /// (A boxed future rather than an `async fn`: when `T` is not a tool,
    /// the compiler reports that once, not once per use of the future.)
    pub fn call<T>(&self, input: T::Input) -> BoxFuture<'static, Result<T::Output, ToolError>>
    where
        T: Tool,
        T::Input: Serialize + JsonSchema,
        T::Output: DeserializeOwned,
    {
        let events = typed_call_input::<T>(&input)
            .map(|input| self.invoke(T::NAME, input))
            .map_err(|e| {
                ToolError::internal(format!(
                    "the input of {} could not be serialized to JSON: {e}",
                    T::NAME
                ))
            });
        Box::pin(async move {
            let output = collect_tool_outcome(events?, |_| {}).await?;
            serde_json::from_value(output.data).map_err(|e| {
                ToolError::internal(format!("output of {} did not match its type: {e}", T::NAME))
            })
        })
    }
}

/// The JSON a typed call of `T` sends: `input` with `None` fields absent
/// (as the input schema describes them) and, for a detached tool, `wait`:
/// a typed call wants the typed output, so the tool runs inline
/// (`gonk_tools::jobs::launch` starts it as a background job instead).
/// The typed clients and [`ToolContext::call`] both send it.
pub(crate) fn typed_call_input<T>(input: &T::Input) -> Result<Value, serde_json::Error>
where
    T: Tool,
    T::Input: Serialize + JsonSchema,
{
    let mut input = crate::schema::encode_input(input)?;
    if T::DETACHED {
        if let Value::Object(object) = &mut input {
            object.insert("wait".into(), Value::Bool(true));
        }
    }
    Ok(input)
}
