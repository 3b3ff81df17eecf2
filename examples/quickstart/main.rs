//! Two tools, from a bare `#[tool]` to one with attributes and a stream:
//! registered, invoked through the registry, every event printed as the
//! JSON a surface would see.
//!
//! Run: `cargo run -p gonk-tools-examples --bin quickstart`

use futures::{Stream, StreamExt};
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Person {
    /// Who to greet.
    #[schemars(length(min = 1))]
    name: String,
}

/// Greet someone by name.
#[tool]
async fn greet(person: Person) -> String {
    format!("Hello, {}!", person.name)
}

#[derive(Deserialize, JsonSchema)]
struct CountTo {
    /// Count up to this number.
    #[schemars(range(min = 1, max = 10))]
    to: u32,
}

/// Count up, streaming progress.
#[tool(approval = "read", capabilities(idempotent), latency = "seconds")]
async fn count(input: CountTo) -> impl Stream<Item = ToolEvent<u32>> {
    gonk_tools::stream! {
        for i in 1..=input.to {
            yield ToolEvent::progress(f64::from(i * 100 / input.to), Some(format!("{i}/{}", input.to)));
        }
        yield ToolEvent::result(input.to);
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    registry.register_all([Greet::definition(), Count::definition()])?;

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
