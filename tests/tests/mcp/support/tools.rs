//! Tools and guards several MCP tests register.

use std::sync::Arc;

use gonk_tools::prelude::*;
use tokio::sync::Notify;

/// `quick`: answers `"ok"` at once.
pub fn quick() -> ToolDefinition {
    ToolDefinition::builder("quick")
        .description("Answers at once.")
        .approval(ApprovalTier::Read)
        .handler(|_: NoInput, _ctx: ToolContext| async move { Ok::<_, ToolError>("ok") })
        .build()
}

/// Notifies when dropped: a handler future holding it was dropped.
pub struct Dropped(pub Arc<Notify>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}
