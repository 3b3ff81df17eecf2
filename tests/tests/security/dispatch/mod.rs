//! Authenticated dispatch, gate by gate in the order `docs/contract.md`
//! gives — discover, input validation, approval resolution, resource
//! resolution, invoke authorization, the approval gate — with their
//! receipts, metrics and call counts; composition; the unauthenticated
//! path. Families of cases that differ only in their setup are tables.

mod approval_gate;
mod approval_resolution;
mod audit;
mod cancellation;
mod composition;
mod discover;
mod invoke;
mod primitives;
mod receipts;
mod resources;
mod scopes;
mod unauthenticated;

use std::sync::Arc;

use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::*;
use serde_json::Value;

fn authz(r: &AuditReceipt) -> &AuthorizationReceipt {
    r.as_authorization().expect("an authorization receipt")
}

fn appr(r: &AuditReceipt) -> &ApprovalReceipt {
    r.as_approval().expect("an approval receipt")
}

fn deny_discover_of(tool: &'static str) -> Arc<TestPolicy> {
    TestPolicy::new(move |req| {
        Ok(
            if req.action == AuthorizationAction::Discover
                && req.resource.target.as_deref() == Some(tool)
            {
                AuthorizationDecision::deny("hidden").with_policy_id("hide")
            } else {
                AuthorizationDecision::allow()
            },
        )
    })
}

fn deny_invoke(reason: Option<&'static str>) -> Arc<TestPolicy> {
    TestPolicy::new(move |req| {
        Ok(match (&req.action, reason) {
            (AuthorizationAction::Invoke, Some(reason)) => {
                AuthorizationDecision::deny(reason).with_policy_id("writers-only")
            }
            (AuthorizationAction::Invoke, None) => AuthorizationDecision {
                outcome: AuthorizationOutcome::Deny,
                reason: None,
                policy_id: None,
            },
            _ => AuthorizationDecision::allow(),
        })
    })
}

/// A sink that fails the invoke authorization receipt only.
fn failing_invoke_receipts() -> Arc<TestSink> {
    TestSink::failing_when(|r| {
        r.as_authorization()
            .is_some_and(|a| a.action == AuthorizationAction::Invoke)
    })
}

fn not_found(tool: &str) -> Value {
    refused("TOOL_NOT_FOUND", &format!("No such tool: {tool}"))
}

/// `parent` calls `child` via ctx.invoke and reports the child's outcome.
fn register_composition(
    registry: &ToolRegistry,
    child_approval: ApprovalTier,
) -> (Counter, Counter) {
    let parent_runs = Counter::default();
    let child_runs = Counter::default();
    let c = child_runs.clone();
    registry
        .register(
            ToolDefinition::builder("child")
                .description("The child.")
                .approval(child_approval)
                .handler(move |_: Value, ctx: ToolContext| {
                    c.hit();
                    async move {
                        Ok::<_, ToolError>(json!({
                            "requestId": ctx.request_id(),
                            "principal": ctx.auth().map(|a| a.principal().id.clone()),
                            "stack": ctx.call_stack().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                        }))
                    }
                })
                .build(),
        )
        .unwrap();
    let p = parent_runs.clone();
    registry
        .register(
            ToolDefinition::builder("parent")
                .description("The parent.")
                .approval(ApprovalTier::Read)
                .handler(move |_: Value, ctx: ToolContext| {
                    p.hit();
                    async move {
                        let out =
                            collect_tool_outcome(ctx.invoke("child", json!({})), |_| {}).await?;
                        Ok::<_, ToolError>(out.data)
                    }
                })
                .build(),
        )
        .unwrap();
    (parent_runs, child_runs)
}
