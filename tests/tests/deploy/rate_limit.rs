//! One budget across the replicas: `--rate-limit 3/1m --shared redis://…`
//! on each, principals from `NOTES_API_KEYS`. Alice's three calls land on
//! the three replicas and pass; every further call of hers is
//! `RATE_LIMITED`, whichever replica takes it; Bob is unaffected.

use std::collections::BTreeSet;

use crate::support::{call, redis_url, replica, Answer, Deployment, Recipe, RedisPrefix};
use serde_json::{json, Value};

fn search(deployment: &Deployment, key: &str) -> (String, Value) {
    let bearer = format!("Authorization: Bearer {key}");
    let answer: Answer = call(
        deployment.addr,
        "notes.search",
        json!({ "query": "budget" }),
        json!({}),
        &[&bearer],
    );
    assert_eq!(answer.status, 200, "{}", answer.text());
    (replica(&answer), answer.message()["result"].clone())
}

#[test]
fn one_principal_budget_holds_across_the_replicas_and_another_principal_is_unaffected() {
    let prefix = RedisPrefix::new("rate-limit");
    let deployment = Deployment::start(Recipe {
        shared: Some(redis_url()),
        serve: vec!["--rate-limit".into(), "3/1m".into()],
        env: vec![
            ("NOTES_SHARED_PREFIX".into(), prefix.0.clone()),
            (
                "NOTES_API_KEYS".into(),
                "alice=alice-key,bob=bob-key".into(),
            ),
        ],
        ..Recipe::default()
    });

    let mut fitted = BTreeSet::new();
    for _ in 0..3 {
        let (on, result) = search(&deployment, "alice-key");
        assert_eq!(result["isError"], false, "{on}: {result}");
        fitted.insert(on);
    }
    assert_eq!(
        fitted.len(),
        3,
        "the budget was spent on every replica: {fitted:?}"
    );

    let mut refused = BTreeSet::new();
    for _ in 0..3 {
        let (on, result) = search(&deployment, "alice-key");
        assert_eq!(result["isError"], true, "{on}: {result}");
        let error = &result["_meta"]["gonk-tools/error"];
        assert_eq!(error["code"], "RATE_LIMITED", "{on}: {result}");
        assert_eq!(error["details"]["limit"], 3, "{result}");
        assert!(
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .contains("key:alice"),
            "{result}"
        );
        refused.insert(on);
    }
    assert_eq!(refused.len(), 3, "every replica refused: {refused:?}");

    let (on, result) = search(&deployment, "bob-key");
    assert_eq!(result["isError"], false, "bob on {on}: {result}");

    // A key nobody has is refused before any budget is looked at.
    let answer = call(
        deployment.addr,
        "notes.search",
        json!({ "query": "budget" }),
        json!({}),
        &["Authorization: Bearer mallory-key"],
    );
    assert_eq!(answer.status, 401, "{}", answer.text());
}
