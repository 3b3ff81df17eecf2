//! Every parameter form, in any order.
use std::sync::Arc;

use gonk_tools::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Query {
    pub text: String,
}

pub struct Db(u32);
pub struct Config(&'static str);

/// No parameters at all.
#[tool]
async fn none() -> u32 { 1 }

/// Only the input.
#[tool]
async fn input_only(input: Query) -> String { input.text }

/// The context by value.
#[tool]
async fn ctx_only(ctx: ToolContext) -> bool { ctx.is_cancelled() }

/// The context by reference.
#[tool]
async fn ctx_ref(input: Query, ctx: &ToolContext) -> String {
    ctx.log().info("hi");
    input.text
}

/// State, context first.
#[tool]
async fn with_state(ctx: ToolContext, db: State<Db>, input: Query) -> String {
    let _ = ctx;
    format!("{}{}", input.text, db.0 .0)
}

/// Two states, no input.
#[tool]
async fn two_states(db: State<Db>, config: State<Config>) -> String {
    format!("{}{}", config.0 .0, db.0 .0)
}

pub struct Counter {
    base: u32,
}

#[tools]
impl Counter {
    /// `&self` and an input.
    #[tool(name = "counter.add")]
    pub async fn add(&self, input: Query) -> u32 { self.base + input.text.len() as u32 }

    /// `&self`, state and context.
    #[tool(name = "counter.db")]
    pub async fn with_db(&self, db: State<Db>, ctx: &ToolContext) -> u32 {
        let _ = ctx;
        self.base + db.0 .0
    }

    /// Not a tool: left alone.
    pub fn helper(&self) -> u32 { self.base }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::builder().state(Db(2)).state(Config("c")).build();
    registry
        .register_all([
            None::definition(),
            InputOnly::definition(),
            CtxOnly::definition(),
            CtxRef::definition(),
            WithState::definition(),
            TwoStates::definition(),
        ])
        .unwrap();
    Arc::new(Counter { base: 40 }).register_tools(&registry).unwrap();
    let call = |name: &str, input: serde_json::Value| {
        let events = registry.invoke(name, input, ToolContext::new());
        async move { collect_tool_outcome(events, |_| {}).await.unwrap().data }
    };
    assert_eq!(call("none", json!({})).await, 1);
    assert_eq!(call("input_only", json!({"text": "a"})).await, "a");
    assert_eq!(call("ctx_only", json!({})).await, false);
    assert_eq!(call("ctx_ref", json!({"text": "b"})).await, "b");
    assert_eq!(call("with_state", json!({"text": "s"})).await, "s2");
    assert_eq!(call("two_states", json!({})).await, "c2");
    assert_eq!(call("counter.add", json!({"text": "xy"})).await, 42);
    assert_eq!(call("counter.db", json!({})).await, 42);
    assert_eq!(Counter { base: 1 }.helper(), 1);
}
