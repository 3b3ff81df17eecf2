//! Resources and prompts under an authenticated registry: one the
//! principal may not discover is exactly a missing one — the same error
//! on read, get and completion, absent from the listings, its handler
//! never run — and the policy sees each as a resource of its own kind.

use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;
use gonk_tools::prompt::PromptDefinition;
use gonk_tools::resource::ResourceDefinition;
use gonk_tools::security::*;
use gonk_tools::CompletionTarget;
use gonk_tools_tests::security::*;

#[derive(Deserialize, JsonSchema)]
struct Id {
    id: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Topic {
    /// What to write about.
    topic: String,
}

/// Hides everything whose policy target starts with `secret`.
fn hide_secrets() -> std::sync::Arc<TestPolicy> {
    TestPolicy::new(|req| {
        let secret = req
            .resource
            .target
            .as_deref()
            .is_some_and(|t| t.starts_with("secret"));
        Ok(if req.action == AuthorizationAction::Discover && secret {
            AuthorizationDecision::deny("hidden")
        } else {
            AuthorizationDecision::allow()
        })
    })
}

/// A registry with a visible and (optionally) a secret resource template
/// and prompt, each counting its runs.
fn registry(with_secrets: bool, runs: &Counter) -> ToolRegistry {
    let registry = ToolRegistry::builder().security(options()).build();
    let templates = if with_secrets {
        vec!["notes://{id}", "secret://{id}"]
    } else {
        vec!["notes://{id}"]
    };
    for uri in templates {
        let runs = runs.clone();
        registry
            .register_resource(
                ResourceDefinition::builder(uri)
                    .description("A document.")
                    .handler(move |vars: Id, _| {
                        runs.hit();
                        async move { Ok::<_, ToolError>(format!("document {}", vars.id)) }
                    })
                    .complete("id", |_: CompletionRequest, _| async {
                        Ok::<_, ToolError>(vec!["1", "2"])
                    })
                    .build(),
            )
            .unwrap();
    }
    let prompts = if with_secrets {
        vec!["write", "secret.write"]
    } else {
        vec!["write"]
    };
    for name in prompts {
        let runs = runs.clone();
        registry
            .register_prompt(
                PromptDefinition::builder(name)
                    .description("Write about a topic.")
                    .handler(move |args: Topic, _| {
                        runs.hit();
                        async move { Ok::<_, ToolError>(format!("Write about {}.", args.topic)) }
                    })
                    .complete("topic", |_: CompletionRequest, _| async {
                        Ok::<_, ToolError>(vec!["rust"])
                    })
                    .build(),
            )
            .unwrap();
    }
    registry
}

fn wire(error: ToolError) -> serde_json::Value {
    serde_json::to_value(error).unwrap()
}

#[tokio::test]
async fn a_hidden_resource_reads_exactly_as_a_missing_one() {
    let policy = hide_secrets();
    let runs = Counter::default();
    let hidden = registry(true, &runs)
        .read_resource("secret://7", auth(alice(), &policy))
        .await
        .unwrap_err();
    let missing = registry(false, &runs)
        .read_resource("secret://7", auth(alice(), &policy))
        .await
        .unwrap_err();
    assert_eq!(wire(hidden.clone()), wire(missing));
    assert_eq!(hidden.code, ErrorCode::ResourceNotFound);
    assert_eq!(runs.get(), 0, "no handler ran");

    // The visible one reads, and the policy saw a resource of kind
    // `resource` targeted at its template.
    let read = registry(true, &runs)
        .read_resource("notes://7", auth(alice(), &policy))
        .await
        .unwrap();
    assert_eq!(read[0].as_text(), Some("document 7"));
    let seen = policy.seen();
    let last = seen.last().unwrap();
    assert_eq!(last.resource.kind.as_ref(), "resource");
    assert_eq!(last.resource.target.as_deref(), Some("notes://{id}"));
}

#[tokio::test]
async fn a_hidden_prompt_gets_and_completes_exactly_as_a_missing_one() {
    let policy = hide_secrets();
    let runs = Counter::default();
    let args = json!({"topic": "rust"}).as_object().unwrap().clone();
    let hidden = registry(true, &runs)
        .get_prompt("secret.write", args.clone(), auth(alice(), &policy))
        .await
        .unwrap_err();
    let missing = registry(false, &runs)
        .get_prompt("secret.write", args, auth(alice(), &policy))
        .await
        .unwrap_err();
    assert_eq!(wire(hidden.clone()), wire(missing));
    assert_eq!(hidden.code, ErrorCode::PromptNotFound);

    let ask = CompletionRequest {
        argument: "topic".into(),
        value: "r".into(),
        ..Default::default()
    };
    let target = CompletionTarget::Prompt("secret.write".into());
    let hidden = registry(true, &runs)
        .complete(&target, ask.clone(), auth(alice(), &policy))
        .await
        .unwrap_err();
    let missing = registry(false, &runs)
        .complete(&target, ask.clone(), auth(alice(), &policy))
        .await
        .unwrap_err();
    assert_eq!(wire(hidden), wire(missing));

    let target = CompletionTarget::Resource("secret://{id}".into());
    let hidden = registry(true, &runs)
        .complete(
            &target,
            CompletionRequest {
                argument: "id".into(),
                ..ask.clone()
            },
            auth(alice(), &policy),
        )
        .await
        .unwrap_err();
    let missing = registry(false, &runs)
        .complete(
            &target,
            CompletionRequest {
                argument: "id".into(),
                ..ask
            },
            auth(alice(), &policy),
        )
        .await
        .unwrap_err();
    assert_eq!(wire(hidden), wire(missing));
    assert_eq!(runs.get(), 0, "no handler ran");
}

#[tokio::test]
async fn listings_leave_out_what_the_principal_may_not_discover() {
    let policy = hide_secrets();
    let runs = Counter::default();
    let registry = registry(true, &runs);
    let ctx = auth(alice(), &policy);
    let resources: Vec<String> = registry
        .list_resources_for(&ctx)
        .await
        .iter()
        .map(|r| r.uri().to_owned())
        .collect();
    assert_eq!(resources, ["notes://{id}"]);
    let prompts: Vec<String> = registry
        .list_prompts_for(&ctx)
        .await
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    assert_eq!(prompts, ["write"]);
    // Without auth (the unauthenticated path) everything is listed.
    assert_eq!(
        registry.list_resources_for(&ToolContext::new()).await.len(),
        2
    );
    assert_eq!(
        registry.list_prompts_for(&ToolContext::new()).await.len(),
        2
    );
}

#[tokio::test]
async fn an_invoke_deny_on_a_visible_resource_is_a_denial_not_a_missing_resource() {
    let policy = TestPolicy::new(|req| {
        Ok(if req.action == AuthorizationAction::Invoke {
            AuthorizationDecision::deny("read-only for now").with_policy_id("freeze")
        } else {
            AuthorizationDecision::allow()
        })
    });
    let runs = Counter::default();
    let error = registry(false, &runs)
        .read_resource("notes://1", auth(alice(), &policy))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::AuthorizationDenied);
    assert_eq!(runs.get(), 0);
}
