//! With 1,000 tools, `tools.search` puts the right tool in its top 3 for
//! each of 20 fixed queries, and `tools.call` runs it.

use gonk_tools::prelude::*;

use super::catalog::{registry, run, search};

/// A request in words, and the tool that does it. The queries use
/// descriptions' and properties' words, not only the names; BM25 is
/// lexical, so each shares at least one word with its tool's text (a pure
/// synonym, "renew" for "update", is not matched).
const QUERIES: [(&str, &str); 20] = [
    ("send a bill to a customer", "billing.invoice_create"),
    ("give a customer their money back", "billing.refund_create"),
    ("delete a calendar meeting", "calendar.event_delete"),
    ("book a meeting room", "calendar.room_create"),
    (
        "open a new pull request on github",
        "github.pull_request_create",
    ),
    (
        "why did the CI pipeline run fail",
        "github.workflow_run_get",
    ),
    (
        "post a chat message in a slack channel",
        "slack.message_create",
    ),
    (
        "get tomorrow's rain forecast for Paris",
        "weather.forecast_get",
    ),
    ("driving directions between two places", "maps.route_get"),
    ("coordinates for a street address", "maps.geocode_get"),
    ("request vacation days off", "hr.leave_request_create"),
    (
        "where is my parcel, tracking number",
        "shipping.tracking_get",
    ),
    (
        "export conversion funnel data as CSV",
        "analytics.funnel_export",
    ),
    (
        "update the TLS certificate for HTTPS",
        "dns.certificate_update",
    ),
    (
        "change the number of replicas of a kubernetes deployment",
        "kubernetes.deployment_update",
    ),
    ("restore a database backup snapshot", "database.backup_get"),
    (
        "update a chargeback dispute with new evidence",
        "payments.dispute_update",
    ),
    (
        "translate a passage into another language",
        "translation.text_create",
    ),
    (
        "search flights by departure airport",
        "travel.flight_search",
    ),
    (
        "archive an old customer support ticket",
        "support.ticket_archive",
    ),
];

#[tokio::test]
async fn each_query_finds_its_tool_in_the_top_3_and_tools_call_runs_it() {
    let registry = registry();
    assert_eq!(
        registry.list().len(),
        1002,
        "1,000 tools and the two meta-tools"
    );
    let mut misses = Vec::new();
    for (query, expected) in QUERIES {
        let found = search(&registry, query, ToolContext::new()).await;
        let top3 = &found[..found.len().min(3)];
        if !top3.iter().any(|name| name == expected) {
            misses.push(format!("{query:?}: expected {expected}, got {top3:?}"));
        }
    }
    assert!(
        misses.is_empty(),
        "queries whose tool is not in the top 3:\n{}",
        misses.join("\n")
    );

    for (_, expected) in QUERIES {
        let answer = run(
            &registry,
            "tools.call",
            json!({"name": expected, "arguments": {"id": "r-1"}}),
            ToolContext::new(),
        )
        .await
        .expect("tools.call runs the tool");
        assert_eq!(
            answer,
            json!({"tool": expected, "arguments": {"id": "r-1"}})
        );
    }
}

#[tokio::test]
async fn hits_carry_description_score_and_schema_best_first_within_the_limit() {
    let registry = registry();
    let found = run(
        &registry,
        "tools.search",
        json!({"query": "weather forecast", "limit": 4}),
        ToolContext::new(),
    )
    .await
    .unwrap();
    let hits = found["tools"].as_array().unwrap();
    assert_eq!(hits.len(), 4);
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {scores:?}"
    );
    let first = &hits[0];
    let def = registry.get(first["name"].as_str().unwrap()).unwrap();
    assert_eq!(first["description"], def.description);
    assert_eq!(&first["input_schema"], def.effective_input_schema());
    // The meta-tools are not search results.
    let meta = search(
        &registry,
        "search tools call run by name",
        ToolContext::new(),
    )
    .await;
    assert!(!meta.iter().any(|n| n.starts_with("tools.")), "{meta:?}");
}

#[tokio::test]
async fn tools_call_keeps_the_contract_invalid_arguments_and_a_missing_tool() {
    let registry = registry();
    let invalid = run(
        &registry,
        "tools.call",
        json!({"name": "weather.forecast_get", "arguments": {"nope": 1}}),
        ToolContext::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(invalid.code, ErrorCode::InvalidInput);
    let missing = run(
        &registry,
        "tools.call",
        json!({"name": "weather.tornado_summon"}),
        ToolContext::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(missing.code, ErrorCode::ToolNotFound);
    let too_many = run(
        &registry,
        "tools.search",
        json!({"query": "weather", "limit": 500}),
        ToolContext::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(too_many.code, ErrorCode::InvalidInput);
    let issues = too_many.issues();
    assert_eq!(issues[0].path, "/limit");
    assert!(issues[0].message.contains("ask for fewer"), "{issues:?}");
}

#[tokio::test]
async fn the_index_follows_the_registry_generation() {
    let registry = registry();
    assert!(search(&registry, "teleport", ToolContext::new())
        .await
        .is_empty());
    registry
        .register(super::catalog::tool(
            "travel.teleport_create",
            "Teleport a traveller instantly.",
            "destination",
            "where to appear",
        ))
        .unwrap();
    let found = search(&registry, "teleport", ToolContext::new()).await;
    assert_eq!(found, ["travel.teleport_create"]);
    assert!(registry.unregister("travel.teleport_create"));
    assert!(search(&registry, "teleport", ToolContext::new())
        .await
        .is_empty());
}
