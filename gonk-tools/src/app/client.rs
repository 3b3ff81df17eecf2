//! [`UiCapability`]: what a client declared of the extension, as a host
//! value on the context of the calls it makes.

use serde::{Deserialize, Serialize};

use super::MIME_TYPE;

/// The settings a client declared for `io.modelcontextprotocol/ui`
/// (`capabilities.extensions["io.modelcontextprotocol/ui"]`). A surface
/// that knows its client renders apps puts one on each call's context
/// (`ToolContext::with_host`); a tool asks
/// [`ToolContext::ui_supported`](crate::ToolContext::ui_supported).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCapability {
    #[serde(default)]
    mime_types: Vec<String>,
}

impl UiCapability {
    /// A client that renders `mime_types` (MCP Apps:
    /// `text/html;profile=mcp-app`).
    pub fn new<S: Into<String>>(mime_types: impl IntoIterator<Item = S>) -> Self {
        UiCapability {
            mime_types: mime_types.into_iter().map(Into::into).collect(),
        }
    }

    /// The MIME types the client renders, as it declared them.
    pub fn mime_types(&self) -> &[String] {
        &self.mime_types
    }

    /// Whether the client renders MCP Apps (`text/html;profile=mcp-app`
    /// is among its MIME types).
    pub fn renders_apps(&self) -> bool {
        self.mime_types.iter().any(|m| m == MIME_TYPE)
    }
}
