//! Detached dispatch under load: launch 10,000 short jobs through the
//! registry (the detached tool's call returns a handle; the runner runs
//! each job through `invoke`), wait until every job settled, and check
//! that every job reached a terminal state exactly once and none was lost.
//! Prints launches/s and completed jobs/s next to the same tool called
//! inline (`wait: true`), as a ratio.
//!
//! Two runners: the embedded one, and — with the `jobs-nats` feature —
//! `NatsJobRunner` on the NATS at `NATS_URL` (default
//! `nats://127.0.0.1:4222`), three runners in this process standing for
//! three replicas (each its own connection, registry and worker), the
//! launches spread over them, on a stream and bucket of the run's own,
//! deleted afterwards. Its figures are also given as a ratio to the
//! embedded runner's.
//!
//! `cargo bench -p gonk-tools --bench jobs` (`JOBS=N` for another count;
//! `--features jobs-nats` adds the NATS run).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::join_all;
use gonk_tools::jobs::{
    self, EmbeddedRunner, JobRecord, JobRunner, JobStatus, JobStore, Retention,
};
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct SquareInput {
    n: u64,
}

/// Handler runs of `square`, across runners: each job's exactly once.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Square a number (detached, to measure the job path).
#[tool(detached)]
async fn square(input: SquareInput) -> u64 {
    RUNS.fetch_add(1, Ordering::Relaxed);
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

/// Launches `count` jobs, call `n` on `registries[n % len]`.
async fn launch_all(registries: &[ToolRegistry], count: u64) -> Vec<String> {
    let calls = (0..count).map(|n| {
        let registry = &registries[(n as usize) % registries.len()];
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
        let ids = launch_all(std::slice::from_ref(&registry), count).await;
        let launched = started.elapsed();
        runner.idle().await;
        let settled = started.elapsed();

        let listed = runner.list(None).await.len();
        {
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
                let (writes, status, _) =
                    terminal.get(id).unwrap_or_else(|| panic!("job {id} lost"));
                assert_eq!(*writes, 1, "job {id} ended {writes} times");
                assert_eq!(*status, JobStatus::Succeeded, "job {id}");
            }
            let mut results: Vec<u64> =
                terminal.values().filter_map(|(_, _, data)| *data).collect();
            results.sort_unstable();
            let expected: Vec<u64> = (0..count).map(|n| n * n).collect();
            assert_eq!(results, expected, "each job ran its own input once");
        }
        assert_eq!(listed, ids.len());
        // The inline calls and the jobs: one handler run each.
        assert_eq!(RUNS.load(Ordering::SeqCst), 2 * count as usize);

        let embedded = Figures {
            count,
            inline,
            launched,
            settled,
        };
        println!("jobs: {count} detached calls, every job terminal exactly once, none lost");
        embedded.print("embedded", None);
        #[cfg(feature = "jobs-nats")]
        nats::run(count, &embedded).await;
    });
}

/// One runner's timings.
struct Figures {
    count: u64,
    inline: Duration,
    launched: Duration,
    settled: Duration,
}

impl Figures {
    fn per_s(&self, d: Duration) -> f64 {
        self.count as f64 / d.as_secs_f64()
    }

    /// Prints the figures; with `base`, each as a ratio to its time.
    fn print(&self, runner: &str, base: Option<&Figures>) {
        let ratio = |mine: Duration, theirs: fn(&Figures) -> Duration| match base {
            Some(base) => format!(
                "  {:.1}× the embedded time",
                mine.as_secs_f64() / theirs(base).as_secs_f64()
            ),
            None => String::new(),
        };
        println!("  {runner}:");
        println!(
            "    inline (wait: true)     {:>9.0} calls/s  ({:.1} ms)",
            self.per_s(self.inline),
            self.inline.as_secs_f64() * 1e3
        );
        println!(
            "    launch (handle back)    {:>9.0} calls/s  ({:.1} ms){}",
            self.per_s(self.launched),
            self.launched.as_secs_f64() * 1e3,
            ratio(self.launched, |f| f.launched)
        );
        println!(
            "    launch → all settled    {:>9.0} jobs/s   ({:.1} ms)  {:.2}× the inline time{}",
            self.per_s(self.settled),
            self.settled.as_secs_f64() * 1e3,
            self.settled.as_secs_f64() / self.inline.as_secs_f64(),
            ratio(self.settled, |f| f.settled)
        );
    }
}

/// The same run on `NatsJobRunner`: three runners for three replicas.
#[cfg(feature = "jobs-nats")]
mod nats {
    use super::*;
    use gonk_tools::jobs::{NatsJobConfig, NatsJobRunner};

    pub(super) async fn run(count: u64, embedded: &Figures) {
        let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into());
        let config = NatsJobConfig {
            prefix: format!("bench_jobs_{}", std::process::id()),
            ..NatsJobConfig::default()
        };
        let mut runners = Vec::new();
        let mut registries = Vec::new();
        for _ in 0..3 {
            let runner = NatsJobRunner::connect(&url, config.clone())
                .await
                .unwrap_or_else(|e| panic!("the NATS run needs JetStream at {url}: {e}"));
            let registry = ToolRegistry::new();
            registry.register(Square::definition()).unwrap();
            jobs::install(&registry, Arc::new(runner.clone())).unwrap();
            runner.start_worker(registry.clone()).await.unwrap();
            runners.push(runner);
            registries.push(registry);
        }
        let figures = measure(count, embedded.inline, &runners, &registries).await;
        // The run's stream and bucket go, whatever the check found.
        let checked = match figures {
            Ok(figures) => figures,
            Err(error) => {
                runners[0].destroy().await.ok();
                panic!("{error}");
            }
        };
        runners[0].destroy().await.unwrap();
        checked.print("NATS JetStream, 3 runners", Some(embedded));
    }

    /// `inline` is the embedded run's: a waited call runs in its caller's
    /// process whichever runner is installed.
    async fn measure(
        count: u64,
        inline: Duration,
        runners: &[NatsJobRunner],
        registries: &[ToolRegistry],
    ) -> Result<Figures, String> {
        RUNS.store(0, Ordering::SeqCst);
        let started = Instant::now();
        let ids = launch_all(registries, count).await;
        let launched = started.elapsed();
        // Settled: every message acknowledged, which a worker does only
        // once the job's end is written.
        let deadline = Instant::now() + Duration::from_secs(600);
        while runners[0].unfinished().await.map_err(|e| e.to_string())? > 0 {
            if Instant::now() > deadline {
                return Err("the NATS jobs did not settle within 10 minutes".into());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let settled = started.elapsed();

        let records = runners[0].all_records().await.map_err(|e| e.message)?;
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        let recorded: std::collections::HashSet<&String> = records.iter().map(|r| &r.id).collect();
        if unique.len() != ids.len() || recorded != unique {
            return Err("the records are not the launched jobs, one each".into());
        }
        if let Some(record) = records.iter().find(|r| r.status != JobStatus::Succeeded) {
            return Err(format!("job {} ended {:?}", record.id, record.status));
        }
        let mut results: Vec<u64> = records
            .iter()
            .filter_map(|r| r.output.as_ref()?.data.as_u64())
            .collect();
        results.sort_unstable();
        if results != (0..count).map(|n| n * n).collect::<Vec<_>>() {
            return Err("a job's result is missing or not its own".into());
        }
        let runs = RUNS.load(Ordering::SeqCst);
        if runs != count as usize {
            return Err(format!("{runs} handler runs for {count} jobs"));
        }
        Ok(Figures {
            count,
            inline,
            launched,
            settled,
        })
    }
}
