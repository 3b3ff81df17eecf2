//! A detached job's span: its own trace root (the job outlives the request
//! that launched it), linked to the span of the call that launched it, and
//! the parent of the job's own dispatch span.

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::jobs::{self, EmbeddedRunner};
use gonk_tools::prelude::*;
use gonk_tools_tests::span_capture::SpanCapture;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Empty {}

#[tokio::test]
async fn a_job_span_links_to_the_call_that_launched_it() {
    let capture = SpanCapture::default();
    let _guard = capture.install();
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("work")
                .description("Works in the background.")
                .detached()
                .handler(|_: Empty, _| async { Ok::<_, ToolError>(1) })
                .build(),
        )
        .unwrap();
    jobs::install(&registry, Arc::new(EmbeddedRunner::new())).unwrap();

    let handle = collect_tool_outcome(
        registry.invoke("work", json!({}), ToolContext::new()),
        |_| {},
    )
    .await
    .unwrap();
    assert!(handle.data["jobId"].is_string(), "{:?}", handle.data);

    // The job runs on the runtime: wait for its dispatch to end.
    let calls = || {
        capture
            .find("gen_ai.tool.name", "work")
            .into_iter()
            .filter(|s| s.name == "execute_tool")
            .collect::<Vec<_>>()
    };
    for _ in 0..500 {
        if calls().len() == 2 && calls()[1].fields.contains_key("gonk.outcome") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let calls = calls();
    assert_eq!(
        calls.len(),
        2,
        "the launching call and the job's: {calls:?}"
    );
    let (launching, run) = (&calls[0], &calls[1]);
    let job = capture
        .spans()
        .into_iter()
        .find(|s| s.name == "job")
        .expect("a job span");
    assert_eq!(job.parent, None, "a job is a trace root of its own");
    assert_eq!(job.follows, [launching.id], "linked to the launching call");
    assert_eq!(
        job.fields["gonk.job.id"],
        handle.data["jobId"].as_str().unwrap()
    );
    assert_eq!(
        run.parent,
        Some(job.id),
        "the job's dispatch runs in the job span"
    );
    assert_eq!(run.fields["gonk.outcome"], "ok");
}
