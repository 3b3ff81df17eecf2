//! `notes.reindex`: the search index rebuilt from the notes, batch by
//! batch with progress — detached by default, like `notes.export_file`.
//! Cancelling the call (or its job) stops the rebuild and keeps the old
//! index.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use gonk_tools::prelude::*;

use crate::store::Store;

/// Input of `notes.reindex`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Reindex {
    /// Pause after each batch of notes, in milliseconds (to watch the
    /// progress).
    #[serde(default)]
    #[schemars(range(max = 10000))]
    pub delay_ms: u64,
}

/// Output of `notes.reindex`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Reindexed {
    /// How many notes the new index holds.
    pub notes: u64,
}

/// Sets its flag when the call's stream is dropped (cancelled).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Rebuild the search index from every note, batch by batch, reporting progress; searches use the old index until it is done. Heavy: returns a background job id unless called with wait: true.
#[tool(
    name = "notes.reindex",
    category = "notes",
    scopes("notes:write"),
    approval = "write",
    detached,
    capabilities(writes_fs, long_running, idempotent),
    latency = "minutes",
    mcp(read_only = false, destructive = false, idempotent, open_world = false),
    cli(examples = ["notes notes.reindex", "notes notes.reindex --wait"])
)]
pub async fn notes_reindex(
    input: Reindex,
    store: State<Store>,
) -> impl Stream<Item = ToolEvent<Reindexed>> {
    gonk_tools::stream! {
        let (progress, mut reports) = tokio::sync::mpsc::unbounded_channel();
        let stop = Arc::new(AtomicBool::new(false));
        let _stop_on_drop = StopOnDrop(Arc::clone(&stop));
        let delay = Duration::from_millis(input.delay_ms);
        // SQLite blocks: the rebuild runs on a blocking thread and reports
        // each batch here; a dropped call stops it at the next batch.
        let worker = tokio::task::spawn_blocking(move || {
            store.reindex(|done, total| {
                let _ = progress.send((done, total));
                if !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                if stop.load(Ordering::SeqCst) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
        });
        while let Some((done, total)) = reports.recv().await {
            yield ToolEvent::progress(
                (done as f64 * 100.0 / total.max(1) as f64).min(100.0).round(),
                format!("indexed {done}/{total}"),
            );
        }
        match worker.await {
            Ok(Ok(notes)) => yield ToolEvent::Result {
                data: Reindexed { notes },
                display: Some(format!("Rebuilt the search index over {notes} notes").into()),
            },
            Ok(Err(error)) => yield ToolEvent::error(error),
            Err(error) => yield ToolEvent::error(ToolError::internal(format!("the rebuild failed: {error}"))),
        }
    }
}
