//! Provider projections of 200 tools, side by side with a baseline in the
//! same run.
//!
//! * `baseline`: cloning the 200 input schemas (what copying schemas into
//!   each request by hand costs at the least).
//! * `<provider>/first`: a fresh [`ProviderTools`] projecting all 200 tools
//!   (strict conversion, OpenAPI conversion, name mapping).
//! * `<provider>/cached`: `tools()` again on the same [`ProviderTools`]:
//!   a look at the registry, the tool list unchanged, the cached list.
//!
//! After the run, the ratios to the baseline are printed.

mod ratio;

use criterion::{criterion_group, BenchmarkId, Criterion};
use gonk_tools::adapters::providers::{Anthropic, Gemini, OpenAi, Provider, ProviderTools};
use gonk_tools::prelude::*;
use ratio::mean_ns;
use serde_json::Value;

const TOOLS: usize = 200;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Search {
    /// Free-text query.
    #[schemars(length(min = 1))]
    query: String,
    #[schemars(range(min = 1, max = 20))]
    limit: Option<u32>,
    tags: Option<Vec<String>>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Author {
    name: String,
    email: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Mode {
    Fast,
    Full,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Create {
    /// The title.
    title: String,
    /// Markdown.
    body: Option<String>,
    author: Author,
    mode: Mode,
    #[serde(default)]
    pinned: bool,
}

async fn echo(input: Value, _ctx: ToolContext) -> Result<ToolOutput<Value>, ToolError> {
    Ok(ToolOutput::new(input))
}

/// 200 tools with dotted names, alternating two realistic input types.
fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    for i in 0..TOOLS {
        let builder = ToolDefinition::builder(format!("app.t{i}.run"))
            .description(format!("Tool number {i}."))
            .approval(ApprovalTier::Read);
        let builder = if i % 2 == 0 {
            builder.input_schema_for::<Search>()
        } else {
            builder.input_schema_for::<Create>()
        };
        registry
            .register(builder.raw_handler(echo).build())
            .expect("bench tools register");
    }
    registry
}

fn project<P: Provider + Clone>(
    c: &mut Criterion,
    registry: &ToolRegistry,
    label: &str,
    provider: P,
) {
    let mut group = c.benchmark_group("providers");
    group.bench_function(BenchmarkId::new(label, "first"), |b| {
        b.iter(|| {
            let tools = ProviderTools::new(registry.clone(), provider.clone());
            std::hint::black_box(tools.tools().unwrap())
        })
    });
    let warm = ProviderTools::new(registry.clone(), provider);
    warm.tools().unwrap();
    group.bench_function(BenchmarkId::new(label, "cached"), |b| {
        b.iter(|| std::hint::black_box(warm.tools().unwrap()))
    });
    group.finish();
}

fn providers(c: &mut Criterion) {
    let registry = registry();
    let schemas: Vec<Value> = registry
        .list()
        .iter()
        .map(|d| d.effective_input_schema().clone())
        .collect();
    c.benchmark_group("providers")
        .bench_function("baseline", |b| {
            b.iter(|| std::hint::black_box(schemas.clone()))
        });
    project(c, &registry, "openai", OpenAi::chat_completions());
    project(c, &registry, "anthropic", Anthropic);
    project(c, &registry, "gemini", Gemini);
}

criterion_group!(benches, providers);

fn main() {
    if !ratio::run(benches) {
        return;
    }
    if let Some(base) = mean_ns("providers", "baseline") {
        println!("\n{TOOLS} tools; ratios to baseline (cloning the schemas, {base:.0} ns):");
        for provider in ["openai", "anthropic", "gemini"] {
            let first = mean_ns("providers", &format!("{provider}/first"));
            let cached = mean_ns("providers", &format!("{provider}/cached"));
            if let (Some(first), Some(cached)) = (first, cached) {
                println!(
                    "  {provider:<9} first {first:>10.0} ns {:>6.2}x   cached {cached:>8.0} ns {:>6.3}x   ({:.0}x cheaper cached)",
                    first / base,
                    cached / base,
                    first / cached
                );
            }
        }
    }
}
