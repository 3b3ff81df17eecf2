//! The tool itself as the resource of `tool.discover` / `tool.invoke`:
//! `{kind: "tool", target: <name>, metadata: {authorization, capabilities,
//! approvalTier}}`, with the metadata built once per definition.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::resource::ResourceRef;
use crate::definition::{ApprovalTier, ToolDefinition};

/// The tool resources of one tool (discover, and invoke per tier), built
/// on its first authenticated call and lent to every later one.
pub(crate) struct ToolPolicyMetadata {
    discover: ResourceRef,
    /// Read, write, exec.
    invoke: [ResourceRef; 3],
}

impl ToolPolicyMetadata {
    fn build(def: &ToolDefinition) -> Self {
        let mut discover = Map::new();
        discover.insert(
            "authorization".to_owned(),
            def.authorization
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok())
                .unwrap_or(Value::Null),
        );
        discover.insert(
            "capabilities".to_owned(),
            serde_json::to_value(def.capabilities).unwrap_or(Value::Null),
        );
        let resource = |metadata: Map<String, Value>| ResourceRef {
            kind: Arc::from("tool"),
            target: Some(Arc::clone(def.name_arc())),
            scope: None,
            tenant_id: None,
            workspace_id: None,
            metadata: Arc::new(metadata),
        };
        let with_tier = |tier: ApprovalTier| {
            let mut map = discover.clone();
            map.insert(
                "approvalTier".to_owned(),
                Value::String(tier.as_str().to_owned()),
            );
            resource(map)
        };
        ToolPolicyMetadata {
            invoke: [
                with_tier(ApprovalTier::Read),
                with_tier(ApprovalTier::Write),
                with_tier(ApprovalTier::Exec),
            ],
            discover: resource(discover),
        }
    }
}

/// The resource for `def`: with `approvalTier` for invoke (`Some(tier)`),
/// without for discover (`None`).
pub(crate) fn tool_resource(def: &ToolDefinition, tier: Option<ApprovalTier>) -> &ResourceRef {
    let cached = def
        .inner
        .security
        .get_or_init(|| ToolPolicyMetadata::build(def));
    match tier {
        None => &cached.discover,
        Some(ApprovalTier::Read) => &cached.invoke[0],
        Some(ApprovalTier::Write) => &cached.invoke[1],
        Some(ApprovalTier::Exec) => &cached.invoke[2],
    }
}
