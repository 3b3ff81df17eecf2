//! The official Python SDK (`mcp` 2.x, the session-free `2026-07-28` era)
//! creates, searches and exports through HAProxy: every request lands on
//! the next replica in turn, and every note it created is in the store
//! exactly once.

use std::collections::BTreeSet;

use crate::support::{run_python, stored_notes, Deployment, Recipe};
use gonk_tools_tests::clients::report;
use serde_json::Value;

const CREATES: usize = 6;

#[test]
fn a_python_client_goes_round_robin_over_three_replicas_and_nothing_is_lost() {
    let deployment = Deployment::start(Recipe {
        serve: vec!["--allow-writes".into()],
        ..Recipe::default()
    });
    let tag = format!("deploy{}", std::process::id());
    let count = CREATES.to_string();
    let report = report(&run_python(
        "python_deploy.py",
        &[&deployment.url, &tag, &count],
    ));
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");

    // Every answer names its replica; each request went to the next one.
    let exchanges = report["exchanges"].as_array().expect("exchanges");
    let replicas: Vec<&str> = exchanges
        .iter()
        .map(|e| {
            assert_eq!(e["status"], 200, "{e}");
            e["replica"]
                .as_str()
                .unwrap_or_else(|| panic!("no replica: {e}"))
        })
        .collect();
    assert!(replicas.len() > CREATES + 2, "{replicas:?}");
    let names: BTreeSet<&str> = replicas.iter().copied().collect();
    assert_eq!(names, BTreeSet::from(["r1", "r2", "r3"]), "{replicas:?}");
    for (i, pair) in replicas.windows(2).enumerate() {
        assert_ne!(
            pair[0],
            pair[1],
            "requests {i} and {} on one replica: {replicas:?}",
            i + 1
        );
    }
    for (i, window) in replicas.windows(4).enumerate() {
        assert_eq!(window[0], window[3], "no round robin at {i}: {replicas:?}");
    }

    // What the client was told it created.
    let created: Vec<(String, i64)> = report["created"]
        .as_array()
        .expect("creates")
        .iter()
        .map(|c| {
            assert_eq!(c["isError"], false, "{c}");
            let note = &c["structuredContent"];
            (
                note["title"].as_str().expect("a title").to_owned(),
                note["id"].as_i64().expect("an id"),
            )
        })
        .collect();
    assert_eq!(created.len(), CREATES);

    // Search (on one replica) finds the notes the others created.
    let hits = report["search"]["structuredContent"]["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", report["search"]));
    assert_eq!(hits.len(), CREATES, "{}", report["search"]);

    // Exactly once: in the export through the balancer, and in the store
    // read directly.
    let export = &report["export"]["structuredContent"];
    let exported: Vec<Value> =
        serde_json::from_str(export["document"].as_str().expect("a JSON document")).expect("JSON");
    let stored = stored_notes(&deployment.db);
    for notes in [&exported, &stored] {
        assert_eq!(notes.len(), CREATES, "{notes:?}");
        for (title, id) in &created {
            let found: Vec<&Value> = notes.iter().filter(|n| n["title"] == *title).collect();
            assert_eq!(found.len(), 1, "{title:?} is there {} times", found.len());
            assert_eq!(found[0]["id"], *id, "{title:?}");
        }
    }
}
