//! Long-form documentation: the pages of `docs/` in the repository,
//! rendered here beside the API they describe. (Built by rustdoc only; the
//! pages' examples run as doc tests of the workspace's test crate.)

/// How the crate is laid out: the layers, bottom-up, and where each concern lives.
#[doc = ""]
#[doc = include_str!("../docs/architecture.md")]
pub mod architecture {}

/// The dispatch contract: the gates in order, the outcome rule, every error code, and where gonk-tools differs from the TypeScript original.
#[doc = ""]
#[doc = include_str!("../docs/contract.md")]
pub mod contract {}

/// Writing tools: the macro, typed clients, tool sets, what you get.
#[doc = ""]
#[doc = include_str!("../docs/tools.md")]
pub mod tools {}

/// A tool asks its caller: elicitation, sampling, roots, and the replay model.
#[doc = ""]
#[doc = include_str!("../docs/asking.md")]
pub mod asking {}

/// Resources, prompts and completion.
#[doc = ""]
#[doc = include_str!("../docs/resources.md")]
pub mod resources {}

/// Skills: folders of instructions agents load, published and verified.
#[doc = ""]
#[doc = include_str!("../docs/skills.md")]
pub mod skills {}

/// MCP Apps: a tool linked to a `ui://` HTML page a host renders.
#[doc = ""]
#[doc = include_str!("../docs/apps.md")]
pub mod apps {}

/// Detached tools and job runners.
#[doc = ""]
#[doc = include_str!("../docs/jobs.md")]
pub mod jobs {}

/// Rate limits: budgets, backends, deployment.
#[doc = ""]
#[doc = include_str!("../docs/rate-limits.md")]
pub mod rate_limits {}

/// The MCP surface: stdio and streamable HTTP, both protocol eras.
#[doc = ""]
#[doc = include_str!("../docs/mcp.md")]
pub mod mcp {}

/// Serving behind OAuth: access tokens verified into principals on every HTTP surface.
#[doc = ""]
#[doc = include_str!("../docs/oauth-server.md")]
pub mod oauth_server {}

/// The WebSocket projection and the live page.
#[doc = ""]
#[doc = include_str!("../docs/websocket.md")]
pub mod websocket {}

/// Model provider formats (OpenAI, Anthropic, Gemini), rig, and tool search.
#[doc = ""]
#[doc = include_str!("../docs/providers.md")]
pub mod providers {}

/// Traces and metrics with OpenTelemetry.
#[doc = ""]
#[doc = include_str!("../docs/telemetry.md")]
pub mod telemetry {}

/// Tool-surface snapshots in CI.
#[doc = ""]
#[doc = include_str!("../docs/snapshots.md")]
pub mod snapshots {}

/// The cargo features.
#[doc = ""]
#[doc = include_str!("../docs/features.md")]
pub mod features {}

/// The benchmarks: one current table per figure, and how to rerun it.
#[doc = ""]
#[doc = include_str!("../docs/benchmarks.md")]
pub mod benchmarks {}
