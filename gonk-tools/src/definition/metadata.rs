//! The descriptive fields of a tool: everything an adapter reads to
//! advertise, route, gate and hint it.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a tool is always listed or only surfaced on demand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Visibility {
    /// Listed in every catalog.
    Always,
    /// Listed only when a surface asks for it (the default).
    #[default]
    OnDemand,
}

/// Output validation against the output schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValidateOutput {
    /// No output validation (the default).
    #[default]
    Off,
    /// A mismatch is logged as a warning; the result goes through.
    Lax,
    /// A mismatch replaces the result with `OUTPUT_INVALID`.
    Strict,
}

/// What a tool touches. Adapters use it for policy (a `writes_fs` tool is a
/// write tool) and hints; `duplex` tools are never advertised over MCP/CLI.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Reads the file system.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reads_fs: bool,
    /// Writes the file system.
    #[serde(default, skip_serializing_if = "is_false")]
    pub writes_fs: bool,
    /// Talks to the network.
    #[serde(default, skip_serializing_if = "is_false")]
    pub network: bool,
    /// May run for minutes.
    #[serde(default, skip_serializing_if = "is_false")]
    pub long_running: bool,
    /// Calling twice with the same input has the same effect as once.
    #[serde(default, skip_serializing_if = "is_false")]
    pub idempotent: bool,
    /// Consumes a bidirectional input stream (audio, interactive sessions).
    #[serde(default, skip_serializing_if = "is_false")]
    pub duplex: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Relative cost of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cost {
    /// Cheap.
    Low,
    /// Noticeable.
    Moderate,
    /// Expensive.
    High,
}

/// Expected latency of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Latency {
    /// Sub-second.
    Instant,
    /// Seconds.
    Seconds,
    /// Minutes.
    Minutes,
}

/// Hints for the command-line surface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CliHints {
    /// Subcommand name (defaults to the tool name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Input fields taken positionally, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub positional: Vec<String>,
    /// Subcommand aliases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Example invocations shown in `--help`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// MCP tool annotations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpAnnotations {
    /// `readOnlyHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

/// Hints for the MCP surface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpHints {
    /// Name advertised over MCP (defaults to the tool name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_name: Option<String>,
    /// Visibility on MCP (defaults to the tool's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// Tool annotations.
    #[serde(default)]
    pub annotations: McpAnnotations,
}

/// Hints for the Pi surface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiHints {
    /// Name registered in Pi (defaults to the tool name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pi_name: Option<String>,
    /// Visibility in Pi.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// Whether Pi asks the user before running it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_approval: Option<bool>,
    /// A glyph Pi shows while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_glyph: Option<String>,
}

/// Per-surface hints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Hints {
    /// Command line.
    #[serde(default)]
    pub cli: CliHints,
    /// MCP.
    #[serde(default)]
    pub mcp: McpHints,
    /// Pi.
    #[serde(default)]
    pub pi: PiHints,
}

/// Approval tier: how much consent a call needs. Ordered `Read < Write < Exec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalTier {
    /// Reads only.
    Read,
    /// Changes state.
    Write,
    /// Runs arbitrary effects.
    Exec,
}

impl ApprovalTier {
    /// Parses `"read" | "write" | "exec"`.
    pub fn parse(tier: &str) -> Option<ApprovalTier> {
        match tier {
            "read" => Some(ApprovalTier::Read),
            "write" => Some(ApprovalTier::Write),
            "exec" => Some(ApprovalTier::Exec),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalTier::Read => "read",
            ApprovalTier::Write => "write",
            ApprovalTier::Exec => "exec",
        }
    }
}

/// A resolved approval declaration: a tier, whether a host may override
/// it, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalSpec {
    /// The tier.
    pub tier: ApprovalTier,
    /// Whether a host may override the tier (`override` on the wire).
    #[serde(rename = "override", default)]
    pub overridable: bool,
    /// Why this tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<ApprovalTier> for ApprovalSpec {
    fn from(tier: ApprovalTier) -> Self {
        ApprovalSpec {
            tier,
            overridable: false,
            reason: None,
        }
    }
}

/// A function of the validated input that picks the approval.
pub type ApprovalFn = dyn Fn(&Value) -> Result<ApprovalSpec, String> + Send + Sync;

/// A tool's approval declaration.
#[derive(Clone)]
pub enum Approval {
    /// A fixed tier (with override and reason).
    Static(ApprovalSpec),
    /// Decided per call from the validated input. An `Err` resolves to
    /// `exec` (fail closed).
    Dynamic(Arc<ApprovalFn>),
}

impl fmt::Debug for Approval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Approval::Static(spec) => f.debug_tuple("Static").field(spec).finish(),
            Approval::Dynamic(_) => f.write_str("Dynamic(..)"),
        }
    }
}

impl From<ApprovalTier> for Approval {
    fn from(tier: ApprovalTier) -> Self {
        Approval::Static(tier.into())
    }
}

impl From<ApprovalSpec> for Approval {
    fn from(spec: ApprovalSpec) -> Self {
        Approval::Static(spec)
    }
}

/// Declared authorization requirements, passed to the policy as resource
/// metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationSpec {
    /// A host-defined level (`"user"`, `"admin"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_level: Option<String>,
    /// A role the principal must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_role: Option<String>,
    /// Tools allowed to call this one in composition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_callers: Vec<String>,
}

/// Where an imported tool came from: the importer that made the
/// definition and what it knew of the remote side when it did
/// (the tools the MCP adapter's `McpSource` imports).
/// Serializes in camelCase (`serverId`, `catalogRevision`, …).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// What imported the tool (`"mcp"`).
    pub importer: String,
    /// The id the host gave the remote server (the name's prefix).
    pub server_id: String,
    /// The tool's name on the remote server.
    pub remote_name: String,
    /// Where the remote is: a URL without its query string, or the command.
    pub endpoint: String,
    /// The protocol version negotiated with the remote.
    pub protocol_version: String,
    /// The revision of the source catalog the definition belongs to
    /// (1 for the first import, +1 for each refresh).
    pub catalog_revision: u64,
    /// When the catalog was read, RFC 3339 (UTC).
    pub discovered_at: String,
}

/// An application resource the tool acts on, which must be resolved (and
/// found) before an authenticated call is authorized.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationResource {
    /// The resource kind (`"note"`).
    pub kind: String,
    /// Fields the resolved resource must carry (default `["target"]`).
    #[serde(default = "default_required_fields")]
    pub required_fields: Vec<String>,
}

fn default_required_fields() -> Vec<String> {
    vec!["target".to_owned()]
}

impl AuthorizationResource {
    /// A resource of `kind` that must resolve to a `target`.
    pub fn new(kind: impl Into<String>) -> Self {
        AuthorizationResource {
            kind: kind.into(),
            required_fields: default_required_fields(),
        }
    }
}

/// Whether the tool's backing capability is fully available.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CapabilityStatus {
    /// Everything works; advertise the normal description.
    Available,
    /// Partly available; advertise the degraded description.
    Degraded,
}

/// A registration predicate (`requires`).
pub type RequiresFn = dyn Fn() -> bool + Send + Sync;

/// A capability probe (`capability_for`).
pub type CapabilityFn = dyn Fn() -> CapabilityStatus + Send + Sync;
