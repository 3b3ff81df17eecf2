//! [`AuthContext`]: the authenticated principal and the policy that
//! authorizes it — what a host puts into a [`ToolContext`](crate::ToolContext)
//! with `with_auth`.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use super::keys::{persistent_grant_key, security_context_key};
use super::policy::AuthorizationPolicy;
use super::principal::{AuthenticatedPrincipal, PrincipalError};
use super::receipt::ReceiptBase;

/// The principal and what dispatch derives from it, computed once per
/// auth context (the principal is immutable once inside).
struct Principal {
    principal: Arc<AuthenticatedPrincipal>,
    policy: Arc<dyn AuthorizationPolicy>,
    valid: OnceLock<Result<(), PrincipalError>>,
    grant_key: OnceLock<Arc<str>>,
    /// The receipt base (who), shared by every receipt.
    base: OnceLock<Arc<ReceiptBase>>,
}

/// An authenticated caller and the policy that decides what it may do.
///
/// Cheap to clone; the principal is immutable once inside. Dispatch
/// captures it once per root invocation: every composed child runs with
/// the same principal and request id. Reuse one `AuthContext` for a
/// session's calls: its validation and keys are computed once.
#[derive(Clone)]
pub struct AuthContext {
    inner: Arc<Principal>,
}

impl fmt::Debug for AuthContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthContext")
            .field("principal_id", &self.inner.principal.id)
            .finish_non_exhaustive()
    }
}

impl AuthContext {
    /// `principal`, authorized by `policy`.
    pub fn new(
        principal: AuthenticatedPrincipal,
        policy: impl AuthorizationPolicy + 'static,
    ) -> Self {
        Self::from_shared(Arc::new(principal), Arc::new(policy))
    }

    /// The same from shared parts (one policy object for many principals).
    pub fn from_shared(
        principal: Arc<AuthenticatedPrincipal>,
        policy: Arc<dyn AuthorizationPolicy>,
    ) -> Self {
        AuthContext {
            inner: Arc::new(Principal {
                principal,
                policy,
                valid: OnceLock::new(),
                grant_key: OnceLock::new(),
                base: OnceLock::new(),
            }),
        }
    }

    /// The principal.
    pub fn principal(&self) -> &AuthenticatedPrincipal {
        &self.inner.principal
    }

    /// The policy.
    pub fn policy(&self) -> &Arc<dyn AuthorizationPolicy> {
        &self.inner.policy
    }

    /// The principal's security context key (`gsk:v1:…`), computed once.
    pub fn security_context_key(&self) -> &str {
        &self.base_template().security_context_key
    }

    /// The principal's persistent grant key (`gpg:v1:…`), computed once.
    pub fn persistent_grant_key(&self) -> &str {
        self.inner
            .grant_key
            .get_or_init(|| persistent_grant_key(&self.inner.principal).into())
    }

    /// Structural validation (once) and the expiry against `now`.
    pub(crate) fn check(&self, now: SystemTime) -> Result<(), PrincipalError> {
        self.inner
            .valid
            .get_or_init(|| self.inner.principal.validate())
            .clone()?;
        if self.inner.principal.is_expired_at(now) {
            return Err(PrincipalError::Expired);
        }
        Ok(())
    }

    fn base_template(&self) -> &Arc<ReceiptBase> {
        self.inner.base.get_or_init(|| {
            let key = security_context_key(&self.inner.principal);
            Arc::new(ReceiptBase::new(&self.inner.principal, key))
        })
    }
}

/// The auth slot a [`ToolContext`](crate::ToolContext) carries: what the
/// host provided, or what dispatch captured from it at the root (immutable
/// from then on). The context holds it opaquely and asks it the questions
/// below; only the gates look inside.
#[derive(Clone)]
pub(crate) enum AuthSlot {
    Provided(AuthContext),
    Captured(Arc<CapturedAuth>),
}

impl AuthSlot {
    /// The auth context, provided or captured.
    pub(crate) fn auth(&self) -> &AuthContext {
        match self {
            AuthSlot::Provided(auth) => auth,
            AuthSlot::Captured(captured) => &captured.auth,
        }
    }

    /// Whether dispatch captured it (a handler's context).
    pub(crate) fn is_captured(&self) -> bool {
        matches!(self, AuthSlot::Captured(_))
    }

    /// The request id, once captured.
    pub(crate) fn request_id(&self) -> Option<&str> {
        match self {
            AuthSlot::Captured(captured) => Some(captured.request_id()),
            AuthSlot::Provided(_) => None,
        }
    }

    /// The security context key, once captured.
    pub(crate) fn security_context_key(&self) -> Option<&str> {
        match self {
            AuthSlot::Captured(captured) => Some(captured.security_context_key()),
            AuthSlot::Provided(_) => None,
        }
    }
}

/// The auth context as dispatch captured it at the root: the validated
/// principal, the request id and the receipt base shared by every receipt
/// of the composed call.
pub(crate) struct CapturedAuth {
    pub(crate) auth: AuthContext,
    pub(crate) request_id: Arc<str>,
    pub(crate) base: Arc<ReceiptBase>,
}

impl CapturedAuth {
    pub(crate) fn capture(auth: AuthContext, request_id: Arc<str>) -> CapturedAuth {
        let base = auth.base_template();
        CapturedAuth {
            request_id,
            base: Arc::clone(base),
            auth,
        }
    }

    pub(crate) fn principal(&self) -> &AuthenticatedPrincipal {
        self.auth.principal()
    }

    pub(crate) fn request_id(&self) -> &str {
        &self.request_id
    }

    pub(crate) fn security_context_key(&self) -> &str {
        &self.base.security_context_key
    }

    pub(crate) fn persistent_grant_key(&self) -> &str {
        self.auth.persistent_grant_key()
    }
}
