//! Reads criterion's estimates back after a run, so a bench can print its
//! results as ratios to a baseline measured in the same run.

use std::path::PathBuf;

use criterion::Criterion;

/// Runs the bench's criterion groups and prints criterion's summary;
/// `true` when they were measured (not `--list` or `--test`), i.e. when
/// their estimates can be read back with [`mean_ns`].
pub fn run(benches: fn()) -> bool {
    // GONK_BENCH_OTEL=1: the same run with the OTLP pipeline installed
    // (every span sampled and batched for export; `docs/benchmarks.md`).
    #[cfg(feature = "otel")]
    if std::env::var_os("GONK_BENCH_OTEL").is_some() {
        let pipeline =
            gonk_tools::telemetry::otel::install("gonk-bench").expect("the OTLP pipeline");
        // Kept for the whole run; the process exits without flushing.
        std::mem::forget(pipeline);
        eprintln!("bench: OpenTelemetry pipeline installed");
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    !std::env::args().any(|a| a == "--list" || a == "--test")
}

/// Where criterion writes: `$CRITERION_HOME`, `$CARGO_TARGET_DIR/criterion`,
/// or the workspace's `target/criterion`.
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/criterion")
}

/// The mean of benchmark `group/id` in nanoseconds, once it has run.
pub fn mean_ns(group: &str, id: &str) -> Option<f64> {
    let path = criterion_home()
        .join(group)
        .join(id)
        .join("new/estimates.json");
    let estimates: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["mean"]["point_estimate"].as_f64()
}
