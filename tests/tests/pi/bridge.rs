//! The Pi adapter against the real Pi CLI (`@mariozechner/pi-coding-agent`,
//! installed by `.ci/install-pi`): a scripted model in a real Pi session
//! calls the tools of `tests/fixtures/pi_fixture.rs` through the extension
//! that binary writes and the bridge it serves, and the tests read what Pi
//! handed back to the model.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use gonk_tools_tests::golden;
use gonk_tools_tests::pi::{pi_dir, pi_script, run_pi, turn, PiRun};
use gonk_tools_tests::workspace::bin;

/// Writes the fixture's Pi extension (`pi-fixture pi-extension`) into `dir`.
fn extension(dir: &std::path::Path) -> PathBuf {
    let output = Command::new(bin("pi-fixture"))
        .arg("pi-extension")
        .output()
        .expect("pi-fixture runs");
    assert!(output.status.success(), "{output:?}");
    let path = dir.join("fixture-tools.ts");
    std::fs::write(&path, &output.stdout).unwrap();
    path
}

fn session(turns: &[Value], abort_on: Option<&str>) -> PiRun {
    session_with(turns, abort_on, &[])
}

fn session_with(turns: &[Value], abort_on: Option<&str>, envs: &[(&str, &str)]) -> PiRun {
    let dir = tempfile::tempdir().unwrap();
    let run = run_pi(&extension(dir.path()), turns, abort_on, envs);
    assert_eq!(run.code, Some(0), "Pi failed:\n{}", run.stderr);
    run
}

#[test]
fn a_scripted_session_calls_the_bridged_tools_and_reads_their_results() {
    let run = session(
        &[
            turn(&[
                ("fixture_echo", json!({"text": "hello"})),
                ("fixture_steps", json!({"steps": 2})),
                ("renamed_tool", json!({})),
                ("fixture_image", json!({})),
            ]),
            turn(&[("fixture_fail", json!({})), ("fixture_talk", json!({}))]),
        ],
        None,
    );

    // A success: the display as content (markdown as text), the data as details.
    let echo = run.result_of("fixture_echo");
    assert!(!echo.is_error);
    assert_eq!(echo.content, [json!({"type": "text", "text": "**hello**"})]);
    assert_eq!(echo.details, json!({"echoed": "hello"}));

    // Progress and data chunks reach Pi's onUpdate; the log line does not
    // reach the result.
    assert_eq!(
        run.updates_of("fixture_steps"),
        [
            json!({"content": [{"type": "text", "text": "step 1/2"}], "details": {"progress": true, "message": "step 1/2", "percent": 50}}),
            json!({"content": [{"type": "text", "text": "chunk 1"}], "details": {"progress": true, "chunk": "chunk 1"}}),
            json!({"content": [{"type": "text", "text": "step 2/2"}], "details": {"progress": true, "message": "step 2/2", "percent": 100}}),
            json!({"content": [{"type": "text", "text": "chunk 2"}], "details": {"progress": true, "chunk": "chunk 2"}}),
        ]
    );
    let steps = run.result_of("fixture_steps");
    assert_eq!((steps.text().as_str(), &steps.details), ("2", &json!(2)));
    let log = run
        .logs
        .iter()
        .find(|l| l["tool"] == "fixture.steps")
        .expect("the log line reached Pi's event bus");
    assert_eq!(
        (&log["piName"], &log["level"], &log["message"]),
        (&json!("fixture_steps"), &json!("info"), &json!("stepping"))
    );
    let handed_back = serde_json::to_string(
        &run.tool_results()
            .iter()
            .map(|r| &r.content)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(
        !handed_back.contains("stepping"),
        "logs never reach the model: {handed_back}"
    );

    // The `pi(name = ..)` hint names the tool in Pi.
    assert_eq!(run.result_of("renamed_tool").text(), "renamed");
    assert_eq!(
        run.result_of("fixture_image").content,
        [json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})]
    );

    // A tool error is an error result with the code and the details.
    let fail = run.result_of("fixture_fail");
    assert!(fail.is_error);
    assert_eq!(
        fail.content,
        [
            json!({"type": "text", "text": "[FIXTURE_FAILED] failed as asked"}),
            json!({"type": "text", "text": "{\n  \"hint\": \"this is expected\"\n}"}),
        ]
    );

    // The duplex tool was never registered.
    let talk = run.result_of("fixture_talk");
    assert!(talk.is_error);
    assert_eq!(talk.text(), "Tool fixture_talk not found");
    assert_eq!(run.last_assistant()["content"][0]["text"], "done");
}

#[test]
fn the_advertised_schema_is_enforced_by_pi_and_again_by_the_registry() {
    let run = session(
        &[turn(&[
            // Refused by Pi's own validator against the advertised schema…
            ("fixture_echo", json!({"text": ""})),
            // …while 2^63 passes it (JavaScript rounds the i64 maximum up to
            // 2^63) and is refused by the registry: INVALID_INPUT.
            ("fixture_get", json!({"id": 9_223_372_036_854_775_808_u64})),
            ("fixture_get", json!({"id": 42})),
        ])],
        None,
    );
    let results = run.tool_results();
    let by_pi = results.iter().find(|r| r.tool == "fixture_echo").unwrap();
    assert!(by_pi.is_error);
    assert!(
        by_pi
            .text()
            .contains("must not have fewer than 1 characters"),
        "{}",
        by_pi.text()
    );
    let gets: Vec<_> = results.iter().filter(|r| r.tool == "fixture_get").collect();
    assert_eq!(gets.len(), 2);
    let invalid = gets.iter().find(|r| r.is_error).expect("an INVALID_INPUT");
    assert_eq!(
        invalid.content[0]["text"],
        "[INVALID_INPUT] Input validation failed"
    );
    let issues: Value = serde_json::from_str(invalid.content[1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(issues[0]["path"], "/id");
    assert!(issues[0]["message"]
        .as_str()
        .unwrap()
        .contains("greater than the maximum of 9223372036854775807"));
    let valid = gets.iter().find(|r| !r.is_error).unwrap();
    assert_eq!(valid.details, json!({"id": 42}));
}

#[test]
fn an_abort_from_pi_drops_the_rust_handler() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let run = session(
        &[turn(&[(
            "fixture_slow",
            json!({"marker": marker.to_str().unwrap()}),
        )])],
        // The scripted model's extension aborts the agent (Pi's Escape) on
        // the tool's first update, which says the handler is running.
        Some("fixture_slow"),
    );
    assert_eq!(
        run.updates_of("fixture_slow")[0]["details"]["message"],
        "started"
    );
    let slow = run.result_of("fixture_slow");
    assert!(slow.is_error);
    assert_eq!(slow.text(), "[ABORTED] Tool execution aborted");
    assert_eq!(run.last_assistant()["stopReason"], "aborted");
    assert_eq!(
        std::fs::read_to_string(&marker).expect("the drop guard wrote the marker"),
        "dropped",
        "the handler was dropped, not finished"
    );
}

#[test]
fn a_bridge_that_dies_is_a_tool_error_and_the_next_call_starts_a_new_one() {
    let run = session(
        &[
            turn(&[("fixture_crash", json!({}))]),
            turn(&[("fixture_echo", json!({"text": "again"}))]),
        ],
        None,
    );
    let crash = run.result_of("fixture_crash");
    assert!(crash.is_error);
    let text = crash.text();
    assert!(
        text.starts_with("[BRIDGE_EXITED] pi-fixture tool bridge exited with code 3"),
        "{text}"
    );
    assert!(
        text.contains("exiting on purpose"),
        "the bridge's stderr is quoted: {text}"
    );
    let echo = run.result_of("fixture_echo");
    assert!(!echo.is_error, "{echo:?}");
    assert_eq!(echo.details, json!({"echoed": "again"}));
}

#[test]
fn colliding_pi_names_are_refused_with_a_clear_error_and_pi_keeps_running() {
    let run = session_with(
        &[turn(&[("fixture_echo", json!({"text": "x"}))])],
        None,
        &[("PI_FIXTURE_COLLIDE", "1")],
    );
    assert!(
        run.stderr.contains(
            "tools `fixture.echo` and `fixture_echo` both map to the Pi name `fixture_echo`"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("pi(name ="),
        "the fix is named: {}",
        run.stderr
    );
    // Nothing was registered; Pi still ran the session.
    assert_eq!(
        run.result_of("fixture_echo").text(),
        "Tool fixture_echo not found"
    );
    assert_eq!(run.last_assistant()["content"][0]["text"], "done");
}

#[test]
fn a_bridge_that_cannot_start_costs_its_tools_not_pi() {
    use gonk_tools::adapters::pi::{pi_extension_source, PiLaunch};

    let dir = tempfile::tempdir().unwrap();
    let extension = dir.path().join("missing.ts");
    let launch = PiLaunch::new("/nonexistent/gonk-bridge").arg("pi");
    std::fs::write(&extension, pi_extension_source(&launch)).unwrap();
    let run = run_pi(
        &extension,
        &[turn(&[("fixture_echo", json!({"text": "x"}))])],
        None,
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("gonk-bridge: no tools registered")
            && run
                .stderr
                .contains("could not be started (/nonexistent/gonk-bridge)"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.result_of("fixture_echo").text(),
        "Tool fixture_echo not found"
    );
}

/// One advertised schema (a golden file of `macros/schemas.rs`), an argument
/// object that fits it and one that does not.
fn parameter_cases() -> Vec<(&'static str, Value, Value)> {
    vec![
        (
            "Nested",
            json!({"title": "t", "author": {"name": "a"}, "commenters": [{"name": "b", "email": "b@x"}]}),
            json!({"title": "t", "author": {}, "commenters": []}),
        ),
        (
            "UnitEnums",
            json!({"mode": "dry-run", "fallbacks": ["strict"]}),
            json!({"mode": "loose", "fallbacks": []}),
        ),
        (
            "DataEnums",
            json!({"action": {"resize": [2, 3]}, "shapes": [{"kind": "circle", "radius": 1.5}, {"kind": "rect", "width": 1, "height": 2}]}),
            json!({"action": {"explode": true}, "shapes": []}),
        ),
        (
            "Optionals",
            json!({"count": 3, "tags": ["x"], "author": {"name": "a"}}),
            json!({"count": 70000}),
        ),
        (
            "Collections",
            json!({"names": ["a"], "matrix": [[1, -2]], "scores": {"a": 3}, "authors_by_id": {"x": {"name": "n"}}}),
            json!({"names": ["a"], "matrix": [[1]], "scores": {"a": -3}, "authors_by_id": {}}),
        ),
        (
            "Constrained",
            json!({"slug": "my-slug", "ratio": 0.5, "level": 255, "items": ["a"], "limit": 20}),
            json!({"slug": "My Slug", "ratio": 0.5, "level": 255, "items": ["a"]}),
        ),
        (
            "Tree",
            json!({"value": 1, "children": [{"value": 2, "children": []}]}),
            json!({"value": 1, "children": [{"value": "two", "children": []}]}),
        ),
        (
            "Command",
            json!({"op": "set", "key": "k", "value": 5}),
            json!({"op": "delete", "key": "k"}),
        ),
    ]
}

#[test]
fn pis_validator_accepts_the_advertised_schemas_as_they_are() {
    use gonk_tools::adapters::pi::project_tool;
    use gonk_tools::prelude::*;
    use gonk_tools::schema::CompiledSchema;

    let golden = golden::path("schemas");
    let mut cases = Vec::new();
    let mut registry_says = Vec::new();
    for (name, valid, invalid) in parameter_cases() {
        let schema: Value = serde_json::from_str(
            &std::fs::read_to_string(golden.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        // What Pi is given for a tool with this input schema.
        let tool = ToolDefinition::builder(format!("schemas.{name}"))
            .description("Takes the schema's input.")
            .input_json_schema(schema.clone())
            .raw_handler(|v: Value, _| async move { Ok(ToolOutput::new(v)) })
            .build();
        let parameters = project_tool(&tool).parameters;
        assert_eq!(
            parameters, schema,
            "{name}: Pi gets the advertised schema unchanged"
        );
        let compiled = CompiledSchema::compile(&schema).unwrap();
        for (kind, args) in [("valid", valid), ("invalid", invalid)] {
            registry_says.push(compiled.validate(&args).is_ok());
            cases.push(
                json!({"name": format!("{name} {kind}"), "parameters": parameters, "args": args}),
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cases.json");
    std::fs::write(&input, Value::Array(cases).to_string()).unwrap();
    let script = pi_script("validate_parameters.mjs");
    let output = Command::new("node")
        .arg(&script)
        .arg(&input)
        .current_dir(pi_dir())
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(results.len(), registry_says.len());
    for (result, registry_ok) in results.iter().zip(registry_says) {
        let name = result["name"].as_str().unwrap();
        let pi_ok = result["ok"].as_bool().unwrap();
        assert_eq!(
            registry_ok,
            name.ends_with(" valid"),
            "the registry on {name}"
        );
        assert_eq!(
            pi_ok, registry_ok,
            "Pi and the registry disagree on {name}: {result}"
        );
    }
}
