//! Authenticated dispatch: authorization, approval tiers and redacted
//! audit receipts.
//!
//! # The model
//!
//! **Authentication stays outside.** The host or adapter verifies its
//! credential (a session cookie, an OAuth token, an API key, mTLS) and
//! builds an [`AuthenticatedPrincipal`]. It pairs it with the
//! [`AuthorizationPolicy`] that decides for it into an [`AuthContext`] and
//! hands that to dispatch with
//! [`ToolContext::with_auth`](crate::ToolContext::with_auth).
//!
//! **The registry gates every authenticated call**, root or composed, in
//! this order (see [`ToolRegistry::invoke`](crate::ToolRegistry::invoke)):
//!
//! 1. look-up, cycle check;
//! 2. *root only:* capture the auth context (principal validated — an
//!    invalid principal gets exactly the not-found result), then authorize
//!    `tool.discover` **before input validation**: a hidden tool is
//!    indistinguishable from a missing one (`TOOL_NOT_FOUND`, "No such
//!    tool: NAME", same metric);
//! 3. the OAuth scopes the tool requires
//!    ([`ToolDefinition::required_scopes`](crate::ToolDefinition::required_scopes)),
//!    when the principal's scopes are enforced
//!    ([`AuthenticatedPrincipal::scopes_enforced`]): one missing refuses
//!    the call with `INSUFFICIENT_SCOPE` naming it, before the input is
//!    looked at; the tool stays listed (`docs/contract.md#scopes`);
//! 4. validate the input;
//! 5. resolve the approval tier from the declaration and the validated
//!    input ([`resolve_approval`]; missing or failing → `exec`);
//! 6. resolve the tool's declared authorization resource through the
//!    registry's [`ToolResourceResolver`] (failure →
//!    `AUTH_RESOURCE_UNRESOLVED`, the policy is not asked);
//! 7. authorize `tool.invoke` (deny → `AUTHORIZATION_DENIED` with the
//!    policy's reason);
//! 8. the approval gate, when the [`ApprovalMode`] is `enforce` and a
//!    provider is configured or the tier is not `read`: the
//!    [`ApprovalProvider`] approves, denies (`APPROVAL_DENIED`) or says a
//!    human must decide (`APPROVAL_REQUIRED`, a completed result with
//!    redacted details — the registry never waits). No provider → denied;
//! 9. run the handler. Its `ctx.invoke` / `ctx.call` children inherit the
//!    principal and the request id and are re-authorized from step 3 on.
//!
//! **Every decision is a receipt** ([`AuditReceipt`]) written to the
//! registry's [`AuditSink`]: who (principal, identities, tenant,
//! workspace, [security context key](security_context_key)), which request,
//! which tool, the outcome and reason — and resources **redacted** to kind,
//! target, tenant and workspace. Never metadata, never input. With
//! [`mandatory_audit`](SecurityOptions::mandatory_audit) an unwritable
//! receipt stops the call (`AUTH_AUDIT_FAILED`).
//!
//! **Everything fails closed.** A policy, provider, resolver or sink that
//! errors (or panics) counts as a deny, reported with a generic message;
//! its error text reaches no event, receipt or log line. So does a
//! provider decision that lacks what the caller needs (`required` without
//! an approval request id: `APPROVAL_DENIED`, "Approval provider returned
//! an invalid decision"), and a clock or request-id generator that panics
//! (at the root before discover the tool reads as missing; later,
//! `AUTHORIZATION_DENIED` "Security check failed", without a receipt).
//! Either way the call ends with one error event and the registry keeps
//! serving.
//!
//! **Without auth nothing changes**: a context without
//! [`AuthContext`] is the trusted internal path — no gates, no receipts —
//! and handlers can tell (`ctx.auth()` is `None`).
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use gonk_tools::prelude::*;
//! use gonk_tools::security::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Rename { note: String, title: String }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! // The host's consent store: writes need a human unless already granted.
//! let provider = provider_fn(|req: ApprovalRequest<'_>| {
//!     Ok(match req.tier() {
//!         ApprovalTier::Read => ApprovalDecision::approved(),
//!         _ => ApprovalDecision::required("apr-1"),
//!     })
//! });
//! let audit = Arc::new(InMemoryAuditSink::new());
//! let registry = ToolRegistry::builder()
//!     .security(
//!         SecurityOptions::new()
//!             .approval_provider(provider)
//!             .audit_sink(audit.clone())
//!             .mandatory_audit(true),
//!     )
//!     .build();
//! registry.register(
//!     ToolDefinition::builder("notes.rename")
//!         .description("Rename a note.")
//!         .approval(ApprovalTier::Write)
//!         .handler(|i: Rename, _ctx| async move { Ok::<_, ToolError>(i.title) })
//!         .build(),
//! ).unwrap();
//!
//! // Authentication happened elsewhere; this is its result.
//! let alice = AuthenticatedPrincipal::new(
//!     "user-1",
//!     PrincipalKind::Human,
//!     PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
//! )
//! .with_tenant("acme");
//! let ctx = ToolContext::new().with_auth(AuthContext::new(alice, AllowAll));
//!
//! let events = registry.invoke("notes.rename", json!({"note": "n1", "title": "Plans"}), ctx);
//! let error = collect_tool_outcome(events, |_| {}).await.unwrap_err();
//! assert_eq!(error.code, ErrorCode::ApprovalRequired);
//! assert_eq!(error.details.unwrap()["approvalRequestId"], "apr-1");
//!
//! // discover, invoke, approval: three receipts, none carrying the input.
//! let receipts = audit.snapshot();
//! assert_eq!(receipts.len(), 3);
//! assert!(receipts[2].as_approval().is_some());
//! assert!(!serde_json::to_string(&receipts).unwrap().contains("Plans"));
//! # }
//! ```

mod approval;
mod audit;
mod auth_context;
mod error;
mod gates;
mod keys;
pub mod messages;
mod options;
mod policy;
mod principal;
mod provider;
mod ready;
mod receipt;
mod resource;
mod timestamp;

pub use approval::{resolve_approval, ApprovalMode, MISSING_APPROVAL_REASON};
pub use audit::{AuditSink, InMemoryAuditSink, TracingAuditSink};
pub use auth_context::AuthContext;
pub(crate) use auth_context::AuthSlot;
pub use error::{PolicyError, SecurityError};
pub(crate) use gates::Gate;
pub use keys::{persistent_grant_key, security_context_key};
pub use options::{default_request_id, Clock, RequestIdGenerator, SecurityOptions};
pub use policy::{
    policy_fn, AllowAll, AuthorizationAction, AuthorizationDecision, AuthorizationOutcome,
    AuthorizationPolicy, AuthorizationRequest, DenyAll, PolicyFn,
};
pub use principal::{
    ActorKind, AuthMethod, AuthenticatedPrincipal, Delegation, PrincipalError, PrincipalIdentity,
    PrincipalKind, UnknownAuthMethod,
};
pub use provider::{
    provider_fn, ApprovalDecision, ApprovalProvider, ApprovalRequest, ApproveAll, GrantScope,
    ProviderFn,
};
pub use receipt::{
    ApprovalOutcome, ApprovalReceipt, AuditReceipt, AuthorizationReceipt, Consent, ReceiptBase,
};
pub use resource::{
    resolver_fn, RedactedResource, ResolverFn, ResourceRef, ResourceResolutionRequest,
    ToolResourceResolver,
};
