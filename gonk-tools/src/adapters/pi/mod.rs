//! The Pi adapter (feature `pi`): a registry's tools inside the
//! [Pi coding agent](https://www.npmjs.com/package/@mariozechner/pi-coding-agent),
//! which adds tools through TypeScript extensions (`pi.registerTool`) and
//! has no MCP by design.
//!
//! Two halves:
//!
//! * the Rust side, [`serve_pi`]: the registry served over a JSON-lines
//!   bridge on stdin/stdout (the [`protocol`]);
//! * a small TypeScript extension that ships with the crate
//!   ([`PI_EXTENSION_TEMPLATE`]); [`write_pi_extension`] writes it out with
//!   the command that starts the bridge. At Pi's start-up it starts that
//!   command, discovers the tools and registers each with
//!   `pi.registerTool`, forwarding `execute`, `onUpdate` and the abort
//!   signal.
//!
//! A program exposes both with two subcommands — the notes example has
//! `notes pi` (the bridge) and `notes pi-extension` (the file):
//!
//! ```no_run
//! use gonk_tools::prelude::*;
//! use gonk_tools::adapters::pi::{serve_pi, write_pi_extension, PiLaunch, PiOptions};
//!
//! # async fn run(registry: ToolRegistry) -> Result<(), Box<dyn std::error::Error>> {
//! // `my-tools pi-extension > my-tools.ts`, then `pi -e ./my-tools.ts`:
//! write_pi_extension(std::io::stdout(), &PiLaunch::current_exe()?.arg("pi"))?;
//! // … and what that extension starts, `my-tools pi`:
//! serve_pi(registry, PiOptions::new()).await?;
//! # Ok(()) }
//! ```
//!
//! ## What Pi gets
//!
//! Each exposed tool is projected to Pi's tool shape ([`project_tool`],
//! [`PiCatalog`]):
//!
//! * `name`: the `pi` hint's name (`#[tool(pi(name = "..."))]`), else the
//!   tool name with `.` mapped to `_` (`notes.search` → `notes_search`):
//!   model providers accept only `[a-zA-Z0-9_-]{1,64}` ([`PI_NAMES`], the
//!   one [name map](crate::adapters::names) every renaming surface uses).
//!   Two tools that map to one Pi name are refused with an error naming
//!   both and the fix
//!   ([`SurfaceNameError`](crate::adapters::names::SurfaceNameError));
//! * `label`: the tool name;
//! * `description`: the advertised description (the degraded one when the
//!   `capability_for` probe says so), then the cost and latency sentence —
//!   `Base description. Cost: high. Latency: minutes.`;
//! * `parameters`: the enforced input schema, as an object schema. Pi
//!   validates arguments against it before `execute`, and the registry
//!   validates them again (exactly, where JavaScript numbers cannot).
//!
//! Duplex tools, tools the [`PiOptions::filter`] excludes and, with
//! [`PiOptions::only_always_visible`], on-demand tools are skipped (the
//! [exposure rule](crate::definition::SurfaceProfile) every surface
//! follows); the discover answer lists them with the reason.
//!
//! Calls run through [`ToolRegistry::invoke`](crate::ToolRegistry::invoke)
//! — the whole dispatch contract — and are mapped by [`execute`]: progress
//! and data become `onUpdate` partial results, logs go to the host's log
//! (by default to the extension, which emits them on Pi's event bus as
//! `gonk-tools:log` — never into the result), a success is `{content: display,
//! details: data}`, an error `{isError: true, content: ["[CODE] message",
//! details]}`, and Pi's abort signal cancels the call (the handler is
//! dropped). A bridge that dies turns its running calls into tool errors in
//! Pi; the next call starts a new bridge.
//!
//! ## Skills
//!
//! The registry's skills ([`crate::skill`]) reach Pi as files: Pi's
//! extension API adds skills only as folders (`resources_discover` →
//! `skillPaths`), so the bridge writes them under a temporary folder of
//! its own and the extension hands Pi that folder; Pi lists them, loads
//! them on demand and offers `/skill:<name>`. What the API does not allow:
//! registering a skill from memory, or reading one from the bridge when
//! Pi loads it — the files are copied when the tools are discovered, and a
//! change reaches Pi at its next `/reload`.
//!
//! ## Asking the caller: Pi's dialogs
//!
//! When Pi has a UI (`ctx.hasUI`: interactive and RPC mode), the extension
//! says so on each `execute` (`"canAnswer": ["elicitation"]`), and a
//! tool's `ctx.elicit` or an approval that asks the caller
//! ([`ApprovalDecision::AskCaller`](crate::security::ApprovalDecision::AskCaller))
//! becomes a `question` line the extension puts to the user: an approval
//! with `ctx.ui.confirm`, a form field by field (`ctx.ui.input` for text
//! and numbers, `ctx.ui.select` for an enum or a boolean). The call waits
//! at most [`PiOptions::ask_timeout`]. Pi's extension API cannot answer
//! sampling (an extension cannot ask the session's model from inside a
//! tool call) or roots (Pi has none beyond its working directory), and
//! has no multi-select widget: those are `INPUT_UNAVAILABLE` or declined.
//! Without a UI (print and JSON mode) or with an older extension, every
//! question is `INPUT_UNAVAILABLE` at once and an approval stays
//! `APPROVAL_REQUIRED`. `docs/asking.md` ("Pi") has the details.

mod ask;
mod bridge;
mod execution;
mod extension;
mod framing;
mod projection;
pub mod protocol;
mod skills;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use bridge::{serve_pi, serve_pi_io, PiServeError};
pub use execution::{
    block_content, data_update, display_content, error_result, execute, progress_update,
    success_result, update_for, PiContent, PiToolResult, PiUpdate, UpdateSink,
};
pub use extension::{pi_extension_source, write_pi_extension, PiLaunch, PI_EXTENSION_TEMPLATE};
pub use projection::{
    pi_name, project_tool, PiCatalog, PiSkipped, PiTool, PiToolSpec, PI_NAMES, SKIP_DUPLEX,
    SKIP_FILTERED, SKIP_ON_DEMAND,
};

use crate::context::{ContextFactory, ToolContext};
use crate::definition::{SurfaceHints, SurfaceProfile, ToolDefinition, ToolPredicate};

/// The longest bridge line read by default (16 MiB); longer lines get a
/// `REQUEST_TOO_LARGE` error.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How long a call waits for the answer to a question put to Pi unless
/// [`PiOptions::ask_timeout`] says otherwise: five minutes.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Which tools Pi gets and how calls run.
///
/// ```
/// use gonk_tools::adapters::pi::PiOptions;
///
/// let options = PiOptions::new()
///     .filter(|def| !def.name.starts_with("admin."))
///     .only_always_visible(false);
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct PiOptions {
    pub(crate) filter: Option<Arc<ToolPredicate>>,
    pub(crate) only_always_visible: bool,
    pub(crate) base_context: Option<Arc<ContextFactory>>,
    pub(crate) max_line_bytes: usize,
    pub(crate) ask_timeout: Duration,
}

impl fmt::Debug for PiOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PiOptions")
            .field("filtered", &self.filter.is_some())
            .field("only_always_visible", &self.only_always_visible)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("ask_timeout", &self.ask_timeout)
            .finish_non_exhaustive()
    }
}

impl Default for PiOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl PiOptions {
    /// Every tool but duplex ones, on-demand tools included, logs to the
    /// extension, lines up to [`DEFAULT_MAX_LINE_BYTES`].
    pub fn new() -> Self {
        PiOptions {
            filter: None,
            only_always_visible: false,
            base_context: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            ask_timeout: DEFAULT_ASK_TIMEOUT,
        }
    }

    /// Exposes only the tools for which `keep` is true; the others are
    /// skipped (`filtered by caller`) and a call to them is
    /// `TOOL_NOT_FOUND`, exactly like a missing tool.
    pub fn filter(
        mut self,
        keep: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some(Arc::new(keep));
        self
    }

    /// Registers only tools whose Pi visibility (the `pi` hint, else the
    /// tool's) is `always`. Off by default: Pi has no on-demand discovery,
    /// so a tool it is not given cannot be found later.
    pub fn only_always_visible(mut self, only: bool) -> Self {
        self.only_always_visible = only;
        self
    }

    /// Makes the base context of every call (cwd, env, scope, auth, a
    /// logger, …); the bridge adds the cancellation token. A call whose
    /// context has no logger sends its log lines to the extension (`log`
    /// lines of the [`protocol`]).
    pub fn base_context(mut self, make: impl Fn() -> ToolContext + Send + Sync + 'static) -> Self {
        self.base_context = Some(Arc::new(make));
        self
    }

    /// The longest line the bridge reads.
    pub fn max_line_bytes(mut self, max: usize) -> Self {
        self.max_line_bytes = max;
        self
    }

    /// How long a call waits for the user's answer to a question it put
    /// to Pi ([`DEFAULT_ASK_TIMEOUT`] unless set). On expiry the call gets
    /// what a surface that cannot ask gets: an approval stays
    /// `APPROVAL_REQUIRED`, a tool's question fails.
    pub fn ask_timeout(mut self, timeout: Duration) -> Self {
        self.ask_timeout = timeout;
        self
    }

    /// What Pi says about itself to the exposure rule: duplex tools
    /// hidden, tools only an MCP App may call hidden (Pi's model renders
    /// no app), the host's filter, and — with
    /// [`only_always_visible`](Self::only_always_visible) — on-demand tools
    /// (by the `pi` visibility hint, else the tool's) unlisted, which Pi
    /// skips.
    pub(crate) fn profile(&self) -> SurfaceProfile<'_> {
        SurfaceProfile::new()
            .hints(SurfaceHints::Pi)
            .for_model(true)
            .filter(self.filter.as_deref())
            .only_always_visible(self.only_always_visible)
    }

    pub(crate) fn context(&self) -> ToolContext {
        match &self.base_context {
            Some(make) => make(),
            None => ToolContext::new(),
        }
    }
}
