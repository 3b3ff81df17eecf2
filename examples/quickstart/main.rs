//! Registers two tools — one plain, one streaming — invokes them through the
//! registry and prints every event as the JSON a surface would see.
//!
//! Run: `cargo run -p gonk-tools-examples --bin quickstart`

use futures::StreamExt;
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    #[schemars(length(min = 1))]
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Count {
    /// Count up to this number.
    #[schemars(range(min = 1, max = 10))]
    to: u32,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    registry.register_all([
        ToolDefinition::builder("greet")
            .description("Greet someone by name.")
            .approval(ApprovalTier::Read)
            .handler_with_output(|input: Greet, _ctx| async move {
                let text = format!("Hello, {}!", input.name);
                Ok::<_, ToolError>(ToolOutput::new(json!({ "greeting": text })).with_display(text))
            })
            .build(),
        ToolDefinition::builder("count")
            .description("Count up, streaming progress.")
            .approval(ApprovalTier::Read)
            .stream_handler(|input: Count, _ctx| async move {
                let to = input.to;
                futures::stream::iter(1..=to)
                    .map(move |i| {
                        ToolEvent::progress(f64::from(i * 100 / to), Some(format!("{i}/{to}")))
                    })
                    .chain(futures::stream::once(async move { ToolEvent::result(to) }))
            })
            .build(),
    ])?;

    for (name, input) in [
        ("greet", json!({"name": "Ada"})),
        ("count", json!({"to": 3})),
        ("greet", json!({"name": ""})),
        ("missing", json!({})),
    ] {
        println!("$ invoke {name} {input}");
        let mut events = registry.invoke(name, input, ToolContext::new());
        while let Some(event) = events.next().await {
            println!("  {}", serde_json::to_string(&event)?);
        }
    }
    Ok(())
}
