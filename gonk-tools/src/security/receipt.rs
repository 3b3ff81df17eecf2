//! Audit receipts: one per authorization decision and one per approval
//! decision of an authenticated call, always **redacted** — they carry who,
//! what tool, which resources (kind, target, tenant, workspace) and the
//! outcome, never resource metadata, never input, never a component's
//! error text.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::policy::{AuthorizationAction, AuthorizationOutcome};
use super::principal::AuthenticatedPrincipal;
use super::provider::GrantScope;
use super::resource::RedactedResource;
use crate::definition::ApprovalTier;

/// Who a receipt is about: the fields every receipt of one auth context
/// shares (the request id and timestamp sit next to it in each receipt;
/// serialized, all of them are flat).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptBase {
    /// The principal's id.
    pub principal_id: Arc<str>,
    /// The principal's security context key (`gsk:v1:…`).
    pub security_context_key: Arc<str>,
    /// The authenticating identity's issuer.
    pub subject_issuer: Arc<str>,
    /// The authenticating identity's subject.
    pub subject_id: Arc<str>,
    /// The delegated actor's issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_issuer: Option<Arc<str>>,
    /// The delegated actor's subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_subject: Option<Arc<str>>,
    /// The delegated actor's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<Arc<str>>,
    /// The delegated actor's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_session_id: Option<Arc<str>>,
    /// The principal's tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<Arc<str>>,
    /// The principal's workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Arc<str>>,
}

impl ReceiptBase {
    /// The base for `principal`, whose security context key is given.
    pub fn new(
        principal: &AuthenticatedPrincipal,
        security_context_key: impl Into<Arc<str>>,
    ) -> Self {
        let delegation = principal.delegation.as_ref();
        let shared = |s: &str| Arc::<str>::from(s);
        ReceiptBase {
            principal_id: shared(&principal.id),
            security_context_key: security_context_key.into(),
            subject_issuer: shared(&principal.identity.issuer),
            subject_id: shared(&principal.identity.subject),
            actor_issuer: delegation.map(|d| shared(&d.actor.issuer)),
            actor_subject: delegation.map(|d| shared(&d.actor.subject)),
            actor_id: delegation.and_then(|d| d.actor_id.as_deref().map(shared)),
            actor_session_id: delegation.and_then(|d| d.actor_session_id.as_deref().map(shared)),
            tenant_id: principal.tenant_id.as_deref().map(shared),
            workspace_id: principal.workspace_id.as_deref().map(shared),
        }
    }
}

/// The receipt of one authorization decision (`tool.discover` or
/// `tool.invoke`, or a resource-resolution failure, which is a deny).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationReceipt {
    /// The request id: the same for the root call and every composed child.
    pub request_id: Arc<str>,
    /// Who.
    #[serde(flatten)]
    pub base: Arc<ReceiptBase>,
    /// When the gate decided (RFC 3339 on the wire), by the registry's
    /// clock. Gates that decide without waiting share one clock reading; a
    /// gate whose component had to wait reads the clock again.
    #[serde(with = "super::timestamp")]
    pub timestamp: SystemTime,
    /// The action decided.
    pub action: AuthorizationAction,
    /// The resource (redacted): for tool actions, `{kind: "tool", target}`.
    pub resource: RedactedResource,
    /// Related resources (redacted): on an invoke receipt, the application
    /// resource the resolver returned. Absent on the wire when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_resources: Vec<RedactedResource>,
    /// The tool.
    pub tool_name: Arc<str>,
    /// Allow or deny.
    pub outcome: AuthorizationOutcome,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Cow<'static, str>>,
    /// The deciding rule, when the policy named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_id: Option<String>,
}

/// How an approval gate ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalOutcome {
    /// Consent given; the call ran.
    Approved,
    /// Consent refused (also: no provider, provider failure).
    Denied,
    /// A human must decide; the call did not run.
    Required,
}

/// The receipt of one approval decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalReceipt {
    /// The request id: the same for the root call and every composed child.
    pub request_id: Arc<str>,
    /// Who.
    #[serde(flatten)]
    pub base: Arc<ReceiptBase>,
    /// When the gate decided (RFC 3339 on the wire), by the registry's
    /// clock. Gates that decide without waiting share one clock reading; a
    /// gate whose component had to wait reads the clock again.
    #[serde(with = "super::timestamp")]
    pub timestamp: SystemTime,
    /// The provider's pending request id, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_request_id: Option<String>,
    /// The tool.
    pub tool_name: Arc<str>,
    /// The resolved tier.
    pub approval_tier: ApprovalTier,
    /// The outcome.
    pub outcome: ApprovalOutcome,
    /// Why: the provider's reason; `approved` for an approval without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Cow<'static, str>>,
    /// The grant that approved (approved only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// The grant's scope (approved only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_scope: Option<GrantScope>,
    /// How the caller was asked and what they answered, when the provider
    /// said [ask the caller](super::ApprovalDecision::AskCaller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<Consent>,
}

/// The caller's own answer to an approval question: who was asked (the
/// receipt's principal), the question, the answer, and the request that
/// carried the answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Consent {
    /// The question's key (over MCP `2026-07-28`, its `inputRequests` key).
    pub question: String,
    /// The answer as the client gave it (an elicitation result:
    /// `{"action": "accept", "content": {"approve": true}}`); `None` while
    /// the question waits for an answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
    /// The request id of the call that carried the answer.
    pub request_id: Arc<str>,
}

/// One audit receipt. Serialized with `"kind": "authorization" |
/// "approval"` and the fields flat (camelCase).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AuditReceipt {
    /// An authorization decision.
    Authorization(AuthorizationReceipt),
    /// An approval decision.
    Approval(ApprovalReceipt),
}

impl AuditReceipt {
    /// The shared fields.
    pub fn base(&self) -> &ReceiptBase {
        match self {
            AuditReceipt::Authorization(r) => &r.base,
            AuditReceipt::Approval(r) => &r.base,
        }
    }

    /// The request id.
    pub fn request_id(&self) -> &str {
        match self {
            AuditReceipt::Authorization(r) => &r.request_id,
            AuditReceipt::Approval(r) => &r.request_id,
        }
    }

    /// When it was written.
    pub fn timestamp(&self) -> SystemTime {
        match self {
            AuditReceipt::Authorization(r) => r.timestamp,
            AuditReceipt::Approval(r) => r.timestamp,
        }
    }

    /// The tool it is about.
    pub fn tool(&self) -> &str {
        match self {
            AuditReceipt::Authorization(r) => &r.tool_name,
            AuditReceipt::Approval(r) => &r.tool_name,
        }
    }

    /// The authorization receipt, if it is one.
    pub fn as_authorization(&self) -> Option<&AuthorizationReceipt> {
        match self {
            AuditReceipt::Authorization(r) => Some(r),
            AuditReceipt::Approval(_) => None,
        }
    }

    /// The approval receipt, if it is one.
    pub fn as_approval(&self) -> Option<&ApprovalReceipt> {
        match self {
            AuditReceipt::Approval(r) => Some(r),
            AuditReceipt::Authorization(_) => None,
        }
    }
}
