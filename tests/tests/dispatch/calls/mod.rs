//! A call through dispatch on the unauthenticated path: look-up and
//! schema enforcement, handler forms and panics, cancellation, composition
//! and cycles, output validation.

mod cancellation;
mod composition;
mod handlers;
mod input;

use futures::StreamExt;
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

async fn events(registry: &ToolRegistry, name: &str, input: serde_json::Value) -> Vec<ToolEvent> {
    registry
        .invoke(name, input, ToolContext::new())
        .collect()
        .await
}

async fn outcome(
    registry: &ToolRegistry,
    name: &str,
    input: serde_json::Value,
) -> Result<ToolOutput, ToolError> {
    collect_tool_outcome(registry.invoke(name, input, ToolContext::new()), |_| {}).await
}
