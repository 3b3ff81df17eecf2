//! A tool the caller may not discover never appears in `tools.search`, and
//! `tools.call` of it answers `TOOL_NOT_FOUND`, exactly like a missing
//! tool; the listing is the same for every caller.

use std::sync::Arc;

use gonk_tools::prelude::*;
use gonk_tools::security::*;
use gonk_tools_tests::security::{alice, auth, options, TestPolicy};

use super::catalog::{run, search, tools};

const HIDDEN: &str = "payments.charge_delete";

fn registry() -> (ToolRegistry, Arc<TestPolicy>) {
    let registry = ToolRegistry::builder().security(options()).build();
    registry.register_all(tools()).unwrap();
    gonk_tools::search::install(&registry, gonk_tools::search::SearchOptions::default()).unwrap();
    let policy = TestPolicy::new(|req| {
        Ok(
            if req.action == AuthorizationAction::Discover
                && req.resource.target.as_deref() == Some(HIDDEN)
            {
                AuthorizationDecision::deny("hidden")
            } else {
                AuthorizationDecision::allow()
            },
        )
    });
    (registry, policy)
}

#[tokio::test]
async fn a_hidden_tool_is_never_found_and_calling_it_reads_as_missing() {
    let (registry, policy) = registry();
    // Without the policy the query finds it first: the search is the same,
    // only the caller's view differs.
    let open = ToolRegistry::new();
    open.register_all(tools()).unwrap();
    gonk_tools::search::install(&open, gonk_tools::search::SearchOptions::default()).unwrap();
    let query = "permanently remove a card payment charge";
    assert_eq!(search(&open, query, ToolContext::new()).await[0], HIDDEN);

    let found = search(&registry, query, auth(alice(), &policy)).await;
    assert!(!found.is_empty(), "the other charge tools are found");
    assert!(!found.iter().any(|name| name == HIDDEN), "{found:?}");

    let hidden = run(
        &registry,
        "tools.call",
        json!({"name": HIDDEN, "arguments": {"id": "ch_1"}}),
        auth(alice(), &policy),
    )
    .await
    .unwrap_err();
    let missing = run(
        &registry,
        "tools.call",
        json!({"name": "payments.charge_vanish", "arguments": {"id": "ch_1"}}),
        auth(alice(), &policy),
    )
    .await
    .unwrap_err();
    assert_eq!(hidden.code, ErrorCode::ToolNotFound);
    assert_eq!(hidden.message, ToolError::not_found(HIDDEN).message);
    assert_eq!(missing.code, ErrorCode::ToolNotFound);

    // A visible tool still runs through tools.call for the same caller.
    let ran = run(
        &registry,
        "tools.call",
        json!({"name": "payments.charge_get", "arguments": {"id": "ch_1"}}),
        auth(alice(), &policy),
    )
    .await
    .unwrap();
    assert_eq!(ran["tool"], "payments.charge_get");

    // The catalog itself does not vary per caller: the meta-tools are
    // listed, and the hidden tool stays registered.
    assert!(registry.has("tools.search") && registry.has("tools.call") && registry.has(HIDDEN));
}
