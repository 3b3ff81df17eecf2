//! Detached dispatch under load: launch 10,000 short jobs through the
//! registry (the detached tool's call returns a handle; the embedded
//! runner runs each job through `invoke`), wait until the runner is idle,
//! and check that every job reached a terminal state exactly once and none
//! was lost. Prints launches/s and completed jobs/s next to the same tool
//! called inline (`wait: true`), as a ratio.
//!
//! `cargo bench -p gonk-tools --bench jobs` (`JOBS=N` for another count).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::future::join_all;
use gonk_tools::jobs::{
    self, EmbeddedRunner, JobRecord, JobRunner, JobStatus, JobStore, Retention,
};
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct SquareInput {
    n: u64,
}

/// Square a number (detached, to measure the job path).
#[tool(detached)]
async fn square(input: SquareInput) -> u64 {
    tokio::task::yield_now().await;
    input.n * input.n
}

/// A job's terminal writes: how many, the status, the result.
type Ended = (usize, JobStatus, Option<u64>);

/// Counts every terminal write per job: exactly one each, or the run fails.
#[derive(Default)]
struct CountingStore {
    terminal: Mutex<HashMap<String, Ended>>,
}

impl JobStore for CountingStore {
    fn load(&self) -> Result<Vec<JobRecord>, String> {
        Ok(Vec::new())
    }
    fn save(&self, record: &JobRecord) -> Result<(), String> {
        if record.status.is_terminal() {
            let data = record.output.as_ref().and_then(|o| o.data.as_u64());
            let mut terminal = self.terminal.lock().unwrap();
            let entry = terminal
                .entry(record.id.clone())
                .or_insert((0, record.status, data));
            entry.0 += 1;
        }
        Ok(())
    }
    fn remove(&self, _id: &str) -> Result<(), String> {
        Ok(())
    }
}

async fn launch_all(registry: &ToolRegistry, count: u64) -> Vec<String> {
    let calls = (0..count).map(|n| {
        let events = registry.invoke("square", json!({ "n": n }), ToolContext::new());
        async move {
            let handle = collect_tool_outcome(events, |_| {})
                .await
                .expect("launched");
            handle.data["jobId"].as_str().expect("a job id").to_owned()
        }
    });
    join_all(calls).await
}

async fn inline_all(registry: &ToolRegistry, count: u64) {
    let calls = (0..count).map(|n| {
        let events = registry.invoke(
            "square",
            json!({ "n": n, "wait": true }),
            ToolContext::new(),
        );
        async move { collect_tool_outcome(events, |_| {}).await.expect("ran") }
    });
    join_all(calls).await;
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("jobs: bench");
        return;
    }
    let count: u64 = std::env::var("JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = Arc::new(CountingStore::default());
        let runner = Arc::new(EmbeddedRunner::with_store(
            Retention {
                max_finished: count as usize,
                ..Retention::default()
            },
            store.clone(),
        ));
        let registry = ToolRegistry::new();
        registry.register(Square::definition()).unwrap();
        jobs::install(&registry, runner.clone()).unwrap();

        // Baseline: the same calls inline.
        let started = Instant::now();
        inline_all(&registry, count).await;
        let inline = started.elapsed();

        let started = Instant::now();
        let ids = launch_all(&registry, count).await;
        let launched = started.elapsed();
        runner.idle().await;
        let settled = started.elapsed();

        let listed = runner.list(None).await.len();
        // Every job: terminal exactly once, succeeded, with its own result.
        let terminal = store.terminal.lock().unwrap();
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "job ids are unique");
        assert_eq!(
            terminal.len(),
            ids.len(),
            "every job reached a terminal state"
        );
        for id in &ids {
            let (writes, status, _) = terminal.get(id).unwrap_or_else(|| panic!("job {id} lost"));
            assert_eq!(*writes, 1, "job {id} ended {writes} times");
            assert_eq!(*status, JobStatus::Succeeded, "job {id}");
        }
        let mut results: Vec<u64> = terminal.values().filter_map(|(_, _, data)| *data).collect();
        results.sort_unstable();
        let expected: Vec<u64> = (0..count).map(|n| n * n).collect();
        assert_eq!(results, expected, "each job ran its own input once");
        drop(terminal);
        assert_eq!(listed, ids.len());

        let per_s = |d: std::time::Duration| count as f64 / d.as_secs_f64();
        println!("jobs: {count} detached calls, every job terminal exactly once, none lost");
        println!(
            "  inline (wait: true)     {:>9.0} calls/s  ({:.1} ms)",
            per_s(inline),
            inline.as_secs_f64() * 1e3
        );
        println!(
            "  launch (handle back)    {:>9.0} calls/s  ({:.1} ms)",
            per_s(launched),
            launched.as_secs_f64() * 1e3
        );
        println!(
            "  launch → all settled    {:>9.0} jobs/s   ({:.1} ms)  {:.2}× the inline time",
            per_s(settled),
            settled.as_secs_f64() * 1e3,
            settled.as_secs_f64() / inline.as_secs_f64()
        );
    });
}
