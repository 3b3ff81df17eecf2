//! The gates of authenticated dispatch (DESIGN §4, steps 3 and 5–8):
//! capture and discover before input validation; approval resolution,
//! resource resolution, invoke authorization and the approval gate after
//! it. [`crate::dispatch`] calls them; every outcome here is a receipt and,
//! on refusal, the `ToolError` the caller sees.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::SystemTime;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::approval::{resolve, ApprovalMode};
use super::auth_context::{AuthContext, CapturedAuth};
use super::error::SecurityError;
use super::messages::*;
use super::options::SecurityOptions;
use super::policy::{AuthorizationAction, AuthorizationOutcome, AuthorizationRequest};
use super::provider::{ApprovalDecision, ApprovalRequest};
use super::receipt::{ApprovalOutcome, ApprovalReceipt, AuditReceipt, AuthorizationReceipt};
use super::resource::{RedactedResource, ResourceRef, ResourceResolutionRequest};
use super::tool_resource::tool_resource;
use crate::context::{AuthSlot, ToolContext};
use crate::definition::{ApprovalSpec, ApprovalTier, ToolDefinition};
use crate::error::{ErrorCode, ToolError};
use crate::registry::ToolRegistry;

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

/// After a deciding component answered: when it had to wait, `now` (the
/// timestamp of the receipt that records its decision) is read again.
/// Gates that decide without waiting share one clock reading.
fn restamp(now: &mut SystemTime, waited: bool, options: &SecurityOptions) {
    if waited {
        *now = options.now();
    }
}

/// A receipt handed to the sink: resolves to `false` when it could not be
/// stored and audit is mandatory (the call must stop).
struct AuditWrite<'a> {
    options: &'a SecurityOptions,
    /// The tool (for the failure log line) and the sink call; `None` when
    /// no sink is configured.
    call: Option<(Arc<str>, Call<'a, ()>)>,
}

impl Future for AuditWrite<'_> {
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

fn audit_failed() -> ToolError {
    denied(ErrorCode::AuthAuditFailed, AUDIT_FAILED)
}

/// Writes receipts per the options; `false` when a receipt could not be
/// written and audit is mandatory (the caller must stop).
struct Auditor<'a> {
    options: &'a SecurityOptions,
}

impl<'a> Auditor<'a> {
    /// Builds and hands over the receipt now; the returned future only
    /// waits for the sink (and holds no receipt).
    fn write(&self, receipt: impl FnOnce() -> AuditReceipt) -> AuditWrite<'a> {
        let options = self.options;
        AuditWrite {
            options,
            call: options.audit_sink.as_ref().map(|sink| {
                let receipt = receipt();
                let tool = receipt.tool_arc();
                (tool, start(|| sink.record(receipt)))
            }),
        }
    }
}

impl ToolRegistry {
    /// Steps 3 (root) / principal check (child): capture the auth context,
    /// validate the principal and, at the root, authorize `tool.discover`.
    /// `is_root`: the call stack is empty (not a composed call).
    pub(crate) async fn admit(
        &self,
        def: &ToolDefinition,
        slot: &AuthSlot,
        is_root: bool,
    ) -> Result<(Arc<CapturedAuth>, SystemTime), ToolError> {
        let options = &*self.inner.security;
        let mut now = options.now();
        match slot {
            AuthSlot::Captured(captured) => {
                // A composed child: the principal was validated at the root;
                // it may have expired since.
                if captured.principal().is_expired_at(now) {
                    return Err(denied(ErrorCode::AuthorizationDenied, INVALID_PRINCIPAL));
                }
                Ok((Arc::clone(captured), now))
            }
            AuthSlot::Provided(auth) => {
                let Some(captured) = capture(options, auth, now) else {
                    tracing::debug!(target: TARGET, tool = %def.name, root = is_root, "invalid authenticated principal");
                    return Err(if is_root {
                        ToolError::not_found(&def.name)
                    } else {
                        denied(ErrorCode::AuthorizationDenied, INVALID_PRINCIPAL)
                    });
                };
                if !is_root {
                    return Ok((captured, now));
                }
                let resource = tool_resource(def, None);
                match self.discover_gate(&captured, def, resource, &mut now).await {
                    Discover::Allowed => Ok((captured, now)),
                    Discover::Hidden => Err(ToolError::not_found(&def.name)),
                    Discover::AuditFailed => Err(audit_failed()),
                }
            }
        }
    }

    /// Authorizes `tool.discover` of `def` and writes its receipt.
    async fn discover_gate(
        &self,
        captured: &CapturedAuth,
        def: &ToolDefinition,
        resource: &ResourceRef,
        now: &mut SystemTime,
    ) -> Discover {
        let options = &*self.inner.security;
        let request = AuthorizationRequest {
            principal: captured.principal(),
            action: AuthorizationAction::Discover,
            resource,
            related_resources: &[],
            input: None,
            call_stack: &[],
        };
        let policy = captured.auth.policy();
        let (decision, waited) = start(|| policy.authorize(&request)).await;
        restamp(now, waited, options);
        let (outcome, reason, policy_id) = match decision {
            Ok(d) => (d.outcome, d.reason, d.policy_id),
            Err(()) => {
                tracing::warn!(target: TARGET, tool = %def.name, action = "tool.discover", "authorization policy failed; denying");
                (
                    AuthorizationOutcome::Deny,
                    Some(POLICY_FAILED.to_owned()),
                    None,
                )
            }
        };
        let auditor = Auditor { options };
        let audited = auditor
            .write(|| {
                AuditReceipt::Authorization(AuthorizationReceipt {
                    request_id: Arc::clone(&captured.request_id),
                    base: Arc::clone(&captured.base),
                    timestamp: *now,
                    action: AuthorizationAction::Discover,
                    resource: resource.redacted(),
                    related_resources: Vec::new(),
                    tool: Arc::clone(def.name_arc()),
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

    /// Steps 5–8 for an authenticated call, after input validation:
    /// resolve approval, resolve the required resource, authorize
    /// `tool.invoke`, then the approval gate. `call_stack` is the stack the
    /// handler will run with (ending with this tool).
    pub(crate) async fn authorize_invoke(
        &self,
        captured: &CapturedAuth,
        def: &ToolDefinition,
        input: &Value,
        call_stack: &[Arc<str>],
        mut now: SystemTime,
    ) -> Result<(), ToolError> {
        let options = &*self.inner.security;
        let auditor = Auditor { options };
        let principal = captured.principal();

        // 5. Approval from the declaration and the validated input.
        let approval = resolve(def.approval.as_ref(), input);

        // resources[0] is the tool; resources[1..] the related resources.
        let mut resources = Resources::One(tool_resource(def, Some(approval.tier)));

        // 6. The declared authorization resource.
        if let Some(declared) = &def.authorization_resource {
            let resolution = match &options.resource_resolver {
                None => Err(("Resource resolver not configured".to_owned(), None)),
                Some(resolver) => {
                    let request = ResourceResolutionRequest {
                        principal,
                        tool: &def.name,
                        declared,
                        input,
                        call_stack,
                    };
                    let (resolved, waited) = start(|| resolver.resolve(request)).await;
                    restamp(&mut now, waited, options);
                    match resolved {
                        Err(()) => {
                            tracing::warn!(target: TARGET, tool = %def.name, "resource resolver failed; denying");
                            Err(("Resource resolver failed".to_owned(), None))
                        }
                        Ok(None) => Err(("Resource not found".to_owned(), None)),
                        Ok(Some(resource)) => check_resource(declared, resource),
                    }
                }
            };
            match resolution {
                Ok(resource) => resources = resources.with(resource),
                Err((reason, partial)) => {
                    let audited = auditor
                        .write(|| {
                            AuditReceipt::Authorization(AuthorizationReceipt {
                                request_id: Arc::clone(&captured.request_id),
                                base: Arc::clone(&captured.base),
                                timestamp: now,
                                action: AuthorizationAction::Invoke,
                                resource: resources.all()[0].redacted(),
                                related_resources: partial.into_iter().collect(),
                                tool: Arc::clone(def.name_arc()),
                                outcome: AuthorizationOutcome::Deny,
                                reason: Some(reason),
                                policy_id: None,
                            })
                        })
                        .await;
                    return Err(if audited {
                        denied(ErrorCode::AuthResourceUnresolved, RESOURCE_UNRESOLVED)
                    } else {
                        audit_failed()
                    });
                }
            }
        }

        // 7. Authorize tool.invoke.
        let resources = resources.all();
        let request = AuthorizationRequest {
            principal,
            action: AuthorizationAction::Invoke,
            resource: &resources[0],
            related_resources: &resources[1..],
            input: Some(input),
            call_stack,
        };
        let policy = captured.auth.policy();
        let (decision, waited) = start(|| policy.authorize(&request)).await;
        restamp(&mut now, waited, options);
        let (outcome, reason, policy_id, message) = match decision {
            Ok(d) => {
                let message = d.reason.clone();
                (d.outcome, d.reason, d.policy_id, message)
            }
            Err(()) => {
                tracing::warn!(target: TARGET, tool = %def.name, action = "tool.invoke", "authorization policy failed; denying");
                (
                    AuthorizationOutcome::Deny,
                    Some(POLICY_FAILED.to_owned()),
                    None,
                    Some(POLICY_FAILED.to_owned()),
                )
            }
        };
        let audited = auditor
            .write(|| {
                AuditReceipt::Authorization(AuthorizationReceipt {
                    request_id: Arc::clone(&captured.request_id),
                    base: Arc::clone(&captured.base),
                    timestamp: now,
                    action: AuthorizationAction::Invoke,
                    resource: resources[0].redacted(),
                    related_resources: resources[1..].iter().map(ResourceRef::redacted).collect(),
                    tool: Arc::clone(def.name_arc()),
                    outcome,
                    reason,
                    policy_id,
                })
            })
            .await;
        // An audit failure beats a deny at invoke.
        if !audited {
            return Err(audit_failed());
        }
        if outcome == AuthorizationOutcome::Deny {
            return Err(denied(
                ErrorCode::AuthorizationDenied,
                message.unwrap_or_else(|| AUTHORIZATION_DENIED.to_owned()),
            ));
        }

        // 8. The approval gate.
        let provider = options.approval_provider.as_ref();
        let enter = options.approval_mode == ApprovalMode::Enforce
            && (provider.is_some() || approval.tier != ApprovalTier::Read);
        if !enter {
            return Ok(());
        }
        let decision = match provider {
            None => ApprovalDecision::Denied {
                reason: Some(PROVIDER_NOT_CONFIGURED.to_owned()),
            },
            Some(provider) => {
                let request = ApprovalRequest {
                    principal,
                    request_id: captured.request_id(),
                    security_context_key: captured.security_context_key(),
                    persistent_grant_key: captured.persistent_grant_key(),
                    tool: &def.name,
                    approval: &approval,
                    resources,
                    input,
                    call_stack,
                };
                let (decided, waited) = start(|| provider.decide(request)).await;
                restamp(&mut now, waited, options);
                match decided {
                    Ok(decision) => decision,
                    Err(()) => {
                        tracing::warn!(target: TARGET, tool = %def.name, "approval provider failed; denying");
                        ApprovalDecision::Denied {
                            reason: Some(PROVIDER_FAILED.to_owned()),
                        }
                    }
                }
            }
        };
        let (audited, outcome) =
            self.approval_outcome(captured, def, &approval, resources, decision, now);
        // An audit failure beats the decision.
        if !audited.await {
            return Err(audit_failed());
        }
        outcome
    }

    /// Maps the approval decision to the call's outcome and hands its
    /// receipt to the sink; the returned future waits for the sink.
    fn approval_outcome(
        &self,
        captured: &CapturedAuth,
        def: &ToolDefinition,
        approval: &ApprovalSpec,
        resources: &[ResourceRef],
        decision: ApprovalDecision,
        now: SystemTime,
    ) -> (
        impl std::future::Future<Output = bool> + Send + '_,
        Result<(), ToolError>,
    ) {
        let options = &*self.inner.security;
        let receipt = |approval_request_id: Option<String>,
                       outcome: ApprovalOutcome,
                       reason: Option<String>,
                       grant_id: Option<String>,
                       grant_scope| {
            AuditReceipt::Approval(ApprovalReceipt {
                request_id: Arc::clone(&captured.request_id),
                base: Arc::clone(&captured.base),
                timestamp: now,
                approval_request_id,
                tool: Arc::clone(def.name_arc()),
                approval_tier: approval.tier,
                outcome,
                reason,
                grant_id,
                grant_scope,
            })
        };
        let (receipt, outcome) = match decision {
            ApprovalDecision::Approved {
                grant_id,
                grant_scope,
                reason,
            } => (
                receipt(
                    None,
                    ApprovalOutcome::Approved,
                    reason,
                    grant_id,
                    grant_scope,
                ),
                Ok(()),
            ),
            ApprovalDecision::Denied { reason } => {
                let message = reason.clone().unwrap_or_else(|| APPROVAL_DENIED.to_owned());
                (
                    receipt(None, ApprovalOutcome::Denied, reason, None, None),
                    Err(denied(ErrorCode::ApprovalDenied, message)),
                )
            }
            ApprovalDecision::Required {
                approval_request_id,
                reason,
                expires_at,
            } => {
                let reason = reason.unwrap_or_else(|| APPROVAL_REQUIRED.to_owned());
                let mut details = Map::new();
                details.insert(
                    "requestId".into(),
                    Value::String(captured.request_id().to_owned()),
                );
                if let Some(id) = &approval_request_id {
                    details.insert("approvalRequestId".into(), Value::String(id.clone()));
                }
                details.insert("tool".into(), Value::String(def.name.clone()));
                details.insert("tier".into(), Value::String(approval.tier.as_str().into()));
                details.insert("reason".into(), Value::String(reason.clone()));
                let redacted: Vec<RedactedResource> =
                    resources.iter().map(ResourceRef::redacted).collect();
                details.insert(
                    "resources".into(),
                    serde_json::to_value(redacted).unwrap_or(Value::Null),
                );
                if let Some(at) = expires_at {
                    details.insert(
                        "expiresAt".into(),
                        Value::String(super::timestamp::format(at)),
                    );
                }
                let error = ToolError::new(
                    ErrorCode::ApprovalRequired,
                    format!("Approval required to run {}", def.name),
                )
                .with_details(Value::Object(details));
                (
                    receipt(
                        approval_request_id,
                        ApprovalOutcome::Required,
                        Some(reason),
                        None,
                        None,
                    ),
                    Err(error),
                )
            }
        };
        let audited = Auditor { options }.write(|| receipt);
        (audited, outcome)
    }

    /// The tools `ctx` may discover: every tool without auth; with auth,
    /// those whose `tool.discover` the policy allows (one receipt each,
    /// under one fresh request id). An invalid principal discovers nothing.
    ///
    /// Surfaces that list tools to an authenticated caller (MCP
    /// `tools/list`) use this, so hidden tools stay hidden.
    pub async fn list_discoverable(&self, ctx: &ToolContext) -> Vec<ToolDefinition> {
        let options = &*self.inner.security;
        let tools = self.list();
        let now = options.now();
        let captured = match &ctx.auth {
            None => return tools,
            Some(AuthSlot::Captured(captured)) => {
                if captured.principal().is_expired_at(now) {
                    return Vec::new();
                }
                Arc::clone(captured)
            }
            Some(AuthSlot::Provided(auth)) => match capture(options, auth, now) {
                Some(captured) => captured,
                None => return Vec::new(),
            },
        };
        let mut visible = Vec::with_capacity(tools.len());
        for def in tools {
            let resource = tool_resource(&def, None);
            let mut now = options.now();
            if let Discover::Allowed = self
                .discover_gate(&captured, &def, resource, &mut now)
                .await
            {
                visible.push(def);
            }
        }
        visible
    }
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

/// Validates the principal (structure and expiry) and captures it with a
/// fresh request id; `None` when it is invalid.
fn capture(
    options: &SecurityOptions,
    auth: &AuthContext,
    now: SystemTime,
) -> Option<Arc<CapturedAuth>> {
    auth.check(now).ok()?;
    Some(Arc::new(CapturedAuth::capture(
        auth.clone(),
        options.next_request_id(),
    )))
}

/// Checks a resolved resource against the declaration: same kind, every
/// required field present.
fn check_resource(
    declared: &crate::definition::AuthorizationResource,
    resource: ResourceRef,
) -> Result<ResourceRef, (String, Option<RedactedResource>)> {
    if *resource.kind != *declared.kind {
        return Err((
            format!(
                "Resolved resource has kind {}, expected {}",
                resource.kind, declared.kind
            ),
            Some(resource.redacted()),
        ));
    }
    if let Some(field) = declared
        .required_fields
        .iter()
        .find(|f| !resource.has_field(f))
    {
        return Err((
            format!("Resolved resource lacks required field {field}"),
            Some(resource.redacted()),
        ));
    }
    Ok(resource)
}
