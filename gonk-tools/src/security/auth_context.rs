//! [`AuthContext`]: the authenticated principal and the policy that
//! authorizes it — what a host puts into a [`ToolContext`] with
//! [`with_auth`](ToolContext::with_auth), and how the context carries it
//! (a [`Caller`] it does not open).

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use super::keys::{persistent_grant_key, security_context_key};
use super::policy::AuthorizationPolicy;
use super::principal::{AuthenticatedPrincipal, PrincipalError};
use super::receipt::ReceiptBase;
use crate::context::{Caller, ToolContext};

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

impl ToolContext {
    /// Makes the call authenticated: `auth`'s principal is validated,
    /// authorized by its policy, gated by the registry's approval settings
    /// and recorded in receipts. See [`crate::security`].
    ///
    /// Dispatch captures the auth context once, at the root call; composed
    /// calls inherit it. On a context dispatch already captured (a
    /// handler's), the principal cannot be replaced: this keeps the
    /// captured one (and logs a warning).
    pub fn with_auth(mut self, auth: AuthContext) -> Self {
        if self
            .auth
            .as_deref()
            .is_some_and(|caller| caller.as_any().is::<CapturedAuth>())
        {
            tracing::warn!(target: "gonk_tools::security", "with_auth ignored: this context's principal was captured by dispatch and cannot be replaced");
        } else {
            self.auth = Some(AuthSlot::Provided(auth).into_caller());
        }
        self
    }

    /// The auth context: the captured one inside a handler, the provided
    /// one before dispatch; `None` on the unauthenticated (trusted
    /// internal) path.
    pub fn auth(&self) -> Option<&AuthContext> {
        let caller = self.auth.as_deref()?.as_any();
        match caller.downcast_ref::<CapturedAuth>() {
            Some(captured) => Some(&captured.auth),
            None => caller
                .downcast_ref::<Provided>()
                .map(|provided| &provided.0),
        }
    }
}

/// An auth context the host provided, as a [`ToolContext`] carries it
/// until dispatch captures it.
struct Provided(AuthContext);

impl Caller for Provided {
    fn request_id(&self) -> Option<&str> {
        None
    }

    fn security_context_key(&self) -> Option<&str> {
        None
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

impl Caller for CapturedAuth {
    fn request_id(&self) -> Option<&str> {
        Some(&self.request_id)
    }

    fn security_context_key(&self) -> Option<&str> {
        Some(&self.base.security_context_key)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// What the gates see of a call's caller: what the host provided, or what
/// dispatch captured from it at the root (immutable from then on). A
/// [`ToolContext`] carries it as a [`Caller`]; only the security layer
/// looks inside.
#[derive(Clone)]
pub(crate) enum AuthSlot {
    Provided(AuthContext),
    Captured(Arc<CapturedAuth>),
}

impl AuthSlot {
    /// The slot as a context carries it.
    pub(crate) fn into_caller(self) -> Arc<dyn Caller> {
        match self {
            AuthSlot::Provided(auth) => Arc::new(Provided(auth)),
            AuthSlot::Captured(captured) => captured,
        }
    }

    /// The slot a context's caller is. Only this module makes callers (the
    /// trait is the crate's own), so it is always one of the two.
    pub(crate) fn from_caller(caller: Arc<dyn Caller>) -> AuthSlot {
        match caller.into_any().downcast::<CapturedAuth>() {
            Ok(captured) => AuthSlot::Captured(captured),
            Err(other) => {
                let provided = other.downcast::<Provided>().unwrap_or_else(|_| {
                    unreachable!("every Caller is made by AuthSlot::into_caller")
                });
                AuthSlot::Provided(provided.0.clone())
            }
        }
    }

    /// The slot of `ctx`, when its call is authenticated.
    pub(crate) fn of(ctx: &ToolContext) -> Option<AuthSlot> {
        ctx.auth.clone().map(AuthSlot::from_caller)
    }

    /// The auth context, provided or captured.
    pub(crate) fn auth(&self) -> &AuthContext {
        match self {
            AuthSlot::Provided(auth) => auth,
            AuthSlot::Captured(captured) => &captured.auth,
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
