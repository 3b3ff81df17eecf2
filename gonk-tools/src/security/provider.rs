//! [`ApprovalProvider`]: asks (or remembers) whether a human consents to a
//! call, and the request and decision it exchanges with dispatch.

use std::sync::Arc;
use std::time::SystemTime;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::SecurityError;
use super::principal::AuthenticatedPrincipal;
use super::ready::ReadyWith;
use super::resource::ResourceRef;
use crate::definition::{ApprovalSpec, ApprovalTier};

/// What an approval provider is asked.
#[derive(Clone, Copy, Debug)]
pub struct ApprovalRequest<'a> {
    /// The caller.
    pub principal: &'a AuthenticatedPrincipal,
    /// The request id shared by the whole composed call.
    pub request_id: &'a str,
    /// The caller's security context key (`gsk:v1:…`): key for
    /// session-scoped grants.
    pub security_context_key: &'a str,
    /// The caller's persistent grant key (`gpg:v1:…`): key for grants that
    /// outlive a session.
    pub persistent_grant_key: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The resolved approval (tier, override, reason).
    pub approval: &'a ApprovalSpec,
    /// The tool resource, then the resolved application resource, if any.
    pub resources: &'a [ResourceRef],
    /// The validated input.
    pub input: &'a Value,
    /// The call stack, root first, ending with `tool`.
    pub call_stack: &'a [Arc<str>],
}

impl ApprovalRequest<'_> {
    /// The resolved tier.
    pub fn tier(&self) -> ApprovalTier {
        self.approval.tier
    }
}

/// How long an approval holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrantScope {
    /// This call only.
    Once,
    /// This security context (keyed by the security context key).
    Session,
    /// Across sessions (keyed by the persistent grant key).
    Persistent,
}

/// The provider's answer.
///
/// A decision that gives the caller less than it needs — `Required`
/// without an approval request id to follow up on — is invalid, and
/// dispatch denies it (`APPROVAL_DENIED`, "Approval provider returned an
/// invalid decision"), as it denies a provider that fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Consent is given (now, or by a stored grant).
    Approved {
        /// The grant that approved it.
        grant_id: Option<String>,
        /// How long the grant holds.
        grant_scope: Option<GrantScope>,
        /// Why (the receipt records `approved` when there is none).
        reason: Option<String>,
        /// The host's approval request this decides, if any (recorded in
        /// the receipt).
        approval_request_id: Option<String>,
    },
    /// Consent is refused: `APPROVAL_DENIED`.
    Denied {
        /// Why (becomes the error message).
        reason: Option<String>,
        /// The host's approval request this decides, if any (in the
        /// error's details and the receipt).
        approval_request_id: Option<String>,
    },
    /// A human must decide first: `APPROVAL_REQUIRED`, a completed,
    /// non-executing result. The caller retries once the request is
    /// approved; the registry never waits.
    Required {
        /// The host's id of the pending approval request. Required: without
        /// one (or with a blank one) the decision is invalid and denies.
        approval_request_id: Option<String>,
        /// Why.
        reason: Option<String>,
        /// When the pending request lapses.
        expires_at: Option<SystemTime>,
    },
    /// Ask the caller, through the surface serving the call (an
    /// elicitation over MCP, a prompt on the CLI's terminal, a question
    /// frame over WebSocket). Their answer decides: yes approves, no or a
    /// dismissed question is `APPROVAL_DENIED`. Where the surface or its
    /// client cannot ask, or nobody answers in time, this is `Required`,
    /// today's answer. The receipt records the consent: the question, the
    /// answer and the request that carried it.
    AskCaller {
        /// The host's approval request id; the question's key when none.
        approval_request_id: Option<String>,
        /// Why approval is needed (shown to the caller).
        reason: Option<String>,
    },
}

impl ApprovalDecision {
    /// Approved, without a stored grant.
    pub fn approved() -> Self {
        ApprovalDecision::Approved {
            grant_id: None,
            grant_scope: None,
            reason: None,
            approval_request_id: None,
        }
    }

    /// Approved by grant `grant_id` of `scope`.
    pub fn approved_by(grant_id: impl Into<String>, scope: GrantScope) -> Self {
        ApprovalDecision::Approved {
            grant_id: Some(grant_id.into()),
            grant_scope: Some(scope),
            reason: None,
            approval_request_id: None,
        }
    }

    /// Denied with a reason.
    pub fn denied(reason: impl Into<String>) -> Self {
        ApprovalDecision::Denied {
            reason: Some(reason.into()),
            approval_request_id: None,
        }
    }

    /// A human must approve pending request `approval_request_id`.
    pub fn required(approval_request_id: impl Into<String>) -> Self {
        ApprovalDecision::Required {
            approval_request_id: Some(approval_request_id.into()),
            reason: None,
            expires_at: None,
        }
    }

    /// Ask the caller (see [`ApprovalDecision::AskCaller`]), telling them
    /// `reason`.
    ///
    /// ```
    /// use gonk_tools::security::{provider_fn, ApprovalDecision, ApprovalRequest};
    ///
    /// // Every write and exec call asks the caller.
    /// let provider = provider_fn(|_: ApprovalRequest<'_>| {
    ///     Ok(ApprovalDecision::ask_caller("Writes change your notes"))
    /// });
    /// # let _ = provider;
    /// ```
    pub fn ask_caller(reason: impl Into<String>) -> Self {
        ApprovalDecision::AskCaller {
            approval_request_id: None,
            reason: Some(reason.into()),
        }
    }

    /// Names the host's approval request this decision is about.
    ///
    /// ```
    /// use gonk_tools::security::ApprovalDecision;
    ///
    /// let denied = ApprovalDecision::denied("Rejected by the owner").with_approval_request_id("apr-9");
    /// assert!(matches!(
    ///     denied,
    ///     ApprovalDecision::Denied { approval_request_id: Some(id), .. } if id == "apr-9"
    /// ));
    /// ```
    pub fn with_approval_request_id(mut self, id: impl Into<String>) -> Self {
        match &mut self {
            ApprovalDecision::Approved {
                approval_request_id,
                ..
            }
            | ApprovalDecision::Denied {
                approval_request_id,
                ..
            }
            | ApprovalDecision::Required {
                approval_request_id,
                ..
            }
            | ApprovalDecision::AskCaller {
                approval_request_id,
                ..
            } => *approval_request_id = Some(id.into()),
        }
        self
    }
}

/// Decides whether a call has consent. Consulted for write and exec calls
/// (and read calls too, once configured) when the approval mode is
/// `enforce`.
///
/// An `Err` is a denial (fail closed); its text is never shown or logged.
pub trait ApprovalProvider: Send + Sync {
    /// Answers one request.
    fn decide<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, Result<ApprovalDecision, SecurityError>>;
}

impl<T: ApprovalProvider + ?Sized> ApprovalProvider for Arc<T> {
    fn decide<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, Result<ApprovalDecision, SecurityError>> {
        (**self).decide(request)
    }
}

/// Approves everything (for hosts that gate elsewhere, tests, benchmarks).
#[derive(Clone, Copy, Debug, Default)]
pub struct ApproveAll;

impl ApprovalProvider for ApproveAll {
    fn decide<'a>(
        &'a self,
        _request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, Result<ApprovalDecision, SecurityError>> {
        Box::pin(ReadyWith(|| Ok(ApprovalDecision::approved())))
    }
}

/// A provider from a synchronous closure.
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::security::*;
///
/// // Reads pass; everything else waits for a human.
/// let provider = provider_fn(|req: ApprovalRequest<'_>| {
///     Ok(match req.tier() {
///         ApprovalTier::Read => ApprovalDecision::approved(),
///         _ => ApprovalDecision::required(format!("apr-{}", req.request_id)),
///     })
/// });
/// # let _ = provider;
/// ```
pub fn provider_fn<F>(f: F) -> ProviderFn<F>
where
    F: Fn(ApprovalRequest<'_>) -> Result<ApprovalDecision, SecurityError> + Send + Sync,
{
    ProviderFn(f)
}

/// See [`provider_fn`].
pub struct ProviderFn<F>(F);

impl<F> ApprovalProvider for ProviderFn<F>
where
    F: Fn(ApprovalRequest<'_>) -> Result<ApprovalDecision, SecurityError> + Send + Sync,
{
    fn decide<'a>(
        &'a self,
        request: ApprovalRequest<'a>,
    ) -> BoxFuture<'a, Result<ApprovalDecision, SecurityError>> {
        Box::pin(std::future::ready((self.0)(request)))
    }
}
