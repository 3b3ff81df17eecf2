//! [`Gate`]: the gates of authenticated dispatch (steps 3, 3b and 5–8 of
//! `docs/contract.md#gates`) — capture and discover before input
//! validation; approval resolution, resource resolution, invoke
//! authorization and the approval gate after it. It is the one seam
//! between dispatch and security: dispatch calls it; every
//! outcome here is a receipt and, on refusal, the `ToolError` the caller
//! sees.

use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::SystemTime;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;

use super::approval::{resolve, ApprovalMode};
use super::auth_context::{AuthContext, AuthSlot, CapturedAuth};
use super::error::SecurityError;
use super::messages::*;
use super::options::SecurityOptions;
use super::policy::{
    AuthorizationAction, AuthorizationDecision, AuthorizationOutcome, AuthorizationRequest,
};
use super::provider::{ApprovalDecision, ApprovalRequest, GrantScope};
use super::receipt::{
    ApprovalOutcome, ApprovalReceipt, AuditReceipt, AuthorizationReceipt, Consent,
};
use super::resource::{RedactedResource, ResourceRef, ResourceResolutionRequest};
use crate::ask::{AskError, AskSlot, InputKind, InputRequest};
use crate::definition::{ApprovalSpec, ApprovalTier, AuthorizationResource, ToolDefinition};
use crate::error::{ErrorCode, ToolError};

const TARGET: &str = "gonk_tools::security";

/// A security component call in flight, polled with panics caught.
/// Resolves to the component's value (`Err(())` for an error or a panic:
/// the error is dropped here, so its text can reach nothing downstream)
/// and whether it had to wait (was not ready when first polled).
struct Call<'a, T> {
    /// `None` when the call itself panicked, or once finished.
    future: Option<BoxFuture<'a, Result<T, SecurityError>>>,
    polled: bool,
}

impl<T> Future for Call<'_, T> {
    type Output = (Result<T, ()>, bool);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let waited = std::mem::replace(&mut this.polled, true);
        let Some(future) = this.future.as_mut() else {
            return Poll::Ready((Err(()), waited));
        };
        let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx)))
        {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(Ok(value))) => Ok(value),
            Ok(Poll::Ready(Err(_))) | Err(_) => Err(()),
        };
        this.future = None;
        Poll::Ready((outcome, waited))
    }
}

/// Starts a security component call, catching a panic in the call itself.
/// Synchronous, so what the call captures is not kept in any future.
fn start<'a, T>(call: impl FnOnce() -> BoxFuture<'a, Result<T, SecurityError>>) -> Call<'a, T> {
    Call {
        future: std::panic::catch_unwind(AssertUnwindSafe(call)).ok(),
        polled: false,
    }
}

/// A receipt handed to the sink: resolves to `false` when it could not be
/// stored and audit is mandatory (the call must stop).
struct AuditWrite<'a, 't> {
    options: &'a SecurityOptions,
    /// The tool (for the failure log line, borrowed: no count to change
    /// per receipt) and the sink call; `None` when no sink is configured.
    call: Option<(&'t str, Call<'a, ()>)>,
}

impl Future for AuditWrite<'_, '_> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let this = &mut *self;
        let mandatory = this.options.mandatory_audit;
        let Some((tool, call)) = this.call.as_mut() else {
            return Poll::Ready(!mandatory);
        };
        match Pin::new(call).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready((Ok(()), _)) => Poll::Ready(true),
            Poll::Ready((Err(()), _)) => {
                tracing::warn!(target: TARGET, tool = %tool, mandatory, "audit sink failed to store a receipt");
                Poll::Ready(!mandatory)
            }
        }
    }
}

fn denied(code: ErrorCode, message: impl Into<String>) -> ToolError {
    ToolError::new(code, message)
}

/// `AUTH_AUDIT_FAILED`, worded by the kind of receipt that failed.
fn audit_failed(kind: ReceiptKind) -> ToolError {
    denied(
        ErrorCode::AuthAuditFailed,
        match kind {
            ReceiptKind::Authorization => AUTHORIZATION_AUDIT_FAILED,
            ReceiptKind::Approval => APPROVAL_AUDIT_FAILED,
        },
    )
}

#[derive(Clone, Copy)]
enum ReceiptKind {
    Authorization,
    Approval,
}

/// A host component the gates call directly (the clock, the request-id
/// generator) failed: fail closed without a receipt (there is no time to
/// stamp it with).
fn check_failed() -> ToolError {
    denied(ErrorCode::AuthorizationDenied, SECURITY_CHECK_FAILED)
}

/// An authenticated call that passed admission: the captured auth context
/// (principal, request id, receipt base) and the clock reading its next
/// receipt is stamped with.
pub(crate) struct Admitted {
    captured: Arc<CapturedAuth>,
    now: SystemTime,
}

impl Admitted {
    /// The auth slot the handler's context carries: its `ctx.invoke`
    /// children run with the same principal and request id.
    pub(crate) fn into_slot(self) -> AuthSlot {
        AuthSlot::Captured(self.captured)
    }
}

/// The gates of one registry's security options. Dispatch calls
/// [`admit`](Self::admit), validates the input, then calls
/// [`authorize_invoke`](Self::authorize_invoke); surfaces that list tools
/// call [`discoverable`](Self::discoverable).
pub(crate) struct Gate<'a> {
    options: &'a SecurityOptions,
}

impl<'a> Gate<'a> {
    pub(crate) fn new(options: &'a SecurityOptions) -> Self {
        Gate { options }
    }

    /// A fresh clock reading for the receipt that records a decision just
    /// made: every receipt carries its own time, whether or not the
    /// deciding component had to wait (`_waited`, kept for the call sites).
    fn restamp(&self, now: &mut SystemTime, _waited: bool) -> Result<(), ToolError> {
        *now = self.options.read_clock().ok_or_else(check_failed)?;
        Ok(())
    }

    /// Builds and hands over a receipt now; the returned future only waits
    /// for the sink (and holds no receipt).
    fn audit<'t>(
        &self,
        tool: &'t str,
        receipt: impl FnOnce() -> AuditReceipt,
    ) -> AuditWrite<'a, 't> {
        let options = self.options;
        AuditWrite {
            options,
            call: options.audit_sink.as_ref().map(|sink| {
                let receipt = receipt();
                (tool, start(|| sink.record(receipt)))
            }),
        }
    }

    /// Step 3 at the root — capture the auth context, validate the
    /// principal, authorize `tool.discover` — or the principal check of a
    /// composed child. `call_stack` is the stack the handler will run with
    /// (ending with `def`); a stack of one is the root.
    pub(crate) async fn admit(
        &self,
        def: &ToolDefinition,
        slot: &AuthSlot,
        call_stack: &[Arc<str>],
    ) -> Result<Admitted, ToolError> {
        let is_root = call_stack.len() == 1;
        // Until discover allows it, a failure at the root reads as missing.
        let refuse = |message: &'static str| {
            if is_root {
                ToolError::not_found(&def.name)
            } else {
                denied(ErrorCode::AuthorizationDenied, message)
            }
        };
        let mut now = self
            .options
            .read_clock()
            .ok_or_else(|| refuse(SECURITY_CHECK_FAILED))?;
        let captured = match slot {
            AuthSlot::Captured(captured) => {
                // A composed child: the principal was validated at the root;
                // it may have expired since.
                if captured.principal().is_expired_at(now) {
                    return Err(denied(ErrorCode::AuthorizationDenied, INVALID_PRINCIPAL));
                }
                return Ok(Admitted {
                    captured: Arc::clone(captured),
                    now,
                });
            }
            AuthSlot::Provided(auth) => {
                if auth.check(now).is_err() {
                    tracing::debug!(target: TARGET, tool = %def.name, root = is_root, "invalid authenticated principal");
                    return Err(refuse(INVALID_PRINCIPAL));
                }
                let request_id = self
                    .options
                    .new_request_id()
                    .ok_or_else(|| refuse(SECURITY_CHECK_FAILED))?;
                Arc::new(CapturedAuth::capture(auth.clone(), request_id))
            }
        };
        if !is_root {
            return Ok(Admitted { captured, now });
        }
        match self.discover(&captured, def, call_stack, &mut now).await {
            Discover::Allowed => Ok(Admitted { captured, now }),
            Discover::Hidden => Err(ToolError::not_found(&def.name)),
            Discover::AuditFailed => Err(audit_failed(ReceiptKind::Authorization)),
        }
    }

    /// Step 3b (`docs/contract.md#scopes`), root and composed calls: the
    /// scopes `def` requires that the admitted principal's token lacks.
    /// `None` (nothing to wait for, nothing allocated) when there are
    /// none; else the refusal, which writes a deny receipt first.
    pub(crate) fn scope_refusal<'g>(
        &'g self,
        admitted: &'g Admitted,
        def: &'g ToolDefinition,
    ) -> Option<BoxFuture<'g, ToolError>> {
        let principal = admitted.captured.principal();
        let missing = principal.missing_scopes(def.required_scopes());
        if missing.is_empty() {
            return None;
        }
        let missing: Vec<String> = missing.into_iter().map(str::to_owned).collect();
        Some(Box::pin(self.refuse_scope(admitted, def, missing)))
    }

    /// Records the scope refusal (a deny of `tool.invoke`, the tool
    /// redacted, no input) and gives the caller's error.
    async fn refuse_scope(
        &self,
        admitted: &Admitted,
        def: &ToolDefinition,
        missing: Vec<String>,
    ) -> ToolError {
        let captured = &*admitted.captured;
        let mut now = admitted.now;
        if let Err(error) = self.restamp(&mut now, false) {
            return error;
        }
        let listed = missing.join(" ");
        tracing::debug!(target: TARGET, tool = %def.name, missing = %listed, "insufficient scope; refusing");
        let audited = self
            .audit(&def.name, || {
                AuditReceipt::Authorization(AuthorizationReceipt {
                    request_id: Arc::clone(&captured.request_id),
                    base: Arc::clone(&captured.base),
                    timestamp: now,
                    action: AuthorizationAction::Invoke,
                    resource: def.policy_resource(None).redacted(),
                    related_resources: Vec::new(),
                    tool_name: Arc::clone(def.name_arc()),
                    outcome: AuthorizationOutcome::Deny,
                    reason: Some(Cow::Owned(format!(
                        "{INSUFFICIENT_SCOPE}: missing {listed}"
                    ))),
                    policy_id: None,
                })
            })
            .await;
        if !audited {
            return audit_failed(ReceiptKind::Authorization);
        }
        let plural = if missing.len() == 1 { "" } else { "s" };
        denied(
            ErrorCode::InsufficientScope,
            format!(
                "{INSUFFICIENT_SCOPE}: {} needs the OAuth scope{plural} {listed}, which this token does not grant; authorize again asking for {listed}",
                def.name
            ),
        )
        .with_details(serde_json::json!({
            "missingScopes": missing,
            "requiredScopes": def.required_scopes(),
        }))
    }

    /// The scopes `auth`'s token lacks to call `def`, for a surface that
    /// refuses before dispatch (HTTP 403): `None` when nothing is missing,
    /// the principal's scopes are not enforced, the principal is invalid,
    /// or `def` is hidden from it (asked as the root call asks, one
    /// receipt). A `Some` is the refusal itself: its deny receipt is
    /// written as dispatch writes it.
    pub(crate) async fn insufficient_scope(
        &self,
        auth: &AuthContext,
        def: &ToolDefinition,
    ) -> Option<Vec<String>> {
        let principal = auth.principal();
        if principal.missing_scopes(def.required_scopes()).is_empty() {
            return None;
        }
        let mut now = self.options.read_clock()?;
        auth.check(now).ok()?;
        let request_id = self.options.new_request_id()?;
        let captured = Arc::new(CapturedAuth::capture(auth.clone(), request_id));
        let stack = std::slice::from_ref(def.name_arc());
        if !matches!(
            self.discover(&captured, def, stack, &mut now).await,
            Discover::Allowed
        ) {
            return None;
        }
        let admitted = Admitted { captured, now };
        let missing: Vec<String> = principal
            .missing_scopes(def.required_scopes())
            .into_iter()
            .map(str::to_owned)
            .collect();
        // Refused either way: a receipt that cannot be written changes
        // only what dispatch would have said.
        let _ = self.refuse_scope(&admitted, def, missing.clone()).await;
        Some(missing)
    }

    /// Authorizes `tool.discover` of `def` and writes its receipt.
    async fn discover(
        &self,
        captured: &CapturedAuth,
        def: &ToolDefinition,
        call_stack: &[Arc<str>],
        now: &mut SystemTime,
    ) -> Discover {
        let resource = def.policy_resource(None);
        let request = AuthorizationRequest {
            principal: captured.principal(),
            action: AuthorizationAction::Discover,
            resource,
            related_resources: &[],
            input: None,
            call_stack,
        };
        let policy = captured.auth.policy();
        let (decision, waited) = start(|| policy.authorize(&request)).await;
        if self.restamp(now, waited).is_err() {
            return Discover::Hidden;
        }
        let (outcome, reason, policy_id) = decided(decision, def, AuthorizationAction::Discover);
        let audited = self
            .audit(&def.name, || {
                AuditReceipt::Authorization(AuthorizationReceipt {
                    request_id: Arc::clone(&captured.request_id),
                    base: Arc::clone(&captured.base),
                    timestamp: *now,
                    action: AuthorizationAction::Discover,
                    resource: resource.redacted(),
                    related_resources: Vec::new(),
                    tool_name: Arc::clone(def.name_arc()),
                    outcome,
                    reason,
                    policy_id,
                })
            })
            .await;
        // A deny beats an audit failure: hidden reads as missing.
        if outcome == AuthorizationOutcome::Deny {
            Discover::Hidden
        } else if !audited {
            Discover::AuditFailed
        } else {
            Discover::Allowed
        }
    }

    /// Steps 5–8 for an admitted call, after input validation: resolve
    /// approval, resolve the required resource, authorize `tool.invoke`,
    /// then the approval gate. `call_stack` is the stack the handler will
    /// run with (ending with this tool).
    pub(crate) async fn authorize_invoke(
        &self,
        admitted: &Admitted,
        def: &ToolDefinition,
        input: &Value,
        call_stack: &[Arc<str>],
        asker: Option<&Arc<AskSlot>>,
    ) -> Result<(), ToolError> {
        // Each step is its own future, awaited in turn: only one step's
        // state is held at a time, which keeps the call's gate state small
        // (it is boxed once per authenticated call).
        let captured = &*admitted.captured;
        let mut now = admitted.now;

        // 5. Approval from the declaration and the validated input.
        let approval = resolve(def.approval.as_ref(), input);
        crate::telemetry::record_approval_tier(approval.tier.as_str());

        // resources[0] is the tool; resources[1..] the related resources.
        let tool = def.policy_resource(Some(approval.tier));
        let mut resources = Resources::One(tool);

        // 6. The declared authorization resource.
        if let Some(declared) = &def.authorization_resource {
            let related = self
                .resolve_resource(captured, def, declared, tool, input, call_stack, &mut now)
                .await?;
            resources = resources.with(related);
        }
        let resources = resources.all();

        // 7. Authorize tool.invoke.
        self.authorize_step(captured, def, input, call_stack, resources, &mut now)
            .await?;

        // 8. The approval gate.
        let gate = ApprovalGate {
            captured,
            def,
            approval: &approval,
            input,
            call_stack,
            resources,
            asker,
        };
        self.approval_gate(gate, &mut now).await
    }

    /// Step 6: the declared resource, resolved and checked; a failure is
    /// recorded (deny) and refuses the call.
    #[allow(clippy::too_many_arguments)]
    async fn resolve_resource(
        &self,
        captured: &CapturedAuth,
        def: &ToolDefinition,
        declared: &AuthorizationResource,
        tool: &ResourceRef,
        input: &Value,
        call_stack: &[Arc<str>],
        now: &mut SystemTime,
    ) -> Result<ResourceRef, ToolError> {
        let resolution = match &self.options.resource_resolver {
            None => Err(Cow::Borrowed("Resource resolver not configured")),
            Some(resolver) => {
                let request = ResourceResolutionRequest {
                    principal: captured.principal(),
                    tool: &def.name,
                    declared,
                    input,
                    call_stack,
                };
                let (resolved, waited) = start(|| resolver.resolve(request)).await;
                self.restamp(now, waited)?;
                match resolved {
                    Err(()) => {
                        tracing::warn!(target: TARGET, tool = %def.name, "resource resolver failed; denying");
                        Err(Cow::Borrowed("Resource resolver failed"))
                    }
                    Ok(None) => Err(Cow::Borrowed("Resource not found")),
                    Ok(Some(resource)) => check_resource(declared, resource),
                }
            }
        };
        let reason = match resolution {
            Ok(resource) => return Ok(resource),
            Err(refused) => refused,
        };
        let at = *now;
        let audited = self
            .audit(&def.name, || {
                AuditReceipt::Authorization(AuthorizationReceipt {
                    request_id: Arc::clone(&captured.request_id),
                    base: Arc::clone(&captured.base),
                    timestamp: at,
                    action: AuthorizationAction::Invoke,
                    resource: tool.redacted(),
                    // Nothing was resolved that the call could act on.
                    related_resources: Vec::new(),
                    tool_name: Arc::clone(def.name_arc()),
                    outcome: AuthorizationOutcome::Deny,
                    reason: Some(reason),
                    policy_id: None,
                })
            })
            .await;
        Err(if audited {
            denied(ErrorCode::AuthResourceUnresolved, RESOURCE_UNRESOLVED)
        } else {
            audit_failed(ReceiptKind::Authorization)
        })
    }

    /// Step 7: `tool.invoke` authorized by the policy and recorded.
    async fn authorize_step(
        &self,
        captured: &CapturedAuth,
        def: &ToolDefinition,
        input: &Value,
        call_stack: &[Arc<str>],
        resources: &[ResourceRef],
        now: &mut SystemTime,
    ) -> Result<(), ToolError> {
        // The decision's state ends with this block: only the receipt's
        // write and the outcome are held while the sink stores it.
        let (audit, outcome, message) = {
            let request = AuthorizationRequest {
                principal: captured.principal(),
                action: AuthorizationAction::Invoke,
                resource: &resources[0],
                related_resources: &resources[1..],
                input: Some(input),
                call_stack,
            };
            let policy = captured.auth.policy();
            let (decision, waited) = start(|| policy.authorize(&request)).await;
            self.restamp(now, waited)?;
            let (outcome, reason, policy_id) = decided(decision, def, AuthorizationAction::Invoke);
            // A deny's reason is also the caller's message (copied only then).
            let message = match outcome {
                AuthorizationOutcome::Deny => reason.clone(),
                AuthorizationOutcome::Allow => None,
            };
            let at = *now;
            let audit = self.audit(&def.name, || {
                AuditReceipt::Authorization(AuthorizationReceipt {
                    request_id: Arc::clone(&captured.request_id),
                    base: Arc::clone(&captured.base),
                    timestamp: at,
                    action: AuthorizationAction::Invoke,
                    resource: resources[0].redacted(),
                    related_resources: resources[1..].iter().map(ResourceRef::redacted).collect(),
                    tool_name: Arc::clone(def.name_arc()),
                    outcome,
                    reason,
                    policy_id,
                })
            });
            (audit, outcome, message)
        };
        // An audit failure beats a deny at invoke.
        if !audit.await {
            return Err(audit_failed(ReceiptKind::Authorization));
        }
        if outcome == AuthorizationOutcome::Deny {
            return Err(denied(
                ErrorCode::AuthorizationDenied,
                message.unwrap_or(Cow::Borrowed(AUTHORIZATION_DENIED)),
            ));
        }
        Ok(())
    }

    /// Step 8: the approval gate — the provider's decision (asking the
    /// caller when it says so), recorded, and the call's outcome.
    async fn approval_gate(
        &self,
        gate: ApprovalGate<'_>,
        now: &mut SystemTime,
    ) -> Result<(), ToolError> {
        let options = self.options;
        let ApprovalGate {
            captured,
            def,
            approval,
            input,
            call_stack,
            resources,
            asker,
        } = gate;
        let provider = options.approval_provider.as_ref();
        let enter = options.approval_mode == ApprovalMode::Enforce
            && (provider.is_some() || approval.tier != ApprovalTier::Read);
        if !enter {
            return Ok(());
        }
        // What was decided and asked ends with this block: only the
        // receipt's write and the outcome are held while the sink stores it.
        let (audit, outcome) = {
            let decision = match provider {
                None => ApprovalDecision::denied(PROVIDER_NOT_CONFIGURED),
                Some(provider) => {
                    let request = ApprovalRequest {
                        principal: captured.principal(),
                        request_id: captured.request_id(),
                        security_context_key: captured.security_context_key(),
                        persistent_grant_key: captured.persistent_grant_key(),
                        tool: &def.name,
                        approval,
                        resources,
                        input,
                        call_stack,
                    };
                    let (decided, waited) = start(|| provider.decide(request)).await;
                    self.restamp(now, waited)?;
                    match decided {
                        Ok(decision) if lacks_request_id(&decision) => {
                            tracing::warn!(target: TARGET, tool = %def.name, "approval provider answered `required` without an approval request id; denying");
                            ApprovalDecision::denied(INVALID_DECISION)
                        }
                        Ok(decision) => decision,
                        Err(()) => {
                            tracing::warn!(target: TARGET, tool = %def.name, "approval provider failed; denying");
                            ApprovalDecision::denied(PROVIDER_FAILED)
                        }
                    }
                }
            };
            let asked = match decision {
                ApprovalDecision::AskCaller {
                    approval_request_id,
                    reason,
                } => {
                    // Boxed: asking is rare, and its state is large.
                    let asked = Box::pin(ask_caller(
                        asker,
                        captured,
                        def,
                        approval,
                        resources,
                        approval_request_id,
                        reason,
                    ))
                    .await;
                    self.restamp(now, true)?;
                    asked
                }
                decision => Asked {
                    decision,
                    consent: None,
                    pending: None,
                },
            };
            let Asked {
                decision,
                consent,
                pending,
            } = asked;
            let (receipt, outcome) =
                approval_outcome(captured, def, approval, resources, decision, consent);
            let at = *now;
            // A question waiting for its answer ends the call; the surface asks.
            let outcome = match pending {
                Some(pending) => Err(pending),
                None => outcome,
            };
            (self.audit(&def.name, || receipt(at)), outcome)
        };
        // An audit failure beats the decision.
        if !audit.await {
            return Err(audit_failed(ReceiptKind::Approval));
        }
        outcome
    }

    /// The tools of `defs` that `slot` may discover: all of them without
    /// auth; with auth, those whose `tool.discover` the policy allows (one
    /// receipt each, under one fresh request id). An invalid principal, or
    /// a clock or request-id generator that fails, discovers nothing.
    pub(crate) async fn discoverable(
        &self,
        defs: Vec<ToolDefinition>,
        slot: Option<&AuthSlot>,
    ) -> Vec<ToolDefinition> {
        let Some(slot) = slot else {
            return defs;
        };
        let Some(now) = self.options.read_clock() else {
            return Vec::new();
        };
        let captured = match slot {
            AuthSlot::Captured(captured) if captured.principal().is_expired_at(now) => {
                return Vec::new()
            }
            AuthSlot::Captured(captured) => Arc::clone(captured),
            AuthSlot::Provided(auth) => {
                let request_id = match auth.check(now) {
                    Ok(()) => self.options.new_request_id(),
                    Err(_) => None,
                };
                let Some(request_id) = request_id else {
                    return Vec::new();
                };
                Arc::new(CapturedAuth::capture(auth.clone(), request_id))
            }
        };
        let mut visible = Vec::with_capacity(defs.len());
        for def in defs {
            let Some(mut now) = self.options.read_clock() else {
                return Vec::new();
            };
            // The same question as the root call's: the stack is the tool.
            let stack = std::slice::from_ref(def.name_arc());
            if let Discover::Allowed = self.discover(&captured, &def, stack, &mut now).await {
                visible.push(def);
            }
        }
        visible
    }
}

/// A policy's answer as a receipt records it: outcome, reason and policy
/// id. A policy that failed (or panicked) denies, with a reason of ours.
fn decided(
    decision: Result<AuthorizationDecision, ()>,
    def: &ToolDefinition,
    action: AuthorizationAction,
) -> (
    AuthorizationOutcome,
    Option<Cow<'static, str>>,
    Option<String>,
) {
    match decision {
        Ok(d) => (d.outcome, d.reason.map(Cow::Owned), d.policy_id),
        Err(()) => {
            tracing::warn!(target: TARGET, tool = %def.name, %action, "authorization policy failed; denying");
            (
                AuthorizationOutcome::Deny,
                Some(Cow::Borrowed(POLICY_FAILED)),
                None,
            )
        }
    }
}

/// Whether a decision gives the caller less than it needs, which makes it
/// invalid (it denies): `Required` without an approval request id to
/// follow up on.
fn lacks_request_id(decision: &ApprovalDecision) -> bool {
    matches!(
        decision,
        ApprovalDecision::Required { approval_request_id, .. }
            if approval_request_id.as_deref().is_none_or(|id| id.trim().is_empty())
    )
}

/// The details of `APPROVAL_REQUIRED`: what a caller needs to follow up,
/// resources redacted.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequiredDetails<'a> {
    tool_name: &'a str,
    approval_tier: ApprovalTier,
    request_id: &'a str,
    approval_request_id: &'a str,
    reason: &'a str,
    /// The tool.
    resource: RedactedResource,
    /// The resolved application resource, when the tool declares one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_resources: Vec<RedactedResource>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::timestamp::option::serialize"
    )]
    expires_at: Option<SystemTime>,
}

/// What the approval gate (step 8) decides on: one value, so the
/// gate's future holds it once.
struct ApprovalGate<'g> {
    captured: &'g CapturedAuth,
    def: &'g ToolDefinition,
    approval: &'g ApprovalSpec,
    input: &'g Value,
    call_stack: &'g [Arc<str>],
    resources: &'g [ResourceRef],
    asker: Option<&'g Arc<AskSlot>>,
}

/// What asking the caller for approval came to: the decision it stands
/// for, the consent to record, and — while the answer is still to come —
/// the error that ends the call so the surface can ask.
struct Asked {
    decision: ApprovalDecision,
    consent: Option<Consent>,
    pending: Option<ToolError>,
}

/// Asks the caller to approve the call, through the surface's asker. Yes
/// approves (for this call); no, a declined or dismissed question denies.
/// A surface or client that cannot ask, or no answer in time, is
/// `Required`: the answer a caller got before asking existed.
async fn ask_caller(
    slot: Option<&Arc<AskSlot>>,
    captured: &CapturedAuth,
    def: &ToolDefinition,
    approval: &ApprovalSpec,
    resources: &[ResourceRef],
    approval_request_id: Option<String>,
    reason: Option<String>,
) -> Asked {
    let required = |id: Option<String>, reason: Option<String>| Asked {
        decision: ApprovalDecision::Required {
            approval_request_id: Some(id.unwrap_or_else(|| captured.request_id().to_owned())),
            reason,
            expires_at: None,
        },
        consent: None,
        pending: None,
    };
    let Some(slot) = slot.filter(|slot| slot.asker.can_ask(InputKind::Elicitation)) else {
        return required(approval_request_id, reason);
    };
    let key = slot.next_key("approval");
    let question = approval_question(def, approval, resources, reason.as_deref());
    let consent = |answer| Consent {
        question: key.clone(),
        answer,
        request_id: Arc::clone(&captured.request_id),
    };
    match slot.asker.ask(&[(key.clone(), question)]).await {
        Ok(mut answers) => {
            let answer = answers.pop().unwrap_or_default();
            let approved = answer.get("action").and_then(Value::as_str) == Some("accept")
                && answer.pointer("/content/approve") == Some(&Value::Bool(true));
            let id = Some(approval_request_id.unwrap_or_else(|| key.clone()));
            let decision = if approved {
                ApprovalDecision::Approved {
                    grant_id: None,
                    grant_scope: Some(GrantScope::Once),
                    reason: Some(CALLER_APPROVED.to_owned()),
                    approval_request_id: id,
                }
            } else {
                ApprovalDecision::Denied {
                    reason: Some(format!("The caller declined to approve {}", def.name)),
                    approval_request_id: id,
                }
            };
            Asked {
                decision,
                consent: Some(consent(Some(answer))),
                pending: None,
            }
        }
        Err(AskError::Pending) => Asked {
            decision: ApprovalDecision::Required {
                approval_request_id: Some(key.clone()),
                reason: Some(CALLER_ASKED.to_owned()),
                expires_at: None,
            },
            consent: Some(consent(None)),
            pending: Some(AskError::Pending.into()),
        },
        Err(error) => {
            tracing::info!(target: TARGET, tool = %def.name, %error, "the caller could not be asked for approval; approval is required");
            required(approval_request_id, reason)
        }
    }
}

/// The question put to the caller: the tool, its tier, why, and the
/// resource (redacted), with one yes/no field.
fn approval_question(
    def: &ToolDefinition,
    approval: &ApprovalSpec,
    resources: &[ResourceRef],
    reason: Option<&str>,
) -> InputRequest {
    let tier = match approval.tier {
        ApprovalTier::Read => "read",
        ApprovalTier::Write => "write",
        ApprovalTier::Exec => "exec",
    };
    let mut message = format!("Allow {} to run? It needs {tier} approval.", def.name);
    if let Some(reason) = reason.or(approval.reason.as_deref()) {
        message.push_str(&format!(" {reason}."));
    }
    if let Some(related) = resources.get(1).map(ResourceRef::redacted) {
        message.push_str(&format!(" Resource: {}", related.kind));
        if let Some(target) = &related.target {
            message.push_str(&format!(" {target}"));
        }
        message.push('.');
    }
    InputRequest::elicit(
        message,
        serde_json::json!({
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": format!("Let {} run", def.name),
                }
            },
            "required": ["approve"],
        }),
    )
}

/// Maps an approval decision to the call's outcome and the receipt that
/// records it (stamped with the time it is given).
fn approval_outcome<'c>(
    captured: &'c CapturedAuth,
    def: &'c ToolDefinition,
    approval: &'c ApprovalSpec,
    resources: &[ResourceRef],
    decision: ApprovalDecision,
    consent: Option<Consent>,
) -> (
    impl FnOnce(SystemTime) -> AuditReceipt + 'c,
    Result<(), ToolError>,
) {
    let (approval_request_id, outcome, reason, grant_id, grant_scope, result) = match decision {
        ApprovalDecision::Approved {
            grant_id,
            grant_scope,
            reason,
            approval_request_id,
        } => (
            approval_request_id,
            ApprovalOutcome::Approved,
            Some(reason.map_or(Cow::Borrowed(APPROVED), Cow::Owned)),
            grant_id,
            grant_scope,
            Ok(()),
        ),
        ApprovalDecision::Denied {
            reason,
            approval_request_id,
        } => {
            let message = reason.clone().unwrap_or_else(|| APPROVAL_DENIED.to_owned());
            let mut error = denied(ErrorCode::ApprovalDenied, message);
            if let Some(id) = &approval_request_id {
                error = error.with_details(serde_json::json!({ "approvalRequestId": id }));
            }
            (
                approval_request_id,
                ApprovalOutcome::Denied,
                reason.map(Cow::Owned),
                None,
                None,
                Err(error),
            )
        }
        // `ask_caller` answered every ask it could; one left is required.
        pending @ (ApprovalDecision::Required { .. } | ApprovalDecision::AskCaller { .. }) => {
            let (approval_request_id, reason, expires_at) = match pending {
                ApprovalDecision::Required {
                    approval_request_id,
                    reason,
                    expires_at,
                } => (approval_request_id, reason, expires_at),
                ApprovalDecision::AskCaller {
                    approval_request_id,
                    reason,
                } => (approval_request_id, reason, None),
                _ => (None, None, None),
            };
            let reason = reason.unwrap_or_else(|| APPROVAL_REQUIRED.to_owned());
            let details = RequiredDetails {
                tool_name: &def.name,
                approval_tier: approval.tier,
                request_id: captured.request_id(),
                // `checked` made sure there is one.
                approval_request_id: approval_request_id.as_deref().unwrap_or_default(),
                reason: &reason,
                resource: resources[0].redacted(),
                related_resources: resources[1..].iter().map(ResourceRef::redacted).collect(),
                expires_at,
            };
            let error = ToolError::new(
                ErrorCode::ApprovalRequired,
                format!("{APPROVAL_REQUIRED} to run {}", def.name),
            )
            .with_details(serde_json::to_value(details).unwrap_or(Value::Null));
            (
                approval_request_id,
                ApprovalOutcome::Required,
                Some(Cow::Owned(reason)),
                None,
                None,
                Err(error),
            )
        }
    };
    let receipt = move |timestamp| {
        AuditReceipt::Approval(ApprovalReceipt {
            request_id: Arc::clone(&captured.request_id),
            base: Arc::clone(&captured.base),
            timestamp,
            approval_request_id,
            tool_name: Arc::clone(def.name_arc()),
            approval_tier: approval.tier,
            outcome,
            reason,
            grant_id,
            grant_scope,
            consent,
        })
    };
    (receipt, result)
}

/// The tool resource and at most one related resource, contiguous;
/// without a heap allocation or a copy when there is no related one.
enum Resources<'d> {
    One(&'d ResourceRef),
    /// Boxed: keeps the gate future small for the common case.
    Two(Box<[ResourceRef; 2]>),
}

impl Resources<'_> {
    fn with(self, related: ResourceRef) -> Self {
        match self {
            Resources::One(tool) => Resources::Two(Box::new([tool.clone(), related])),
            two => two,
        }
    }

    fn all(&self) -> &[ResourceRef] {
        match self {
            Resources::One(tool) => std::slice::from_ref(*tool),
            Resources::Two(all) => &all[..],
        }
    }
}

enum Discover {
    Allowed,
    Hidden,
    AuditFailed,
}

/// Checks a resolved resource against the declaration: same kind, every
/// required field present. A mismatch records the contract's reason.
fn check_resource(
    declared: &AuthorizationResource,
    resource: ResourceRef,
) -> Result<ResourceRef, Cow<'static, str>> {
    let complete = declared
        .required_fields
        .iter()
        .all(|field| resource.has_field(field));
    if *resource.kind != *declared.kind || !complete {
        return Err(Cow::Borrowed(RESOURCE_UNRESOLVED));
    }
    Ok(resource)
}
