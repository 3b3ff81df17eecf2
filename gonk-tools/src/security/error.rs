//! [`SecurityError`]: the error a policy, approval provider, resource
//! resolver or audit sink returns.

use std::error::Error as StdError;
use std::fmt;

/// The failure of a security component (an [`AuthorizationPolicy`],
/// [`ApprovalProvider`], [`ToolResourceResolver`] or [`AuditSink`]).
///
/// Dispatch treats every such failure as a **deny** (fail closed) and
/// reports it with a generic message. The error's own text is dropped: it
/// never reaches an event, a receipt or a log line, so a component may put
/// anything (a connection string, a token) in it without leaking it.
///
/// [`AuthorizationPolicy`]: super::AuthorizationPolicy
/// [`ApprovalProvider`]: super::ApprovalProvider
/// [`ToolResourceResolver`]: super::ToolResourceResolver
/// [`AuditSink`]: super::AuditSink
pub struct SecurityError {
    inner: Box<dyn StdError + Send + Sync>,
}

impl SecurityError {
    /// Wraps any error (or a message: `SecurityError::new("db down")`).
    pub fn new(error: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        SecurityError {
            inner: error.into(),
        }
    }

    /// The wrapped error, for the component's own diagnostics.
    pub fn get_ref(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.inner
    }

    /// Unwraps the error.
    pub fn into_inner(self) -> Box<dyn StdError + Send + Sync> {
        self.inner
    }
}

impl fmt::Debug for SecurityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SecurityError").field(&self.inner).finish()
    }
}

impl fmt::Display for SecurityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner, f)
    }
}

impl StdError for SecurityError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.inner)
    }
}

/// The error of an [`AuthorizationPolicy`](super::AuthorizationPolicy).
pub type PolicyError = SecurityError;
