//! Diagnostic tools: they make every path of a surface observable from
//! outside (cancellation, each display kind, every event channel, duplex
//! refusal, dispatch errors) without touching the notes themselves.
//!
//! Only served, never called through their typed client: most inputs
//! derive `Deserialize` and no `Serialize`.

use std::path::PathBuf;
use std::time::Duration;

use futures::Stream;
use gonk_tools::event::{DisplayBlock, ResourceContents};
use gonk_tools::prelude::*;
use serde_json::Value;

/// Writes `dropped` to its file when dropped while still armed, i.e. when
/// the handler future is dropped before it finished.
struct DropMarker {
    path: Option<PathBuf>,
    armed: bool,
}

impl Drop for DropMarker {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let text = if self.armed { "dropped" } else { "completed" };
            let _ = std::fs::write(path, text);
        }
    }
}

fn default_sleep_ms() -> u64 {
    60_000
}

/// Input of `diag.sleep` and `diag.block`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Sleep {
    /// How long to sleep, in milliseconds.
    #[serde(default = "default_sleep_ms")]
    #[schemars(range(max = 600000))]
    pub ms: u64,
    /// A file that receives `dropped` if the handler is dropped before it
    /// finishes, `completed` otherwise.
    pub marker: Option<String>,
    /// A file that receives `started` when the handler starts.
    pub started: Option<String>,
}

/// Sleep, then return; reports through a marker file whether the handler finished or was dropped.
#[tool(
    name = "diag.sleep",
    category = "diagnostics",
    approval = "read",
    capabilities(long_running),
    output_schema = false
)]
pub async fn diag_sleep(input: Sleep, ctx: ToolContext) -> Value {
    let mut marker = DropMarker {
        path: input.marker.map(PathBuf::from),
        armed: true,
    };
    if let Some(started) = &input.started {
        let _ = std::fs::write(started, "started");
    }
    ctx.log().info(&format!("sleeping for {} ms", input.ms));
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    marker.armed = false;
    json!({ "slept_ms": input.ms })
}

/// Block its thread without yielding (so cancellation cannot drop it), then return; the marker file says `completed` if it finished.
#[tool(
    name = "diag.block",
    category = "diagnostics",
    approval = "read",
    capabilities(long_running),
    output_schema = false
)]
pub async fn diag_block(input: Sleep, ctx: ToolContext) -> Value {
    let mut marker = DropMarker {
        path: input.marker.map(PathBuf::from),
        armed: true,
    };
    ctx.log().info(&format!("blocking for {} ms", input.ms));
    // Deliberately blocking: this is what a second Ctrl-C is for.
    std::thread::sleep(Duration::from_millis(input.ms));
    marker.armed = false;
    json!({ "blocked_ms": input.ms })
}

/// Display kinds `diag.display` can return.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A text block.
    Text,
    /// A Markdown block.
    Markdown,
    /// A code block.
    Code,
    /// A JSON block.
    Json,
    /// A link.
    Link,
    /// An image.
    Image,
    /// Audio.
    Audio,
    /// An embedded text resource.
    Resource,
}

/// Input of `diag.display`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DisplayInput {
    /// The blocks to return, in order; none means a result without display.
    #[serde(default)]
    pub kinds: Vec<Kind>,
}

fn block(kind: Kind) -> DisplayBlock {
    match kind {
        Kind::Text => DisplayBlock::Text {
            text: "plain text".into(),
        },
        Kind::Markdown => DisplayBlock::Markdown {
            text: "**bold** markdown".into(),
        },
        Kind::Code => DisplayBlock::Code {
            language: "rust".into(),
            code: "fn main() {}".into(),
            caption: None,
        },
        Kind::Json => DisplayBlock::Json {
            value: json!({"answer": 42}),
            caption: None,
        },
        Kind::Link => DisplayBlock::Link {
            url: "https://example.invalid/docs".into(),
            title: Some("Docs".into()),
        },
        Kind::Image => DisplayBlock::Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
            alt: Some("a chart".into()),
        },
        Kind::Audio => DisplayBlock::Audio {
            mime_type: "audio/wav".into(),
            data: "UklGRg==".into(),
        },
        Kind::Resource => DisplayBlock::Resource {
            uri: "notes://readme".into(),
            mime_type: Some("text/plain".into()),
            contents: ResourceContents::Text {
                text: "resource text".into(),
            },
        },
    }
}

/// Return a result with the display blocks asked for.
#[tool(
    name = "diag.display",
    category = "diagnostics",
    approval = "read",
    cli(positional = ["kinds"]),
    output_schema = false
)]
pub async fn diag_display(input: DisplayInput) -> ToolOutput<Value> {
    let data = json!({ "blocks": input.kinds.len() });
    if input.kinds.is_empty() {
        ToolOutput::new(data)
    } else {
        ToolOutput::new(data).with_display(input.kinds.into_iter().map(block).collect::<Vec<_>>())
    }
}

/// Stream one event of every kind: logs, progress, data chunks, then a result.
#[tool(
    name = "diag.events",
    category = "diagnostics",
    approval = "read",
    output_schema = false
)]
pub async fn diag_events(ctx: ToolContext) -> impl Stream<Item = ToolEvent> {
    gonk_tools::stream! {
        ctx.log().warn("from the context logger");
        ctx.progress(25.0, Some("notified".to_owned()));
        yield ToolEvent::log(LogLevel::Debug, "debug line");
        yield ToolEvent::log(LogLevel::Info, "info line");
        yield ToolEvent::progress(50.0, Some("halfway".to_owned()));
        yield ToolEvent::data(json!({"chunk": 1}));
        yield ToolEvent::data(json!({"chunk": 2}));
        yield ToolEvent::Result { data: json!({"chunks": 2}), display: Some("done".into()) };
    }
}

fn default_code() -> String {
    "DIAG_FAILURE".into()
}

/// Input of `diag.fail`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Fail {
    /// The error code to raise.
    #[serde(default = "default_code")]
    pub code: String,
}

/// Fail with the given error code and structured details.
#[tool(
    name = "diag.fail",
    category = "diagnostics",
    approval = "read",
    output_schema = false
)]
pub async fn diag_fail(input: Fail) -> Result<Value, ToolError> {
    Err(ToolError::new(
        ErrorCode::custom(input.code),
        "the diagnostic tool failed as asked",
    )
    .with_details(json!({"hint": "this is expected"})))
}

/// Input of `diag.invoke`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Invoke {
    /// The tool to call through the dispatch path.
    pub tool: String,
    /// Its input.
    #[serde(default)]
    pub input: Option<Value>,
}

/// Call another tool through the dispatch path and relay its events.
#[tool(
    name = "diag.invoke",
    category = "diagnostics",
    approval = "read",
    cli(positional = ["tool"]),
    output_schema = false
)]
pub async fn diag_invoke(input: Invoke, ctx: ToolContext) -> impl Stream<Item = ToolEvent> {
    ctx.invoke(&input.tool, input.input.unwrap_or_else(|| json!({})))
}

/// Level of `diag.echo`'s enum flag.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Low.
    Low,
    /// High.
    High,
}

/// Input of `diag.echo`: one property of every argv type.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Echo {
    /// A string (positional).
    pub text: String,
    /// An integer.
    pub count: Option<i64>,
    /// A number.
    pub ratio: Option<f64>,
    /// A boolean.
    #[serde(default)]
    pub loud: bool,
    /// An enum.
    pub level: Option<Level>,
    /// An array, by repetition.
    #[serde(default)]
    pub items: Vec<i64>,
    /// An object, as JSON.
    pub extra: Option<serde_json::Map<String, Value>>,
}

// Without a category on purpose: listings show it under "(uncategorized)".
/// Return the input as it arrived, after argv coercion and validation.
#[tool(
    name = "diag.echo",
    approval = "read",
    cli(positional = ["text"]),
    output_schema = false
)]
pub async fn diag_echo(input: Echo) -> Echo {
    input
}

/// A duplex tool: it consumes an input stream, so the command line refuses it.
#[tool(
    name = "diag.duplex",
    category = "diagnostics",
    approval = "read",
    capabilities(duplex),
    output_schema = false
)]
pub async fn diag_duplex(ctx: ToolContext) -> Value {
    json!({ "had_input": ctx.has_input() })
}

toolset! {
    /// Every diagnostic tool.
    pub struct Diagnostics {
        DiagSleep,
        DiagBlock,
        DiagDisplay,
        DiagEvents,
        DiagFail,
        DiagInvoke,
        DiagEcho,
        DiagDuplex,
    }
}
