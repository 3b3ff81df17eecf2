//! What a definition tells an authorization policy about its tool: the
//! metadata of the tool as a resource — `{authorization, capabilities}`,
//! plus `approvalTier` when it is invoked — built once per definition and
//! shared by every authenticated call.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{ApprovalTier, ToolDefinition};

/// The metadata maps of one tool (discover, and invoke per tier).
pub(crate) struct PolicyMetadata {
    discover: Arc<Map<String, Value>>,
    /// Read, write, exec.
    invoke: [Arc<Map<String, Value>>; 3],
}

impl PolicyMetadata {
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
        let with_tier = |tier: ApprovalTier| {
            let mut map = discover.clone();
            map.insert(
                "approvalTier".to_owned(),
                Value::String(tier.as_str().to_owned()),
            );
            Arc::new(map)
        };
        PolicyMetadata {
            invoke: [
                with_tier(ApprovalTier::Read),
                with_tier(ApprovalTier::Write),
                with_tier(ApprovalTier::Exec),
            ],
            discover: Arc::new(discover),
        }
    }
}

impl ToolDefinition {
    /// The tool resource's metadata: with `approvalTier` for invoke
    /// (`Some(tier)`), without for discover (`None`).
    pub(crate) fn policy_metadata(&self, tier: Option<ApprovalTier>) -> &Arc<Map<String, Value>> {
        let cached = self
            .inner
            .policy
            .get_or_init(|| PolicyMetadata::build(self));
        match tier {
            None => &cached.discover,
            Some(ApprovalTier::Read) => &cached.invoke[0],
            Some(ApprovalTier::Write) => &cached.invoke[1],
            Some(ApprovalTier::Exec) => &cached.invoke[2],
        }
    }
}
