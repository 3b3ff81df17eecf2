//! Every attribute key and every value of a fixed set, named once, for all
//! five macros: parsing matches these constants, and the lists feed "did
//! you mean" and the "expected one of" messages, so a key cannot be parsed
//! under one spelling and suggested under another.

// `#[tool(..)]` keys.
pub const NAME: &str = "name";
pub const DESCRIPTION: &str = "description";
pub const CATEGORY: &str = "category";
pub const VISIBILITY: &str = "visibility";
pub const APPROVAL: &str = "approval";
pub const CAPABILITIES: &str = "capabilities";
pub const TAGS: &str = "tags";
pub const KEYWORDS: &str = "keywords";
pub const RELATED_TO: &str = "related_to";
pub const COST: &str = "cost";
pub const LATENCY: &str = "latency";
pub const CLI: &str = "cli";
pub const MCP: &str = "mcp";
pub const PI: &str = "pi";
pub const AUTHORIZATION: &str = "authorization";
pub const AUTHORIZATION_RESOURCE: &str = "authorization_resource";
pub const VALIDATE_OUTPUT: &str = "validate_output";
pub const REQUIRES: &str = "requires";
pub const CAPABILITY_FOR: &str = "capability_for";
pub const DEGRADED_DESCRIPTION: &str = "degraded_description";
pub const INPUT_JSON_SCHEMA: &str = "input_json_schema";
pub const OUTPUT_SCHEMA: &str = "output_schema";
pub const TIMEOUT: &str = "timeout";
pub const CACHE_TTL: &str = "cache_ttl";
pub const DETACHED: &str = "detached";
pub const SCOPES: &str = "scopes";
pub const UI: &str = "ui";
pub const TYPE_NAME: &str = "type_name";
pub const CRATE: &str = "crate";

pub const TOOL_KEYS: &[&str] = &[
    NAME,
    DESCRIPTION,
    CATEGORY,
    VISIBILITY,
    APPROVAL,
    CAPABILITIES,
    TAGS,
    KEYWORDS,
    RELATED_TO,
    COST,
    LATENCY,
    CLI,
    MCP,
    PI,
    AUTHORIZATION,
    AUTHORIZATION_RESOURCE,
    VALIDATE_OUTPUT,
    REQUIRES,
    CAPABILITY_FOR,
    DEGRADED_DESCRIPTION,
    INPUT_JSON_SCHEMA,
    OUTPUT_SCHEMA,
    TIMEOUT,
    CACHE_TTL,
    DETACHED,
    SCOPES,
    UI,
    TYPE_NAME,
    CRATE,
];

// `#[resource(..)]` and `#[prompt(..)]` keys (besides `name`,
// `description`, `timeout`, `type_name`, `crate`, which every fn macro has).
pub const TITLE: &str = "title";
pub const MIME_TYPE: &str = "mime_type";
pub const SIZE: &str = "size";
pub const AUDIENCE: &str = "audience";
pub const PRIORITY: &str = "priority";
pub const COMPLETE: &str = "complete";
pub const ICONS: &str = "icons";

pub const RESOURCE_KEYS: &[&str] = &[
    NAME,
    TITLE,
    DESCRIPTION,
    MIME_TYPE,
    SIZE,
    AUDIENCE,
    PRIORITY,
    ICONS,
    COMPLETE,
    TIMEOUT,
    TYPE_NAME,
    CRATE,
];

pub const PROMPT_KEYS: &[&str] = &[
    NAME,
    TITLE,
    DESCRIPTION,
    COMPLETE,
    TIMEOUT,
    TYPE_NAME,
    CRATE,
];

/// Not a key of `#[resource]`: its URI comes first, without a key, and
/// `uri = ".."` is refused with that advice. A key of `ui(..)`.
pub const URI: &str = "uri";

// `ui(..)` keys: the app a tool links, and who may call the tool.
pub const UI_KEYS: &[&str] = &[URI, VISIBILITY];

/// `audience = [..]` values: MCP's roles.
pub const AUDIENCES: &[&str] = &["user", "assistant"];

// `approval(..)` keys.
pub const TIER: &str = "tier";
pub const OVERRIDE: &str = "override";
pub const REASON: &str = "reason";
pub const APPROVAL_KEYS: &[&str] = &[TIER, OVERRIDE, REASON];

// `capabilities(..)` flags: each is a field of `Capabilities`.
pub const READS_FS: &str = "reads_fs";
pub const WRITES_FS: &str = "writes_fs";
pub const NETWORK: &str = "network";
pub const LONG_RUNNING: &str = "long_running";
pub const IDEMPOTENT: &str = "idempotent";
pub const DUPLEX: &str = "duplex";
pub const CAPABILITY_FLAGS: &[&str] = &[
    READS_FS,
    WRITES_FS,
    NETWORK,
    LONG_RUNNING,
    IDEMPOTENT,
    DUPLEX,
];

// `cli(..)` keys.
pub const COMMAND: &str = "command";
pub const POSITIONAL: &str = "positional";
pub const ALIASES: &str = "aliases";
pub const EXAMPLES: &str = "examples";
pub const CLI_KEYS: &[&str] = &[COMMAND, POSITIONAL, ALIASES, EXAMPLES];

// `mcp(..)` keys; the flags are fields of `McpAnnotations`.
pub const HEADER: &str = "header";
pub const READ_ONLY: &str = "read_only";
pub const DESTRUCTIVE: &str = "destructive";
pub const OPEN_WORLD: &str = "open_world";
pub const MCP_FLAGS: &[&str] = &[READ_ONLY, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD];
pub const MCP_KEYS: &[&str] = &[
    NAME,
    VISIBILITY,
    HEADER,
    READ_ONLY,
    DESTRUCTIVE,
    IDEMPOTENT,
    OPEN_WORLD,
];

// `pi(..)` keys.
pub const REQUIRES_APPROVAL: &str = "requires_approval";
pub const STATUS_GLYPH: &str = "status_glyph";
pub const PI_KEYS: &[&str] = &[NAME, VISIBILITY, REQUIRES_APPROVAL, STATUS_GLYPH];

// `authorization(..)` keys.
pub const AUTH_LEVEL: &str = "auth_level";
pub const REQUIRED_ROLE: &str = "required_role";
pub const ALLOWED_CALLERS: &str = "allowed_callers";
pub const AUTH_KEYS: &[&str] = &[AUTH_LEVEL, REQUIRED_ROLE, ALLOWED_CALLERS];

// `authorization_resource(..)` keys.
pub const KIND: &str = "kind";
pub const REQUIRED_FIELDS: &str = "required_fields";
pub const AUTH_RESOURCE_KEYS: &[&str] = &[KIND, REQUIRED_FIELDS];

// Tool set options: `#[tools(..)]`, `#[toolset(..)]`.
pub const CLIENT: &str = "client";
pub const SET_KEYS: &[&str] = &[CLIENT, CRATE];

// The attributes a tool set reads: `#[tool]` on the methods of a
// `#[tools]` impl, `#[toolset(..)]` inside `toolset!`.
pub const TOOL_ATTRIBUTE: &str = "tool";
pub const TOOLSET_ATTRIBUTE: &str = "toolset";

// Values of the fixed sets.
pub const TIERS: &[&str] = &["read", "write", "exec"];
pub const VISIBILITIES: &[&str] = &["always", "on-demand"];
/// `ui(visibility = ..)` values: MCP Apps' callers.
pub const UI_VISIBILITIES: &[&str] = &["model", "app"];
pub const COSTS: &[&str] = &["low", "moderate", "high"];
pub const LATENCIES: &[&str] = &["instant", "seconds", "minutes"];
pub const VALIDATE_OUTPUT_MODES: &[&str] = &["off", "lax", "strict"];
