//! Generated tools named `tool_000`, `tool_001`: the type keeps the `_`
//! before the digits (`Tool_000`), so the client method is the name's.
use gonk_tools::client::InProcess;
use gonk_tools::prelude::*;

/// Tool zero.
#[tool]
pub async fn tool_000() -> u32 { 0 }

/// Tool one.
#[tool]
pub async fn tool_001() -> u32 { 1 }

/// A name with a version in it.
#[tool(name = "api.v2_status")]
pub async fn api_v2_status() -> String { "ok".into() }

toolset! {
    /// Generated tools.
    pub struct Generated { Tool_000, Tool_001, ApiV2Status }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    Generated::register_tools(&registry).unwrap();
    assert_eq!(Generated::TOOL_NAMES, ["tool_000", "tool_001", "api.v2_status"]);
    let client = GeneratedClient::new(InProcess::new(registry));
    assert_eq!(client.tool_001(NoInput).await.unwrap(), 1);
    assert_eq!(client.api_v2_status(NoInput).await.unwrap(), "ok");
}
