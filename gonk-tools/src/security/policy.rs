//! [`AuthorizationPolicy`]: the host's decision function, and the request
//! and decision it exchanges with dispatch.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::error::PolicyError;
use super::principal::AuthenticatedPrincipal;
use super::ready::ReadyWith;
use super::resource::ResourceRef;

/// What the principal wants to do.
///
/// Serializes as `"tool.discover"`, `"tool.invoke"` or
/// `"application:<name>"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AuthorizationAction {
    /// See that the tool exists (asked before input validation, and when a
    /// surface lists tools).
    Discover,
    /// Run the tool with a validated input.
    Invoke,
    /// An application-defined action a tool checks itself.
    Application(String),
}

impl AuthorizationAction {
    /// The wire form.
    pub fn as_str(&self) -> Cow<'_, str> {
        match self {
            AuthorizationAction::Discover => "tool.discover".into(),
            AuthorizationAction::Invoke => "tool.invoke".into(),
            AuthorizationAction::Application(name) => format!("application:{name}").into(),
        }
    }

    /// Parses the wire form.
    pub fn parse(action: &str) -> Option<AuthorizationAction> {
        match action {
            "tool.discover" => Some(AuthorizationAction::Discover),
            "tool.invoke" => Some(AuthorizationAction::Invoke),
            other => other
                .strip_prefix("application:")
                .filter(|name| !name.is_empty())
                .map(|name| AuthorizationAction::Application(name.to_owned())),
        }
    }
}

impl fmt::Display for AuthorizationAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl Serialize for AuthorizationAction {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.as_str())
    }
}

impl<'de> Deserialize<'de> for AuthorizationAction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<'de, str>::deserialize(deserializer)?;
        AuthorizationAction::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown action `{text}`; use tool.discover, tool.invoke or application:<name>"
            ))
        })
    }
}

/// One question to the policy.
///
/// For `tool.discover` the resource is the tool (`kind = "tool"`, `target
/// = name`, metadata `{authorization, capabilities}`; `authorization` only
/// when the tool declares one), there is no input and the call stack is
/// `[name]` (also when a surface lists tools). For `tool.invoke` the
/// resource metadata also carries `approvalTier`, the related resources
/// hold the resolved application resource (if the tool declares one), the
/// input is the validated input and the call stack ends with the tool.
#[derive(Clone, Debug)]
pub struct AuthorizationRequest<'a> {
    /// The caller.
    pub principal: &'a AuthenticatedPrincipal,
    /// What it wants to do.
    pub action: AuthorizationAction,
    /// What it acts on.
    pub resource: &'a ResourceRef,
    /// Further resources involved (the resolved application resource).
    pub related_resources: &'a [ResourceRef],
    /// The validated input (`None` for `tool.discover`).
    pub input: Option<&'a Value>,
    /// The call stack, root first.
    pub call_stack: &'a [Arc<str>],
}

/// Allow or deny.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthorizationOutcome {
    /// Go ahead.
    Allow,
    /// Refused.
    Deny,
}

/// The policy's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationDecision {
    /// Allow or deny.
    pub outcome: AuthorizationOutcome,
    /// Why. A deny's reason becomes the `AUTHORIZATION_DENIED` message, so
    /// write it for the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Which rule decided (recorded in the receipt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_id: Option<String>,
}

impl AuthorizationDecision {
    /// Allow.
    pub fn allow() -> Self {
        AuthorizationDecision {
            outcome: AuthorizationOutcome::Allow,
            reason: None,
            policy_id: None,
        }
    }

    /// Deny, with a reason for the caller.
    pub fn deny(reason: impl Into<String>) -> Self {
        AuthorizationDecision {
            outcome: AuthorizationOutcome::Deny,
            reason: Some(reason.into()),
            policy_id: None,
        }
    }

    /// Sets the reason.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Names the rule that decided.
    pub fn with_policy_id(mut self, policy_id: impl Into<String>) -> Self {
        self.policy_id = Some(policy_id.into());
        self
    }

    /// Whether it allows.
    pub fn is_allowed(&self) -> bool {
        self.outcome == AuthorizationOutcome::Allow
    }
}

/// Decides whether a principal may discover or invoke a tool.
///
/// Object-safe and async: implement it on your policy engine's client and
/// pass it as `Arc<dyn AuthorizationPolicy>`. An `Err` is treated as a deny
/// (fail closed) and its text is never shown or logged. For a synchronous
/// rule, [`policy_fn`] wraps a closure.
pub trait AuthorizationPolicy: Send + Sync {
    /// Answers one request.
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest<'a>,
    ) -> BoxFuture<'a, Result<AuthorizationDecision, PolicyError>>;
}

impl<T: AuthorizationPolicy + ?Sized> AuthorizationPolicy for Arc<T> {
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest<'a>,
    ) -> BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
        (**self).authorize(request)
    }
}

/// Allows everything (for trusted hosts, tests and benchmarks).
#[derive(Clone, Copy, Debug, Default)]
pub struct AllowAll;

impl AuthorizationPolicy for AllowAll {
    fn authorize<'a>(
        &'a self,
        _request: &'a AuthorizationRequest<'a>,
    ) -> BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
        Box::pin(ReadyWith(|| Ok(AuthorizationDecision::allow())))
    }
}

/// Denies everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct DenyAll;

impl AuthorizationPolicy for DenyAll {
    fn authorize<'a>(
        &'a self,
        _request: &'a AuthorizationRequest<'a>,
    ) -> BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
        Box::pin(ReadyWith(|| {
            Ok(AuthorizationDecision::deny("Denied by policy"))
        }))
    }
}

/// A policy from a synchronous closure.
///
/// ```
/// use gonk_tools::security::*;
///
/// // Editors may invoke anything; everyone may discover.
/// let policy = policy_fn(|req: &AuthorizationRequest<'_>| {
///     Ok(match req.action {
///         AuthorizationAction::Invoke if !req.principal.has_role("editor") => {
///             AuthorizationDecision::deny("Editors only").with_policy_id("editors")
///         }
///         _ => AuthorizationDecision::allow(),
///     })
/// });
/// # let _ = policy;
/// ```
pub fn policy_fn<F>(f: F) -> PolicyFn<F>
where
    F: Fn(&AuthorizationRequest<'_>) -> Result<AuthorizationDecision, PolicyError> + Send + Sync,
{
    PolicyFn(f)
}

/// See [`policy_fn`].
pub struct PolicyFn<F>(F);

impl<F> AuthorizationPolicy for PolicyFn<F>
where
    F: Fn(&AuthorizationRequest<'_>) -> Result<AuthorizationDecision, PolicyError> + Send + Sync,
{
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest<'a>,
    ) -> BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
        Box::pin(std::future::ready((self.0)(request)))
    }
}
