//! `dispatch_detached_with_wait`: every rule of the combinator, with call
//! counts of the dispatcher and the inline runner.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gonk_tools::jobs::{
    default_message, dispatch_detached_with_wait, DetachedWithWait, InlineRun, JobHandle, WaitFlags,
};
use gonk_tools::prelude::*;
use serde_json::Value;

#[derive(Default)]
struct Counts {
    dispatched: AtomicUsize,
    inline: AtomicUsize,
}

impl Counts {
    fn get(&self) -> (usize, usize) {
        (
            self.dispatched.load(Ordering::SeqCst),
            self.inline.load(Ordering::SeqCst),
        )
    }
}

fn flags(wait: Option<bool>, sync: Option<bool>) -> WaitFlags {
    WaitFlags { wait, sync }
}

/// A call with a dispatcher returning `job-1` and an inline runner
/// returning `{"answer": 42}`, both counted.
fn wired(counts: &Arc<Counts>, flags: WaitFlags) -> DetachedWithWait<'static, Value> {
    let (a, b) = (Arc::clone(counts), Arc::clone(counts));
    DetachedWithWait::new(flags, "subagent", move || async move {
        b.inline.fetch_add(1, Ordering::SeqCst);
        Ok(json!({ "answer": 42 }))
    })
    .dispatcher(move || async move {
        a.dispatched.fetch_add(1, Ordering::SeqCst);
        Ok(JobHandle::new("job-1"))
    })
}

#[tokio::test]
async fn default_dispatches_once_and_never_runs_inline() {
    let counts = Arc::new(Counts::default());
    let output = dispatch_detached_with_wait(wired(&counts, WaitFlags::default()))
        .await
        .unwrap();
    assert_eq!(counts.get(), (1, 0));
    // Says what to do next; no promise of a follow-up no surface makes.
    let message = "subagent started as background job job-1; call jobs.result with this jobId for its outcome (waitMs waits for it to finish) or jobs.status for its progress.";
    assert_eq!(default_message("subagent", "job-1"), message);
    assert_eq!(
        output.data,
        json!({ "jobId": "job-1", "kind": "subagent", "message": message })
    );
    assert_eq!(output.display, Some(ToolDisplay::Text(message.into())));
}

#[tokio::test]
async fn explicit_false_flags_still_detach() {
    let counts = Arc::new(Counts::default());
    dispatch_detached_with_wait(wired(&counts, flags(Some(false), Some(false))))
        .await
        .unwrap();
    assert_eq!(counts.get(), (1, 0));
}

#[tokio::test]
async fn wait_or_sync_runs_inline_once_and_never_dispatches() {
    for flags in [
        flags(Some(true), None),
        flags(None, Some(true)),
        flags(Some(false), Some(true)),
    ] {
        let counts = Arc::new(Counts::default());
        let output = dispatch_detached_with_wait(wired(&counts, flags))
            .await
            .unwrap();
        assert_eq!(counts.get(), (0, 1), "{flags:?}");
        // Exactly what the (default) inline renderer made: no fallback flag.
        assert_eq!(output.data, json!({ "answer": 42 }), "{flags:?}");
    }
}

#[tokio::test]
async fn wait_uses_the_inline_renderer_and_tells_it_no_fallback() {
    let counts = Arc::new(Counts::default());
    let seen = Arc::new(std::sync::Mutex::new(None));
    let record = Arc::clone(&seen);
    let call = wired(&counts, flags(Some(true), None)).render_inline(move |value, run| {
        *record.lock().unwrap() = Some(run);
        ToolOutput::new(json!({ "rendered": value }))
    });
    let output = dispatch_detached_with_wait(call).await.unwrap();
    assert_eq!(output.data, json!({ "rendered": { "answer": 42 } }));
    assert_eq!(
        *seen.lock().unwrap(),
        Some(InlineRun {
            ran_sync_fallback: false
        })
    );
}

#[tokio::test]
async fn no_dispatcher_runs_inline_as_a_flagged_fallback() {
    let inline = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&inline);
    let seen = Arc::new(std::sync::Mutex::new(None));
    let record = Arc::clone(&seen);
    let call = DetachedWithWait::new(WaitFlags::default(), "render", move || async move {
        count.fetch_add(1, Ordering::SeqCst);
        Ok(json!({ "answer": 42 }))
    });
    let output = dispatch_detached_with_wait(call).await.unwrap();
    assert_eq!(inline.load(Ordering::SeqCst), 1);
    assert_eq!(
        output.data,
        json!({ "answer": 42, "ranSyncFallback": true })
    );

    // A custom inline renderer is told, and owns the shape.
    let call = DetachedWithWait::new(WaitFlags::default(), "render", || async { Ok(7) })
        .render_inline(move |value, run| {
            *record.lock().unwrap() = Some(run);
            ToolOutput::new(json!({ "value": value }))
        });
    let output = dispatch_detached_with_wait(call).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        Some(InlineRun {
            ran_sync_fallback: true
        })
    );
    assert_eq!(output.data, json!({ "value": 7 }));
}

#[tokio::test]
async fn a_custom_async_renderer_owns_the_async_shape() {
    let counts = Arc::new(Counts::default());
    let call = wired(&counts, WaitFlags::default())
        .render_async(|handle| ToolOutput::new(json!({ "id": handle.job_id, "workItem": 9 })));
    let output = dispatch_detached_with_wait(call).await.unwrap();
    assert_eq!(output.data, json!({ "id": "job-1", "workItem": 9 }));
    assert_eq!(output.display, None);
    assert_eq!(counts.get(), (1, 0));
}

#[tokio::test]
async fn a_failing_dispatcher_propagates_without_inline_fallback() {
    let inline = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&inline);
    let call = DetachedWithWait::new(WaitFlags::default(), "render", move || async move {
        count.fetch_add(1, Ordering::SeqCst);
        Ok(1)
    })
    .dispatcher(|| async {
        Err(ToolError::new(
            ErrorCode::custom("QUEUE_DOWN"),
            "the job queue is unreachable",
        ))
    });
    let error = dispatch_detached_with_wait(call).await.unwrap_err();
    assert_eq!(error.code.as_str(), "QUEUE_DOWN");
    assert_eq!(error.message, "the job queue is unreachable");
    assert_eq!(inline.load(Ordering::SeqCst), 0);
}

#[test]
fn wait_flags_are_taken_out_of_the_input() {
    let mut input = json!({ "target": "docs", "wait": true, "sync": false });
    let flags = WaitFlags::take(&mut input);
    assert!(flags.waits());
    assert_eq!(input, json!({ "target": "docs" }));
    // Not a boolean: left for schema validation to report.
    let mut input = json!({ "wait": "yes" });
    assert!(!WaitFlags::take(&mut input).waits());
    assert_eq!(input, json!({ "wait": "yes" }));
}
