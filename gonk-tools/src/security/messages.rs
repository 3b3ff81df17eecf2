//! The fixed messages and receipt reasons of authenticated dispatch, so
//! hosts and tests can match them without copying strings.

/// `AUTHORIZATION_DENIED` message for a principal that fails validation
/// below the root (at the root it is `TOOL_NOT_FOUND`).
pub const INVALID_PRINCIPAL: &str = "Invalid authenticated principal";
/// `AUTHORIZATION_DENIED` message of a deny without a reason.
pub const AUTHORIZATION_DENIED: &str = "Authorization denied";
/// `AUTH_RESOURCE_UNRESOLVED` message.
pub const RESOURCE_UNRESOLVED: &str = "Authorization resource could not be resolved";
/// `AUTH_AUDIT_FAILED` message.
pub const AUDIT_FAILED: &str = "Audit receipt could not be written";
/// `APPROVAL_DENIED` message and receipt reason when no provider is set.
pub const PROVIDER_NOT_CONFIGURED: &str = "Approval provider not configured";
/// `APPROVAL_DENIED` message of a denial without a reason.
pub const APPROVAL_DENIED: &str = "Approval denied";
/// `AUTHORIZATION_DENIED` message and receipt reason when the policy
/// failed (at discover: receipt reason only; the caller sees not found).
pub const POLICY_FAILED: &str = "Authorization policy failed";
/// `APPROVAL_DENIED` message and receipt reason when the provider failed.
pub const PROVIDER_FAILED: &str = "Approval provider failed";
/// Reason (details and receipt) of an `APPROVAL_REQUIRED` without one
/// from the provider.
pub const APPROVAL_REQUIRED: &str = "Approval required";
