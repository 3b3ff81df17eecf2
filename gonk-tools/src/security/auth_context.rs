//! [`AuthContext`]: the authenticated principal and the policy that
//! authorizes it — what a host puts into a [`ToolContext`](crate::ToolContext)
//! with `with_auth`.

use std::fmt;
use std::sync::{Arc, OnceLock};

use super::keys::{persistent_grant_key, security_context_key};
use super::policy::AuthorizationPolicy;
use super::principal::AuthenticatedPrincipal;
use super::receipt::ReceiptBase;

/// An authenticated caller and the policy that decides what it may do.
///
/// Cheap to clone; the principal is immutable once inside. Dispatch
/// captures it once per root invocation: every composed child runs with
/// the same principal and request id.
#[derive(Clone)]
pub struct AuthContext {
    principal: Arc<AuthenticatedPrincipal>,
    policy: Arc<dyn AuthorizationPolicy>,
}

impl fmt::Debug for AuthContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthContext")
            .field("principal_id", &self.principal.id)
            .finish_non_exhaustive()
    }
}

impl AuthContext {
    /// `principal`, authorized by `policy`.
    pub fn new(
        principal: AuthenticatedPrincipal,
        policy: impl AuthorizationPolicy + 'static,
    ) -> Self {
        AuthContext {
            principal: Arc::new(principal),
            policy: Arc::new(policy),
        }
    }

    /// The same from shared parts (one policy object for many principals).
    pub fn from_shared(
        principal: Arc<AuthenticatedPrincipal>,
        policy: Arc<dyn AuthorizationPolicy>,
    ) -> Self {
        AuthContext { principal, policy }
    }

    /// The principal.
    pub fn principal(&self) -> &AuthenticatedPrincipal {
        &self.principal
    }

    /// The policy.
    pub fn policy(&self) -> &Arc<dyn AuthorizationPolicy> {
        &self.policy
    }
}

/// The auth context as dispatch captured it at the root: the validated
/// principal, the request id, the keys and the receipt base shared by every
/// receipt of the composed call.
pub(crate) struct CapturedAuth {
    pub(crate) auth: AuthContext,
    pub(crate) base: Arc<ReceiptBase>,
    grant_key: OnceLock<String>,
}

impl CapturedAuth {
    pub(crate) fn capture(auth: AuthContext, request_id: String) -> CapturedAuth {
        let key = security_context_key(&auth.principal);
        let base = Arc::new(ReceiptBase::new(&auth.principal, request_id, key));
        CapturedAuth {
            auth,
            base,
            grant_key: OnceLock::new(),
        }
    }

    pub(crate) fn principal(&self) -> &AuthenticatedPrincipal {
        &self.auth.principal
    }

    pub(crate) fn request_id(&self) -> &str {
        &self.base.request_id
    }

    pub(crate) fn security_context_key(&self) -> &str {
        &self.base.security_context_key
    }

    pub(crate) fn persistent_grant_key(&self) -> &str {
        self.grant_key
            .get_or_init(|| persistent_grant_key(&self.auth.principal))
    }
}
