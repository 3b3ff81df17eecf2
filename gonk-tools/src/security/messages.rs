//! The fixed messages and receipt reasons of authenticated dispatch, so
//! hosts and tests can match them without copying strings. Each starts
//! with the wording of the TypeScript original
//! (`docs/contract.md#differences`), so code that matches on it keeps
//! working.

/// `AUTHORIZATION_DENIED` message for a principal that fails validation
/// below the root (at the root it is `TOOL_NOT_FOUND`).
pub const INVALID_PRINCIPAL: &str = "Invalid authenticated principal";
/// `AUTHORIZATION_DENIED` message of a deny without a reason.
pub const AUTHORIZATION_DENIED: &str = "Authorization denied";
/// `AUTH_RESOURCE_UNRESOLVED` message.
pub const RESOURCE_UNRESOLVED: &str = "Required authorization resource could not be resolved";
/// `AUTH_AUDIT_FAILED` message when a mandatory authorization receipt
/// could not be written.
pub const AUTHORIZATION_AUDIT_FAILED: &str = "Mandatory authorization audit failed";
/// `AUTH_AUDIT_FAILED` message when a mandatory approval receipt could not
/// be written.
pub const APPROVAL_AUDIT_FAILED: &str = "Mandatory approval audit failed";
/// `APPROVAL_DENIED` message and receipt reason when no provider is set.
pub const PROVIDER_NOT_CONFIGURED: &str = "Approval provider not configured";
/// `APPROVAL_DENIED` message of a denial without a reason.
pub const APPROVAL_DENIED: &str = "Approval denied";
/// `AUTHORIZATION_DENIED` message and receipt reason when the policy
/// failed (at discover: receipt reason only; the caller sees not found).
pub const POLICY_FAILED: &str = "Authorization policy failed";
/// `APPROVAL_DENIED` message and receipt reason when the provider failed.
pub const PROVIDER_FAILED: &str = "Approval provider failed";
/// `APPROVAL_DENIED` message and receipt reason when the provider's
/// decision lacks what the caller needs (`required` without an approval
/// request id).
pub const INVALID_DECISION: &str = "Approval provider returned an invalid decision";
/// Reason (details and receipt) of an `APPROVAL_REQUIRED` without one
/// from the provider, and the start of its message.
pub const APPROVAL_REQUIRED: &str = "Approval required";
/// Receipt reason of an approval without one from the provider.
pub const APPROVED: &str = "approved";
/// `AUTHORIZATION_DENIED` message when the registry's clock or request-id
/// generator failed (at the root before discover: `TOOL_NOT_FOUND`).
pub const SECURITY_CHECK_FAILED: &str = "Security check failed";

/// Reason (receipt) of an approval the caller gave when asked.
pub const CALLER_APPROVED: &str = "approved by the caller when asked";
/// Reason (receipt) of an approval question waiting for the caller's answer.
pub const CALLER_ASKED: &str = "asked the caller; waiting for the answer";

/// The start of an `INSUFFICIENT_SCOPE` message and of its receipt's
/// reason (`docs/contract.md#scopes`); the rest names the missing scopes.
/// The TypeScript original has no scopes: this wording is ours.
pub const INSUFFICIENT_SCOPE: &str = "Insufficient scope";
