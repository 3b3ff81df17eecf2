//! A crate set up exactly as the README says (its `cargo add` lines, run by
//! `tests/tests/fresh_crate.rs`), with nothing else: derives from the
//! prelude, a tool returning `anyhow::Result`, a tool set and its client.

use gonk_tools::client::InProcess;
use gonk_tools::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
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

#[derive(Serialize, Deserialize, JsonSchema)]
struct Number {
    /// A number, as text.
    text: String,
}

/// Parse a number.
#[tool]
async fn parse(input: Number) -> anyhow::Result<i64> {
    use anyhow::Context;
    let text = input.text;
    text.parse().with_context(|| format!("`{text}` is not a number"))
}

toolset! {
    /// Both tools.
    pub struct Tools { Greet, Parse }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    Tools::register_tools(&registry)?;
    let tools = ToolsClient::new(InProcess::new(registry));
    let greeting = tools.greet(Person { name: "Ada".into() }).await?;
    let number = tools.parse(Number { text: "42".into() }).await?;
    let error = tools.parse(Number { text: "x".into() }).await.unwrap_err();
    let error = error.tool_error().expect("the tool's error");
    assert_eq!(error.code, ErrorCode::Internal);
    println!("{greeting} {number} {}", error.message);
    Ok(())
}
