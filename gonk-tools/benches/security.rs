//! Authenticated vs unauthenticated dispatch, side by side in one run.
//!
//! The authenticated call goes through every gate: principal capture
//! (validation, security context key, request id), `tool.discover`, input
//! validation, approval resolution, `tool.invoke`, the approval gate (an
//! approving provider), and three receipts into an in-memory audit sink.
//! The unauthenticated call is the same tool on the same registry without
//! an auth context.
//!
//! Besides criterion's report, the run prints (and writes to
//! `target/criterion/security-ratio.json`) the authenticated /
//! unauthenticated time ratio from an interleaved measurement.
//!
//! `cargo bench -p gonk-tools --bench security -- --warm-up-time 1 --measurement-time 3`

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use gonk_tools::prelude::*;
use gonk_tools::security::*;

#[derive(Deserialize, JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

struct Bench {
    /// Authenticated calls since the sink was last drained.
    since_drain: std::cell::Cell<u32>,
    registry: ToolRegistry,
    audit: Arc<InMemoryAuditSink>,
    auth: AuthContext,
    input: serde_json::Value,
}

fn setup() -> Bench {
    let audit = Arc::new(InMemoryAuditSink::new());
    let registry = ToolRegistry::builder()
        .security(
            SecurityOptions::new()
                .approval_provider(ApproveAll)
                .audit_sink(audit.clone())
                .mandatory_audit(true),
        )
        .build();
    registry
        .register(
            ToolDefinition::builder("math.add")
                .description("Add two integers.")
                .approval(ApprovalTier::Write)
                .handler(|i: Add, _ctx| async move { Ok::<_, ToolError>(i.a + i.b) })
                .build(),
        )
        .expect("register");
    let principal = AuthenticatedPrincipal::new(
        "user-1",
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", "alice", AuthMethod::Oauth),
    )
    .with_tenant("acme")
    .with_workspace("ws-1");
    Bench {
        since_drain: std::cell::Cell::new(0),
        registry,
        audit,
        auth: AuthContext::new(principal, AllowAll),
        input: json!({"a": 2, "b": 3}),
    }
}

async fn call(bench: &Bench, authenticated: bool) {
    let ctx = if authenticated {
        ToolContext::new().with_auth(bench.auth.clone())
    } else {
        ToolContext::new()
    };
    let events = bench.registry.invoke("math.add", bench.input.clone(), ctx);
    let outcome = collect_tool_outcome(events, |_| {}).await;
    assert_eq!(outcome.map(|o| o.data), Ok(json!(5)));
    // Keep the in-memory sink small, as a real sink would drain it.
    if authenticated {
        let n = bench.since_drain.get() + 1;
        if n == 1_000 {
            bench.audit.clear();
            bench.since_drain.set(0);
        } else {
            bench.since_drain.set(n);
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

fn authenticated(c: &mut Criterion) {
    let rt = runtime();
    let bench = setup();
    // Sanity: the authenticated call really writes its three receipts.
    rt.block_on(call(&bench, true));
    assert_eq!(bench.audit.take().len(), 3);

    let mut group = c.benchmark_group("authenticated");
    group.bench_function("unauthenticated", |b| {
        b.to_async(&rt).iter(|| call(&bench, false));
    });
    group.bench_function("authenticated", |b| {
        b.to_async(&rt).iter(|| call(&bench, true));
    });
    group.finish();

    ratio(&rt, &bench);
}

/// Interleaved rounds of both paths (so load from other processes hits
/// both alike); the median and the best per-call time of each, and their
/// ratios.
fn ratio(rt: &tokio::runtime::Runtime, bench: &Bench) {
    const CALLS: u32 = 2_000;
    const ROUNDS: usize = 31;
    let mut unauth = Vec::with_capacity(ROUNDS);
    let mut auth = Vec::with_capacity(ROUNDS);
    let time = |authenticated: bool| -> Duration {
        let start = Instant::now();
        rt.block_on(async {
            for _ in 0..CALLS {
                call(bench, authenticated).await;
            }
        });
        start.elapsed() / CALLS
    };
    for _ in 0..ROUNDS {
        unauth.push(time(false));
        auth.push(time(true));
    }
    unauth.sort();
    auth.sort();
    let (u, a) = (unauth[ROUNDS / 2], auth[ROUNDS / 2]);
    let (u_best, a_best) = (unauth[0], auth[0]);
    let ratio = a.as_secs_f64() / u.as_secs_f64();
    let best_ratio = a_best.as_secs_f64() / u_best.as_secs_f64();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "security ratio (median of {ROUNDS} interleaved rounds): unauthenticated {:.2} µs/call, \
         authenticated {:.2} µs/call, ratio {ratio:.2}x; best rounds {:.2} / {:.2} µs, ratio \
         {best_ratio:.2}x (goal <= 2x)",
        us(u),
        us(a),
        us(u_best),
        us(a_best),
    );
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    if dir.is_dir() {
        let record = json!({
            "unauthenticatedNs": u.as_nanos() as u64,
            "authenticatedNs": a.as_nanos() as u64,
            "ratio": ratio,
            "bestUnauthenticatedNs": u_best.as_nanos() as u64,
            "bestAuthenticatedNs": a_best.as_nanos() as u64,
            "bestRatio": best_ratio,
        });
        let _ = std::fs::write(dir.join("security-ratio.json"), record.to_string());
    }
}

criterion_group!(benches, authenticated);

fn main() {
    // `GONK_SECURITY_BENCH_ONLY=auth|unauth` runs 100 000 calls of one path
    // and exits: for counting instructions with `perf stat`, which load
    // from other processes does not disturb.
    if let Ok(path) = std::env::var("GONK_SECURITY_BENCH_ONLY") {
        let rt = runtime();
        let bench = setup();
        let authenticated = path == "auth";
        rt.block_on(async {
            let calls: u32 = std::env::var("GONK_SECURITY_BENCH_CALLS")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(100_000);
            for _ in 0..calls {
                call(&bench, authenticated).await;
            }
        });
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
