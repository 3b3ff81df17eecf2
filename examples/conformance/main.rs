//! `conformance`: the tools the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) calls in its server scenarios,
//! served by the gonk-tools MCP adapter. Each tool is an `async fn` with
//! `#[tool]`; sampling, elicitation and roots reach the MCP client through
//! `ctx.ask` (an `elicitation/create` on a 2025 session, `input_required`
//! and a retry in 2026-07-28). The tasks scenarios' tools are
//! `#[tool(detached)]` on an embedded job runner: a client that declares
//! the tasks extension gets a task for each call.
//!
//! ```text
//! conformance --port 3001     # streamable HTTP at http://127.0.0.1:3001/mcp
//! conformance --stdio         # stdio
//! ```
#![allow(deprecated)] // rmcp marks sampling (SEP-2577) deprecated; the 2025 suites test it.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use gonk_tools::adapters::mcp::{
    serve_http, serve_stdio, McpHttpOptions, McpRequestContext, McpServerOptions, RequestStateKeys,
};
use gonk_tools::ask::{InputKind, InputRequest, SamplingRequest};
use gonk_tools::event::ResourceContents;
use gonk_tools::jobs::{self, EmbeddedRunner};
use gonk_tools::prelude::*;
use serde_json::Value;

mod primitives;

/// A 1×1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file with one silent 8-bit sample at 8 kHz.
const SILENT_WAV: &str = "UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA";

#[derive(Serialize, Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the client's LLM.
    prompt: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

fn text_output(text: &str) -> ToolOutput<String> {
    ToolOutput::new(text.to_owned()).with_display(text)
}

fn peer(ctx: &ToolContext) -> Result<&McpRequestContext, ToolError> {
    ctx.host::<McpRequestContext>().ok_or_else(|| {
        ToolError::internal("this tool needs an MCP client (no MCP request context)")
    })
}

/// Returns a simple text response.
#[tool(approval = "read")]
async fn test_simple_text() -> ToolOutput<String> {
    text_output("This is a simple text response for testing.")
}

/// Returns a 1x1 red PNG image.
#[tool(approval = "read")]
async fn test_image_content() -> ToolOutput<String> {
    ToolOutput::new("image".to_owned()).with_display(vec![DisplayBlock::Image {
        mime_type: "image/png".into(),
        data: RED_PIXEL_PNG.into(),
        alt: Some("a red pixel".into()),
    }])
}

/// Returns a tiny WAV file.
#[tool(approval = "read")]
async fn test_audio_content() -> ToolOutput<String> {
    ToolOutput::new("audio".to_owned()).with_display(vec![DisplayBlock::Audio {
        mime_type: "audio/wav".into(),
        data: SILENT_WAV.into(),
    }])
}

/// Returns an embedded text resource.
#[tool(approval = "read")]
async fn test_embedded_resource() -> ToolOutput<String> {
    ToolOutput::new("resource".to_owned()).with_display(vec![DisplayBlock::Resource {
        uri: "test://embedded-resource".into(),
        mime_type: Some("text/plain".into()),
        contents: ResourceContents::Text {
            text: "This is an embedded resource content.".into(),
        },
    }])
}

/// Returns text, an image and a resource.
#[tool(approval = "read")]
async fn test_multiple_content_types() -> ToolOutput<String> {
    ToolOutput::new("mixed".to_owned()).with_display(vec![
        DisplayBlock::Text {
            text: "Multiple content types test:".into(),
        },
        DisplayBlock::Image {
            mime_type: "image/png".into(),
            data: RED_PIXEL_PNG.into(),
            alt: None,
        },
        DisplayBlock::Resource {
            uri: "test://mixed-content-resource".into(),
            mime_type: Some("application/json".into()),
            contents: ResourceContents::Text {
                text: r#"{"test":"data","value":123}"#.into(),
            },
        },
    ])
}

/// Sends three log messages while it runs.
#[tool(approval = "read")]
async fn test_tool_with_logging(ctx: &ToolContext) -> ToolOutput<String> {
    ctx.log().info("Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log().info("Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log().info("Tool execution completed");
    text_output("Logging test completed")
}

/// Always fails.
#[tool(approval = "read")]
async fn test_error_handling() -> Result<(), ToolError> {
    Err(ToolError::new(
        ErrorCode::custom("TEST_ERROR"),
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 percent.
#[tool(approval = "read")]
async fn test_tool_with_progress(ctx: &ToolContext) -> ToolOutput<String> {
    ctx.progress(0.0, Some("started".to_owned()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.progress(50.0, Some("halfway".to_owned()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.progress(100.0, Some("done".to_owned()));
    text_output("Progress test completed")
}

/// Asks the client's LLM to answer the prompt (sampling).
#[tool(approval = "read")]
async fn test_sampling(
    input: SamplingArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let mut answers = ctx
        .ask(vec![(
            "sampling".to_owned(),
            InputRequest::sample(&SamplingRequest::user_text(input.prompt, 100)),
        )])
        .await?;
    let message = answers.pop().unwrap_or_default();
    let text = message["content"]["text"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| message["content"].to_string());
    Ok(text_output(&format!("LLM response: {text}")))
}

/// Asks the client to fill in the form of `schema` under `message` (an
/// `elicitation/create` request in 2025, an input request in 2026) and
/// returns its answer as `(action, content)`.
async fn elicit(
    ctx: &ToolContext,
    message: &str,
    schema: Value,
) -> Result<(String, Value), ToolError> {
    let mut answers = ctx
        .ask(vec![(
            "elicitation".to_owned(),
            InputRequest::elicit(message, schema),
        )])
        .await?;
    let answer = answers.pop().unwrap_or_default();
    Ok((
        answer["action"].as_str().unwrap_or("unknown").to_owned(),
        answer.get("content").cloned().unwrap_or(Value::Null),
    ))
}

/// Asks the user for a username and an email (elicitation).
#[tool(approval = "read")]
async fn test_elicitation(
    input: ElicitationArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let (action, content) = elicit(ctx, &input.message, schema).await?;
    Ok(text_output(&format!(
        "User response: action: {action}, content: {content}"
    )))
}

/// Elicits a form whose fields all have defaults (SEP-1034).
#[tool(approval = "read")]
async fn test_elicitation_sep1034_defaults(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true}
        }
    });
    let (action, content) = elicit(ctx, "Please review your profile", schema).await?;
    Ok(text_output(&format!(
        "Elicitation completed: action={action}, content={content}"
    )))
}

/// Elicits a form with every enum variant (SEP-1330).
#[tool(approval = "read")]
async fn test_elicitation_sep1330_enums(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}
            ]}}
        }
    });
    let (action, content) = elicit(ctx, "Pick your options", schema).await?;
    Ok(text_output(&format!(
        "Elicitation completed: action={action}, content={content}"
    )))
}

/// Tool with JSON Schema 2020-12 features
#[tool(
    approval = "read",
    input_json_schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
)]
async fn json_schema_2020_12_tool(input: Value) -> Value {
    json!({ "received": input })
}

/// Needs the client's `sampling` capability: a client that did not
/// declare it gets the protocol's missing-capability error.
#[tool(approval = "read")]
async fn test_missing_capability(ctx: &ToolContext) -> Result<ToolOutput<String>, ToolError> {
    peer(ctx)?.require_client_capability("sampling")?;
    Ok(text_output("The client declared sampling."))
}

/// Asks the user a question while it runs (elicitation).
#[tool(approval = "read")]
async fn test_streaming_elicitation(ctx: &ToolContext) -> Result<ToolOutput<String>, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"]
    });
    let (action, content) = elicit(ctx, "Answer the question", schema).await?;
    Ok(text_output(&format!(
        "Elicitation completed: action={action}, content={content}"
    )))
}

/// Logs at each level while it runs (no `logLevel`, no notifications).
#[tool(approval = "read")]
async fn test_logging_tool(ctx: &ToolContext) -> ToolOutput<String> {
    ctx.log().debug("debug message");
    ctx.log().info("info message");
    ctx.log().warn("warning message");
    ctx.log().error("error message");
    text_output("Logged at every level")
}

/// Adds or removes a tool, so the tool list changes.
#[tool(approval = "read")]
async fn test_trigger_tool_change(
    dynamic: State<Dynamic>,
) -> Result<ToolOutput<String>, ToolError> {
    let Dynamic(registry) = &*dynamic;
    if registry.has("test_dynamic_tool") {
        registry.remove_source("dynamic");
        return Ok(text_output("removed test_dynamic_tool"));
    }
    registry
        .replace_source("dynamic", vec![TestDynamicTool::definition()])
        .map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(text_output("added test_dynamic_tool"))
}

/// Adds `test_dynamic_prompt` if it is missing, else removes it (the
/// suite watches `notifications/prompts/list_changed`).
#[tool(approval = "read")]
async fn test_trigger_prompt_change(
    dynamic: State<Dynamic>,
) -> Result<ToolOutput<String>, ToolError> {
    let Dynamic(registry) = &*dynamic;
    if registry.unregister_prompt("test_dynamic_prompt") {
        return Ok(text_output("removed test_dynamic_prompt"));
    }
    registry
        .register_prompt(primitives::dynamic_prompt())
        .map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(text_output("added test_dynamic_prompt"))
}

/// A tool that comes and goes with `test_trigger_tool_change`.
#[tool(approval = "read")]
async fn test_dynamic_tool() -> ToolOutput<String> {
    text_output("dynamic")
}

/// The registry the tools are served from, for `test_trigger_tool_change`.
struct Dynamic(ToolRegistry);

#[derive(Serialize, Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// Greets by name, at once (never a task).
#[tool(approval = "read")]
async fn greet(input: GreetArgs) -> ToolOutput<String> {
    text_output(&format!("Hello, {}!", input.name))
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct SlowComputeArgs {
    /// How long the computation takes, in seconds.
    #[schemars(range(min = 0.0, max = 600.0))]
    seconds: f64,
    /// A name for this run, echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

/// Computes for `seconds` seconds, then answers. Detached: a task for a
/// client that declared the tasks extension. Cancelling it drops the
/// computation, so the task settles as cancelled.
#[tool(approval = "read", detached)]
async fn slow_compute(input: SlowComputeArgs, ctx: &ToolContext) -> ToolOutput<String> {
    let label = input.label.unwrap_or_else(|| "slow_compute".to_owned());
    ctx.progress(0.0, Some(format!("computing {label}")));
    tokio::time::sleep(Duration::from_secs_f64(input.seconds)).await;
    text_output(&format!("Computed {label} in {}s", input.seconds))
}

/// Fails with a tool error after a second. Detached, and it runs only as a
/// task (`McpServerOptions::tasks_required`): a client without the tasks
/// extension is refused before it runs.
#[tool(approval = "read", detached)]
async fn failing_job() -> Result<ToolOutput<String>, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new(
        ErrorCode::custom("JOB_FAILED"),
        "failing_job failed, as it always does",
    ))
}

/// Panics. Detached: its task ends `failed` with a JSON-RPC error, since
/// a panic is a fault of the server, not an answer of the tool.
#[tool(approval = "read", detached)]
async fn protocol_error_job() -> ToolOutput<String> {
    panic!("protocol_error_job panics on purpose")
}

/// One text field `field`, required.
fn one_field(field: &str, kind: &str) -> Value {
    json!({
        "type": "object",
        "properties": { field: { "type": kind } },
        "required": [field],
    })
}

/// The text of a sampled message.
fn sampled_text(answer: &Value) -> String {
    answer["content"]["text"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| answer["content"].to_string())
}

/// Asks the user's name (`user_name`), then greets them.
#[tool(approval = "read")]
async fn test_input_required_result_elicitation(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let question = InputRequest::elicit("What is your name?", one_field("name", "string"));
    let answer = ctx.ask(vec![("user_name".to_owned(), question)]).await?;
    let name = answer[0]["content"]["name"].as_str().unwrap_or("stranger");
    Ok(text_output(&format!("Hello, {name}!")))
}

/// Asks the client's model for the capital of France (`capital_question`).
#[tool(approval = "read")]
async fn test_input_required_result_sampling(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let question = InputRequest::sample(&SamplingRequest::user_text(
        "What is the capital of France?",
        100,
    ));
    let answer = ctx
        .ask(vec![("capital_question".to_owned(), question)])
        .await?;
    Ok(text_output(&format!(
        "The model said: {}",
        sampled_text(&answer[0])
    )))
}

/// Asks the client for its roots (`client_roots`) and lists them.
#[tool(approval = "read")]
async fn test_input_required_result_list_roots(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let roots = ctx.roots().await?;
    let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(text_output(&format!("Roots: {}", uris.join(", "))))
}

/// Asks for a confirmation; its answer is read back from the sealed
/// request state, which the text confirms with `state-ok`.
#[tool(approval = "read")]
async fn test_input_required_result_request_state(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let question = InputRequest::elicit("Please confirm", one_field("ok", "boolean"));
    let answer = ctx.ask(vec![("confirm".to_owned(), question)]).await?;
    Ok(text_output(&format!(
        "state-ok: confirmed={}",
        answer[0]["content"]["ok"]
    )))
}

/// Asks three questions at once: a name, a greeting from the model, the
/// client's roots.
#[tool(approval = "read")]
async fn test_input_required_result_multiple_inputs(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let answers = ctx
        .ask(vec![
            (
                "user_name".to_owned(),
                InputRequest::elicit("What is your name?", one_field("name", "string")),
            ),
            (
                "greeting".to_owned(),
                InputRequest::sample(&SamplingRequest::user_text("Generate a greeting", 50)),
            ),
            ("client_roots".to_owned(), InputRequest::list_roots()),
        ])
        .await?;
    Ok(text_output(&format!(
        "name={}, greeting={}, roots={}",
        answers[0]["content"]["name"],
        sampled_text(&answers[1]),
        answers[2]["roots"]
    )))
}

/// Asks a name, then — a second round — a favorite color.
#[tool(approval = "read")]
async fn test_input_required_result_multi_round(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let name = ctx
        .ask(vec![(
            "step1".to_owned(),
            InputRequest::elicit("Step 1: What is your name?", one_field("name", "string")),
        )])
        .await?;
    let color = ctx
        .ask(vec![(
            "step2".to_owned(),
            InputRequest::elicit(
                "Step 2: What is your favorite color?",
                one_field("color", "string"),
            ),
        )])
        .await?;
    Ok(text_output(&format!(
        "{} likes {}",
        name[0]["content"]["name"], color[0]["content"]["color"]
    )))
}

/// Asks for a confirmation; a retry with an altered request state is
/// refused before the tool runs again.
#[tool(approval = "read")]
async fn test_input_required_result_tampered_state(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let question = InputRequest::elicit("Please confirm", one_field("ok", "boolean"));
    ctx.ask(vec![("confirm".to_owned(), question)]).await?;
    Ok(text_output("confirmed"))
}

/// Asks only what the client declared it can answer: the model if it
/// samples, the user if it elicits.
#[tool(approval = "read")]
async fn test_input_required_result_capabilities(
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let mut questions = Vec::new();
    if ctx.can_ask(InputKind::Sampling) {
        questions.push((
            "model_answer".to_owned(),
            InputRequest::sample(&SamplingRequest::user_text("Say hello", 20)),
        ));
    }
    if ctx.can_ask(InputKind::Elicitation) {
        questions.push((
            "user_answer".to_owned(),
            InputRequest::elicit("Say hello", one_field("hello", "string")),
        ));
    }
    if questions.is_empty() {
        return Ok(text_output("The client can answer nothing; asked nothing."));
    }
    let answers = ctx.ask(questions).await?;
    Ok(text_output(&format!("{} answers", answers.len())))
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ConfirmDeleteArgs {
    /// The file to delete.
    filename: String,
}

/// Asks the user to confirm, then "deletes" the file. Detached: as a task,
/// the question shows on `tasks/get` until `tasks/update` answers it.
#[tool(approval = "read", detached)]
async fn confirm_delete(
    input: ConfirmDeleteArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput<String>, ToolError> {
    let question = InputRequest::elicit(
        format!("Delete {}?", input.filename),
        one_field("confirm", "boolean"),
    );
    let answer = ctx.ask(vec![("confirm".to_owned(), question)]).await?;
    let confirmed = answer[0]["content"]["confirm"] == json!(true);
    Ok(text_output(&if confirmed {
        format!("Deleted {}", input.filename)
    } else {
        format!("Kept {}", input.filename)
    }))
}

/// Asks two questions at once. Detached: as a task, both show on
/// `tasks/get`, and each may be answered on its own.
#[tool(approval = "read", detached)]
async fn multi_input(ctx: &ToolContext) -> Result<ToolOutput<String>, ToolError> {
    let answers = ctx
        .ask(vec![
            (
                "first".to_owned(),
                InputRequest::elicit("First question", one_field("name", "string")),
            ),
            (
                "second".to_owned(),
                InputRequest::elicit("Second question", one_field("name", "string")),
            ),
        ])
        .await?;
    Ok(text_output(&format!(
        "Answers: {} and {}",
        answers[0]["content"]["name"], answers[1]["content"]["name"]
    )))
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct GreetLaterArgs {
    /// Who to greet.
    name: String,
}

/// Greets by name, as a job.
#[tool(approval = "read", detached)]
async fn greet_later(input: GreetLaterArgs) -> ToolOutput<String> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    text_output(&format!("Hello, {}! (from a task)", input.name))
}

/// Asks the user's name (an `input_required` round), then hands the work
/// to a job: the retry that brings the name gets a task.
#[tool(approval = "read")]
async fn test_tool_with_task(ctx: &ToolContext) -> Result<ToolOutput<Value>, ToolError> {
    let question = InputRequest::elicit("What is your name?", one_field("name", "string"));
    let answer = ctx.ask(vec![("user_name".to_owned(), question)]).await?;
    let name = answer[0]["content"]["name"].clone();
    let handle =
        collect_tool_outcome(ctx.invoke("greet_later", json!({ "name": name })), |_| {}).await?;
    Ok(handle)
}

#[derive(Deserialize, JsonSchema)]
struct Region {
    /// The region to route to; sent as the `Mcp-Param-Region` header too.
    region: String,
}

/// Echoes the region it was routed to. Its `region` argument travels as an
/// MCP parameter header (`x-mcp-header`), which the suite's custom-header
/// scenario validates against the body.
#[tool(approval = "read", mcp(read_only, header(region = "Region")))]
async fn test_param_headers(input: Region) -> String {
    format!("routed to {}", input.region)
}

toolset! {
    /// The tools the conformance suite's server scenarios call.
    pub struct Conformance {
        TestSimpleText,
        TestImageContent,
        TestAudioContent,
        TestEmbeddedResource,
        TestMultipleContentTypes,
        TestToolWithLogging,
        TestErrorHandling,
        TestToolWithProgress,
        TestSampling,
        TestElicitation,
        TestElicitationSep1034Defaults,
        TestElicitationSep1330Enums,
        JsonSchema_2020_12Tool,
        TestMissingCapability,
        TestStreamingElicitation,
        TestLoggingTool,
        TestTriggerToolChange,
        TestTriggerPromptChange,
        Greet,
        SlowCompute,
        FailingJob,
        ProtocolErrorJob,
        TestInputRequiredResultElicitation,
        TestInputRequiredResultSampling,
        TestInputRequiredResultListRoots,
        TestInputRequiredResultRequestState,
        TestInputRequiredResultMultipleInputs,
        TestInputRequiredResultMultiRound,
        TestInputRequiredResultTamperedState,
        TestInputRequiredResultCapabilities,
        ConfirmDelete,
        MultiInput,
        GreetLater,
        TestToolWithTask,
        TestParamHeaders,
    }
}

enum Mode {
    Stdio,
    Http(u16),
}

const USAGE: &str = "usage: conformance --port N | --stdio [--request-state-ttl SECS]";

fn parse_args() -> Result<(Mode, Option<Duration>), String> {
    let mut args = std::env::args().skip(1);
    let mut mode = None;
    let mut ttl = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => mode = Some(Mode::Stdio),
            "--request-state-ttl" => {
                let secs = args.next().and_then(|secs| secs.parse().ok()).ok_or(
                    "--request-state-ttl takes whole seconds, e.g. --request-state-ttl 60",
                )?;
                ttl = Some(Duration::from_secs(secs));
            }
            "--port" => {
                let port = args
                    .next()
                    .ok_or("--port needs a value, e.g. --port 3001")?;
                let port = port
                    .parse()
                    .map_err(|_| format!("--port takes a port number, got `{port}`"))?;
                mode = Some(Mode::Http(port));
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
        }
    }
    Ok((mode.ok_or_else(|| USAGE.to_owned())?, ttl))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (mode, ttl) = match parse_args() {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let registry = ToolRegistry::new();
    // `test_trigger_tool_change` changes the catalog it is served from.
    registry.insert_state(Dynamic(registry.clone()));
    if let Err(error) =
        Conformance::register_tools(&registry).and_then(|()| primitives::register(&registry))
    {
        eprintln!("conformance: {error}");
        return ExitCode::FAILURE;
    }
    // The detached tools run as jobs, offered over MCP as tasks.
    if let Err(error) = jobs::install(&registry, Arc::new(EmbeddedRunner::new())) {
        eprintln!("conformance: {error}");
        return ExitCode::FAILURE;
    }
    let mut options = McpServerOptions::new("gonk-tools-conformance", env!("CARGO_PKG_VERSION"))
        .tasks_required(["failing_job"]);
    // Processes that share GONK_MCP_REQUEST_STATE_KEYS accept each
    // other's request states.
    match RequestStateKeys::from_env() {
        Ok(Some(keys)) => options = options.request_state_keys(keys),
        Ok(None) => {}
        Err(error) => {
            eprintln!("conformance: {error}");
            return ExitCode::from(2);
        }
    }
    if let Some(ttl) = ttl {
        options = options.request_state_ttl(ttl);
    }
    let result: Result<(), Box<dyn std::error::Error>> = match mode {
        Mode::Stdio => serve_stdio(registry, options).await.map_err(Into::into),
        Mode::Http(port) => {
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            match serve_http(addr, registry, McpHttpOptions::new(options)).await {
                Ok(server) => {
                    eprintln!("conformance: serving MCP at {}", server.url());
                    server.wait().await.map_err(Into::into)
                }
                Err(error) => Err(error.into()),
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("conformance: {error}");
            ExitCode::FAILURE
        }
    }
}
