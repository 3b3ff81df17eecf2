//! The tool itself as the resource of `tool.discover` / `tool.invoke`:
//! `{kind: "tool", target: <name>, metadata: {authorization?, capabilities,
//! approvalTier?}}`. The metadata is the definition's, built once; a
//! resource shares it (and the name) rather than copying.

use std::sync::{Arc, OnceLock};

use super::resource::ResourceRef;
use crate::definition::{ApprovalTier, ToolDefinition};

/// The resource for `def`: with `approvalTier` for invoke (`Some(tier)`),
/// without for discover (`None`).
pub(crate) fn tool_resource(def: &ToolDefinition, tier: Option<ApprovalTier>) -> ResourceRef {
    static KIND: OnceLock<Arc<str>> = OnceLock::new();
    ResourceRef {
        kind: Arc::clone(KIND.get_or_init(|| Arc::from("tool"))),
        target: Some(Arc::clone(def.name_arc())),
        scope: None,
        tenant_id: None,
        workspace_id: None,
        metadata: Arc::clone(def.policy_metadata(tier)),
    }
}
