//! What the fuzz targets share: a runtime, a tool with nested, optional
//! and enum fields, the outcome rule every call's stream must keep, and
//! the MCP server's model for `mcp_lines` ([`mcp`]).

use std::sync::OnceLock;

pub mod mcp;

use gonk_tools::prelude::*;
use serde_json::Value;

/// One current-thread runtime per process (a fuzz run is one thread).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// An enum field.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Low.
    Low,
    /// High.
    High,
}

/// A nested object.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Place {
    /// A bounded string.
    #[schemars(length(min = 1, max = 40))]
    pub name: String,
    /// An optional bounded number.
    #[schemars(range(min = -90.0, max = 90.0))]
    pub lat: Option<f64>,
}

/// The fuzzed tool's input: nested, optional and enum fields.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// A required string.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// An enum.
    pub priority: Priority,
    /// An optional integer in a range.
    #[schemars(range(min = 1, max = 1000))]
    pub count: Option<u32>,
    /// A list of nested objects.
    #[serde(default)]
    #[schemars(length(max = 8))]
    pub places: Vec<Place>,
    /// Optional tags.
    pub tags: Option<Vec<String>>,
}

/// Plan something (echoes a summary).
#[tool(name = "plan.make", approval = "read", cli(positional = ["title"]))]
pub async fn plan_make(input: Plan) -> Value {
    json!({
        "title": input.title,
        "places": input.places.len(),
        "count": input.count,
        "priority": input.priority,
    })
}

/// A registry holding the plan tool.
pub fn plan_registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(PlanMake::definition()).expect("registers");
    registry
}

/// Codes dispatch itself may end a call with.
pub const KNOWN_CODES: &[&str] = &[
    "TOOL_NOT_FOUND",
    "INVALID_INPUT",
    "OUTPUT_INVALID",
    "ABORTED",
    "CYCLE",
    "INTERNAL",
    "NO_RESULT",
    "TIMEOUT",
];

/// The outcome rule: exactly one outcome event (`result` or `error`), last.
pub fn assert_one_outcome_last(events: &[ToolEvent]) {
    let outcomes = events
        .iter()
        .filter(|e| matches!(e, ToolEvent::Result { .. } | ToolEvent::Error { .. }))
        .count();
    assert_eq!(outcomes, 1, "exactly one outcome: {events:?}");
    assert!(
        matches!(
            events.last(),
            Some(ToolEvent::Result { .. } | ToolEvent::Error { .. })
        ),
        "the outcome is last: {events:?}"
    );
}
