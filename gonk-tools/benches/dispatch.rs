//! Dispatch cost, side by side with a baseline in the same run.
//!
//! * `baseline`: `serde_json::from_value` + a direct call + `to_value` for a
//!   trivial `add(a, b)`.
//! * `invoke`: `registry.invoke` + `collect_tool_outcome` for the same tool,
//!   schema validation on.
//! * `compose3`: a tool that calls a tool that calls `add` (3 dispatches).
//! * `invoke_rate_limited` (feature `rate-limit`): `invoke` on a registry
//!   whose calls are counted by a `LocalRateLimiter` (a per-principal
//!   budget too large to refuse): the gate's cost when it is on.
//!
//! After the run, the ratios to the baseline are printed.

mod ratio;

use criterion::{criterion_group, Criterion};
use gonk_tools::prelude::*;
use ratio::mean_ns;

#[derive(Serialize, Deserialize, JsonSchema)]
struct AddInput {
    a: i64,
    b: i64,
}

async fn add(input: AddInput) -> i64 {
    input.a + input.b
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("add")
                .description("Add two integers.")
                .handler(|input: AddInput, _| async move { Ok::<_, ToolError>(add(input).await) })
                .build(),
            ToolDefinition::builder("add.via1")
                .description("Calls add.")
                .handler(|input: AddInput, ctx: ToolContext| async move {
                    let out = collect_tool_outcome(
                        ctx.invoke("add", json!({"a": input.a, "b": input.b})),
                        |_| {},
                    )
                    .await?;
                    Ok::<_, ToolError>(out.data)
                })
                .build(),
            ToolDefinition::builder("add.via2")
                .description("Calls add.via1.")
                .handler(|input: AddInput, ctx: ToolContext| async move {
                    let out = collect_tool_outcome(
                        ctx.invoke("add.via1", json!({"a": input.a, "b": input.b})),
                        |_| {},
                    )
                    .await?;
                    Ok::<_, ToolError>(out.data)
                })
                .build(),
        ])
        .expect("bench tools register");
    registry
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let registry = registry();
    let input = json!({"a": 2, "b": 40});
    let mut group = c.benchmark_group("dispatch");

    group.bench_function("baseline", |b| {
        b.to_async(&rt).iter(|| async {
            let parsed: AddInput =
                serde_json::from_value(std::hint::black_box(input.clone())).unwrap();
            let out = add(parsed).await;
            std::hint::black_box(serde_json::to_value(out).unwrap())
        })
    });
    group.bench_function("invoke", |b| {
        b.to_async(&rt).iter(|| async {
            let events = registry.invoke(
                "add",
                std::hint::black_box(input.clone()),
                ToolContext::new(),
            );
            let out = collect_tool_outcome(events, |_| {}).await.unwrap();
            std::hint::black_box(out.data)
        })
    });
    group.bench_function("compose3", |b| {
        b.to_async(&rt).iter(|| async {
            let events = registry.invoke(
                "add.via2",
                std::hint::black_box(input.clone()),
                ToolContext::new(),
            );
            let out = collect_tool_outcome(events, |_| {}).await.unwrap();
            std::hint::black_box(out.data)
        })
    });
    #[cfg(feature = "rate-limit")]
    {
        use gonk_tools::rate_limit::{LocalRateLimiter, RateLimits};
        let limits = RateLimits::new(std::sync::Arc::new(LocalRateLimiter::new()))
            .per_principal(format!("{}/1ms", u32::MAX).parse().unwrap());
        let limited = ToolRegistry::builder().rate_limits(limits).build();
        limited.register_registry(&registry).unwrap();
        group.bench_function("invoke_rate_limited", |b| {
            b.to_async(&rt).iter(|| async {
                let events = limited.invoke(
                    "add",
                    std::hint::black_box(input.clone()),
                    ToolContext::new(),
                );
                let out = collect_tool_outcome(events, |_| {}).await.unwrap();
                std::hint::black_box(out.data)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch);

fn main() {
    if !ratio::run(benches) {
        return;
    }
    if let Some(base) = mean_ns("dispatch", "baseline") {
        println!("\nratios to baseline ({base:.0} ns):");
        for id in ["invoke", "compose3"] {
            if let Some(ns) = mean_ns("dispatch", id) {
                println!("  {id:<9} {ns:>8.0} ns  {:>5.2}x", ns / base);
            }
        }
    }
}
