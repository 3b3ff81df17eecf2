//! Generated code uses absolute paths: nothing is imported here.

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct Input {
    pub a: i64,
}

/// Doubles a number.
#[gonk_tools::tool(name = "double")]
pub async fn double(input: Input, ctx: gonk_tools::ToolContext) -> Result<i64, gonk_tools::ToolError> {
    let _ = ctx;
    Ok(input.a * 2)
}

gonk_tools::toolset! {
    /// A set.
    pub struct Math { Double }
}

pub struct Thing;

#[gonk_tools::tools]
impl Thing {
    /// Says hi.
    #[tool(name = "thing.hi")]
    pub async fn hi(&self) -> String { "hi".into() }
}

fn main() {
    let registry = gonk_tools::ToolRegistry::new();
    Math::register_tools(&registry).unwrap();
    std::sync::Arc::new(Thing).register_tools(&registry).unwrap();
    let _client = MathClient::new(gonk_tools::client::InProcess::new(registry.clone()));
    let _client = ThingClient::new(gonk_tools::client::InProcess::new(registry));
}
