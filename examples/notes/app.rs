//! The notes board as an MCP App (`io.modelcontextprotocol/ui`): the page
//! `page/app.html` served as the app resource `ui://notes/board`, which a
//! host renders in a sandboxed frame when its model calls `notes.search`
//! (which links it); and `notes.board`, the board's state, a tool only the
//! app calls (`ui(.., visibility = "app")`: hosts keep it from the model). The page
//! calls the notes tools through the host, so every call meets the same
//! rules as any other MCP call (write tools withheld over HTTP unless
//! allowed, `--approval ask`). The WebSocket page (`ws.rs`) stays.

use std::collections::BTreeMap;

use gonk_tools::app::{AppCsp, AppResource};
use gonk_tools::prelude::*;
use gonk_tools::resource::ResourceDefinition;
use gonk_tools::{RegistryError, ToolRegistry};

use crate::store::{Note, Store};

/// The URI of the notes board app.
pub const BOARD_URI: &str = "ui://notes/board";

/// The board: one self-contained page, no network access of its own.
const PAGE: &str = include_str!("page/app.html");

/// The board's app resource. Its CSP declares no domain at all: the page
/// is inline and reaches the server only through the host.
pub fn board() -> ResourceDefinition {
    AppResource::html(BOARD_URI, PAGE)
        .name("board")
        .title("Notes board")
        .description(
            "Lists, searches and creates notes through the host; opened from notes.search results",
        )
        .csp(AppCsp::default())
        .prefers_border(true)
        .build()
}

/// Registers the board's app resource: before the tools that link it
/// (`notes.search`, `notes.board`).
pub fn install(registry: &ToolRegistry) -> Result<(), RegistryError> {
    registry.register_resource(board())
}

fn default_board_limit() -> u32 {
    20
}

/// Input of `notes.board`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BoardInput {
    /// How many of the most recently changed notes to show.
    #[serde(default = "default_board_limit")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
}

/// A tag and how many of the shown notes carry it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TagCount {
    /// The tag.
    pub tag: String,
    /// How many of the shown notes carry it.
    pub count: u32,
}

/// Output of `notes.board`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Board {
    /// How many notes there are (archived ones left out).
    pub total: u64,
    /// The most recently changed notes, newest first.
    pub notes: Vec<Note>,
    /// The tags of those notes, most used first.
    pub tags: Vec<TagCount>,
}

/// The notes board's state: how many notes there are, the most recently changed ones and their tags. Only the notes board app calls it; models use notes.list.
#[tool(
    name = "notes.board",
    category = "notes",
    scopes("notes:read"),
    approval = "read",
    capabilities(reads_fs, idempotent),
    mcp(read_only, destructive = false, idempotent, open_world = false),
    ui(uri = "ui://notes/board", visibility = "app")
)]
pub async fn notes_board(
    input: BoardInput,
    store: State<Store>,
) -> Result<ToolOutput<Board>, ToolError> {
    let total = store.count(false).await?;
    let notes = store.recent(input.limit, false).await?;
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for tag in notes.iter().flat_map(|note| &note.tags) {
        *counts.entry(tag).or_default() += 1;
    }
    let mut tags: Vec<TagCount> = counts
        .into_iter()
        .map(|(tag, count)| TagCount {
            tag: tag.to_owned(),
            count,
        })
        .collect();
    // Most used first; ties alphabetically (the map's order, kept by a stable sort).
    tags.sort_by_key(|t| std::cmp::Reverse(t.count));
    let noun = if total == 1 { "note" } else { "notes" };
    let display = format!(
        "{total} {noun}; the board shows the {} most recent",
        notes.len()
    );
    Ok(ToolOutput::new(Board { total, notes, tags }).with_display(display))
}
