//! The two authorization models: the entry gate checks the requested op
//! only, not the children it composes; an auth context from the caller
//! authorizes the root and every composed child.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use gonk_tools::adapters::ws::{HookError, WsHandler, WsReply};
use gonk_tools::prelude::*;
use gonk_tools::security::*;

use super::{error_of, request, Empty, Runs};

/// `parent` composes `child`; the entry gate and the policy both refuse
/// `child` when asked directly.
fn composing_registry(child_runs: &Runs) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let runs = child_runs.clone();
    registry
        .register_all([
            ToolDefinition::builder("child")
                .description("The composed tool.")
                .approval(ApprovalTier::Read)
                .handler(move |_: Empty, _| {
                    runs.0.fetch_add(1, Ordering::SeqCst);
                    async { Ok::<_, ToolError>("secret from child") }
                })
                .build(),
            ToolDefinition::builder("parent")
                .description("Composes child.")
                .approval(ApprovalTier::Read)
                .handler(|_: Empty, ctx: ToolContext| async move {
                    let child =
                        collect_tool_outcome(ctx.invoke("child", json!({})), |_| {}).await?;
                    Ok::<_, ToolError>(json!({"child": child.data}))
                })
                .build(),
        ])
        .unwrap();
    registry
}

fn principal(id: &str) -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        id,
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", id, AuthMethod::Oauth),
    )
}

#[tokio::test]
async fn the_entry_gate_checks_the_requested_op_only_not_composed_children() {
    let child_runs = Runs::default();
    let registry = composing_registry(&child_runs);
    let handler = WsHandler::builder(&registry)
        .authorize(|tool, _: &(), _| Ok::<_, HookError>(tool.name != "child"))
        .build();
    let error = error_of(handler.handle(request("child", json!({})), &()).await);
    assert_eq!(error.message, "Not authorized to invoke child");
    assert_eq!(child_runs.get(), 0);
    // The entry gate is asked about the requested op only: it saw
    // `parent`, so `child` ran.
    let reply = handler.handle(request("parent", json!({})), &()).await;
    assert_eq!(
        reply,
        WsReply::result(Some(json!("r1")), json!({"child": "secret from child"}))
    );
    assert_eq!(child_runs.get(), 1);
}

#[tokio::test]
async fn an_auth_context_from_the_caller_authorizes_the_root_and_every_composed_child() {
    let child_runs = Runs::default();
    let registry = composing_registry(&child_runs);
    // (tool, call stack) of every tool.invoke question.
    type Asked = Arc<Mutex<Vec<(String, Vec<String>)>>>;
    let asked: Asked = Arc::default();
    let log = asked.clone();
    let policy: Arc<dyn AuthorizationPolicy> =
        Arc::new(policy_fn(move |req: &AuthorizationRequest<'_>| {
            if req.action == AuthorizationAction::Invoke {
                log.lock().unwrap().push((
                    req.resource
                        .target
                        .as_deref()
                        .unwrap_or_default()
                        .to_owned(),
                    req.call_stack.iter().map(|s| s.to_string()).collect(),
                ));
            }
            Ok(match req.resource.target.as_deref() {
                Some("child") if req.action == AuthorizationAction::Invoke => {
                    AuthorizationDecision::deny("child is for admins")
                }
                _ => AuthorizationDecision::allow(),
            })
        }));
    let handler = WsHandler::builder(&registry)
        .context(move |caller: &String| {
            Ok::<_, HookError>(ToolContext::new().with_auth(AuthContext::from_shared(
                Arc::new(principal(caller)),
                policy.clone(),
            )))
        })
        .build();
    let error = error_of(
        handler
            .handle(request("parent", json!({})), &"alice".to_owned())
            .await,
    );
    assert_eq!(error.code, ErrorCode::AuthorizationDenied);
    assert_eq!(error.message, "child is for admins");
    assert_eq!(
        child_runs.get(),
        0,
        "the registry refused the composed child"
    );
    assert_eq!(
        *asked.lock().unwrap(),
        [
            ("parent".to_owned(), vec!["parent".to_owned()]),
            (
                "child".to_owned(),
                vec!["parent".to_owned(), "child".to_owned()]
            ),
        ]
    );
}
