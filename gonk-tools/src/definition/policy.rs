//! What a definition tells an authorization policy about its tool: the
//! tool as a [`ResourceRef`] — `{kind: "tool", target: <name>, metadata:
//! {authorization?, capabilities, approvalTier?}}` — built once per
//! definition and lent to every authenticated call (the gates borrow it,
//! nothing is copied per call).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{ApprovalTier, ToolDefinition};
use crate::security::ResourceRef;

/// The tool resources of one tool: discover, and invoke per tier.
pub(crate) struct PolicyResources {
    discover: ResourceRef,
    /// Read, write, exec.
    invoke: [ResourceRef; 3],
}

impl PolicyResources {
    fn build(def: &ToolDefinition) -> Self {
        let mut discover = Map::new();
        // An undeclared authorization is absent, not `null`.
        if let Some(authorization) = def
            .authorization
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok())
        {
            discover.insert("authorization".to_owned(), authorization);
        }
        discover.insert(
            "capabilities".to_owned(),
            serde_json::to_value(def.capabilities).unwrap_or(Value::Null),
        );
        let kind: Arc<str> = Arc::from(def.inner.primitive.as_str());
        let resource = |metadata: Map<String, Value>| ResourceRef {
            kind: Arc::clone(&kind),
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
        PolicyResources {
            invoke: [
                with_tier(ApprovalTier::Read),
                with_tier(ApprovalTier::Write),
                with_tier(ApprovalTier::Exec),
            ],
            discover: resource(discover),
        }
    }
}

impl ToolDefinition {
    /// The tool as the resource of `tool.invoke` (`Some(tier)`, metadata
    /// with `approvalTier`) or of `tool.discover` (`None`).
    pub(crate) fn policy_resource(&self, tier: Option<ApprovalTier>) -> &ResourceRef {
        let cached = self
            .inner
            .policy
            .get_or_init(|| PolicyResources::build(self));
        match tier {
            None => &cached.discover,
            Some(ApprovalTier::Read) => &cached.invoke[0],
            Some(ApprovalTier::Write) => &cached.invoke[1],
            Some(ApprovalTier::Exec) => &cached.invoke[2],
        }
    }
}
