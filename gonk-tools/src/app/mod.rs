//! MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension): a tool
//! links an HTML resource at a `ui://` URI, and a host that renders apps
//! shows the tool's results in that page, in a sandboxed frame that talks
//! back to the host (and through it to this server's tools).
//!
//! The server side is two declarations and one question:
//!
//! * the **app resource**: [`AppResource::html`] builds an ordinary
//!   [`ResourceDefinition`](crate::resource::ResourceDefinition) served as
//!   `text/html;profile=mcp-app`, whose `_meta.ui` (on `resources/list` and
//!   on every `resources/read` item) says what the page may reach
//!   ([`AppCsp`]), which browser features it asks for ([`AppPermissions`]),
//!   its dedicated origin and whether it wants a border;
//! * the **tool**: `#[tool(ui = "ui://…")]` (or
//!   [`ToolBuilder::ui`](crate::definition::ToolBuilder::ui)) links it,
//!   listed as `_meta.ui.resourceUri` (and the deprecated flat
//!   `_meta["ui/resourceUri"]`) for every client; [`UiVisibility`] says
//!   whether the model, the app or both may call it;
//! * the **client**: [`ToolContext::ui_supported`](crate::ToolContext::ui_supported) tells a tool whether
//!   the client that called it declared the extension. A host without app
//!   support ignores the metadata, so a tool always answers in text too.
//!
//! ```
//! use gonk_tools::prelude::*;
//! use gonk_tools::app::{AppCsp, AppResource, UiVisibility};
//!
//! /// Show the notes board.
//! #[tool(ui = "ui://notes/board")]
//! async fn board() -> String {
//!     "3 notes".to_owned() // the text answer every host gets
//! }
//!
//! /// Move a note on the board (the board calls it; the model does not see it).
//! #[tool(ui(uri = "ui://notes/board", visibility = "app"))]
//! async fn board_move() -> String {
//!     "moved".to_owned()
//! }
//!
//! # fn main() -> Result<(), gonk_tools::RegistryError> {
//! let registry = ToolRegistry::new();
//! registry.register_resource(
//!     AppResource::html("ui://notes/board", "<!doctype html><title>Board</title>")
//!         .name("board")
//!         .description("The notes board.")
//!         .csp(AppCsp::default().connect_domain("https://api.example.com"))
//!         .prefers_border(true)
//!         .build(),
//! )?;
//! registry.register_all([Board::definition(), BoardMove::definition()])?; // after the resource
//! let moved = registry.get("board_move").unwrap();
//! assert_eq!(moved.ui().unwrap().visibility(), [UiVisibility::App]);
//! # Ok(()) }
//! ```
//!
//! The long form, with what hosts do with each field, is `docs/apps.md`.

mod client;
mod resource;

use serde_json::{Map, Value};

pub use self::client::UiCapability;
pub(crate) use self::resource::check_resource;
pub use self::resource::{AppCsp, AppPermissions, AppResource, AppResourceBuilder};
pub use crate::definition::{ToolUi, UiVisibility};

/// The extension's identifier, the key a client declares it under in
/// `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app resource: HTML rendered as an MCP App.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The deprecated flat `_meta` key of a tool's app URI, listed beside
/// `_meta.ui.resourceUri` for hosts that read only it.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The `_meta` entries a listed tool carries for its app: `ui`
/// (`{"resourceUri", "visibility"}`) and the deprecated
/// [`LEGACY_RESOURCE_URI_KEY`].
///
/// ```
/// use gonk_tools::app::{tool_meta, ToolUi};
///
/// let meta = tool_meta(&ToolUi::new("ui://notes/board"));
/// assert_eq!(
///     serde_json::Value::Object(meta),
///     serde_json::json!({
///         "ui": {"resourceUri": "ui://notes/board", "visibility": ["model", "app"]},
///         "ui/resourceUri": "ui://notes/board",
///     }),
/// );
/// ```
pub fn tool_meta(ui: &ToolUi) -> Map<String, Value> {
    let visibility: Vec<Value> = ui
        .visibility()
        .iter()
        .map(|v| Value::from(v.as_str()))
        .collect();
    let mut entry = Map::with_capacity(2);
    entry.insert("resourceUri".into(), ui.resource_uri().into());
    entry.insert("visibility".into(), Value::Array(visibility));
    let mut meta = Map::with_capacity(2);
    meta.insert("ui".into(), Value::Object(entry));
    meta.insert(LEGACY_RESOURCE_URI_KEY.into(), ui.resource_uri().into());
    meta
}

impl crate::context::ToolContext {
    /// Whether the client that made this call renders MCP Apps: it
    /// declared the `io.modelcontextprotocol/ui` extension with
    /// `text/html;profile=mcp-app` among its MIME types. The MCP surface
    /// tells (from the session's `initialize`, or a stateless request's
    /// own capabilities); every other surface — the command line, Pi, the
    /// WebSocket projection, a direct `invoke` — does not, so it is
    /// `false` there. A tool answers in text either way; it may add more
    /// for a client that will show its app.
    ///
    /// ```
    /// use gonk_tools::app::UiCapability;
    /// use gonk_tools::ToolContext;
    ///
    /// assert!(!ToolContext::new().ui_supported());
    /// let host = ToolContext::new().with_host(UiCapability::new(["text/html;profile=mcp-app"]));
    /// assert!(host.ui_supported());
    /// ```
    pub fn ui_supported(&self) -> bool {
        self.ui_capability().is_some_and(UiCapability::renders_apps)
    }

    /// The client's declared `io.modelcontextprotocol/ui` settings, when
    /// the surface serving the call put them on its context (the MCP
    /// surface does, for a client that declared the extension).
    pub fn ui_capability(&self) -> Option<&UiCapability> {
        self.host::<UiCapability>()
    }
}
