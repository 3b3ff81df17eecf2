//! Detached tools as MCP tasks, driven by an independent client: raw
//! JSON-RPC over stdio from Python (no SDK), against the real `notes mcp`.

use gonk_tools_tests::clients::report;
use gonk_tools_tests::mcp_clients::run_python;
use gonk_tools_tests::workspace::bin;
use serde_json::Value;

#[test]
fn a_detached_call_is_a_task_polled_to_its_result_and_cancellable() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().to_string_lossy().into_owned();
    let db = dir.path().join("notes.db").to_string_lossy().into_owned();
    let notes = bin("notes");
    let notes = notes.to_string_lossy();
    let output = run_python("python_tasks.py", &[&work, &notes, "--db", &db, "mcp"]);
    let r = report(&output);

    // The extension is advertised.
    assert!(
        r["initialize"]["result"]["capabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some(),
        "{}",
        r["initialize"]
    );

    // tools/call of a detached tool answers with a task at once.
    let created = &r["created"]["result"];
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working");
    let id = created["taskId"].as_str().unwrap();
    assert!(id.starts_with("job-"), "{id}");

    // Polling saw it working with progress in the status message, then completed.
    let polled = r["polled"].as_array().unwrap();
    assert!(
        polled.iter().any(|a| a["result"]["status"] == "working"
            && a["result"]["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("exported 200/450"))),
        "progress reached the task status: {polled:?}"
    );
    let done = &r["done"]["result"];
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["count"], 450);
    assert_ne!(done["result"]["isError"], true);
    let file = std::fs::read_to_string(dir.path().join("all.md")).unwrap();
    assert_eq!(file.matches("\n---\n").count(), 449);

    // Cancelled while running: the handler stopped (the file stays partial).
    assert!(r["cancel"].get("error").is_none(), "{}", r["cancel"]);
    assert_eq!(
        r["cancelled"]["result"]["status"], "cancelled",
        "{}",
        r["cancelled"]
    );
    let slow = std::fs::read_to_string(dir.path().join("slow.md")).unwrap_or_default();
    assert!(
        slow.matches("# Note").count() < 450,
        "the export did not run on"
    );

    // wait: true answers inline with the tool's result.
    let waited = &r["waited"]["result"];
    assert!(
        waited.get("resultType").is_none_or(|t| t == "complete"),
        "{waited}"
    );
    assert_eq!(waited["structuredContent"]["count"], 450, "{waited}");

    // A tool error is a completed task carrying an isError result.
    let again = &r["again_done"]["result"];
    assert_eq!(again["status"], "completed", "{again}");
    assert_eq!(again["result"]["isError"], true);
    let text = again["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("the file exists"), "{text}");

    // Input the advertised schema refuses never becomes a task.
    let invalid = &r["invalid"]["result"];
    assert_eq!(invalid["isError"], true, "{invalid}");
    assert!(invalid.get("taskId").is_none());

    // An unknown task is an error; so is anyone's task without the extension.
    assert!(
        r["unknown_task"].get("error").is_some(),
        "{}",
        r["unknown_task"]
    );
    assert_eq!(r["plain"]["result"]["structuredContent"]["id"], 1);

    // Without the extension: the job handle is the result.
    let handle = &r["no_tasks_created"]["result"];
    assert!(
        handle.get("resultType").is_none_or(|t| t == "complete"),
        "{handle}"
    );
    let job: &Value = &handle["structuredContent"]["jobId"];
    assert!(job.as_str().unwrap().starts_with("job-"), "{handle}");
    assert!(
        r["no_tasks_get"].get("error").is_some(),
        "{}",
        r["no_tasks_get"]
    );
}
