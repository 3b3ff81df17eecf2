//! Which tools a surface shows: the one rule every adapter asks
//! ([`SurfaceProfile::exposure`]), so a tool is hidden, listed or
//! callable-but-unlisted for the same reasons on MCP, the command line,
//! Pi, the WebSocket projection and the model providers.

use std::collections::HashSet;
use std::fmt;

use super::{Approval, ApprovalTier, ToolDefinition, ToolMetadata, Visibility};

/// How a surface shows one tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Exposure {
    /// Listed and callable.
    Listed,
    /// Callable by name but not listed (on-demand visibility on a surface
    /// that lists only always-visible tools). A surface that cannot call
    /// what it does not list (Pi) leaves such a tool out.
    Unlisted,
    /// Neither listed nor callable: to a caller it looks like a tool that
    /// does not exist.
    Hidden(HiddenReason),
}

impl Exposure {
    /// Whether the tool is listed.
    pub fn is_listed(self) -> bool {
        self == Exposure::Listed
    }

    /// Whether the tool is hidden (neither listed nor callable).
    pub fn is_hidden(self) -> bool {
        matches!(self, Exposure::Hidden(_))
    }
}

/// Why a tool is [hidden](Exposure::Hidden).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HiddenReason {
    /// The tool consumes a duplex input stream the surface cannot carry.
    Duplex,
    /// The host's filter refused it.
    Filtered,
    /// It is a write tool and not on the surface's allow-list.
    WriteTool,
    /// Only an MCP App may call it (its UI visibility lacks `model`), and
    /// the surface offers tools to a model with no app to render.
    AppOnly,
}

/// Whose per-surface hints speak for a surface: they may set the tool's
/// visibility there, and the surface's own name for it (which an
/// allow-list may use instead of the registry name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SurfaceHints {
    /// None: the tool's own visibility; the registry name only. The
    /// command-line hints carry no visibility, so the CLI uses this.
    #[default]
    None,
    /// The MCP hints (`hints.mcp.visibility`, `hints.mcp.mcp_name`).
    Mcp,
    /// The Pi hints (`hints.pi.visibility`, `hints.pi.pi_name`).
    Pi,
}

impl SurfaceHints {
    /// The tool's visibility on the surface: the surface's hint, else the
    /// tool's own.
    pub fn visibility(self, def: &ToolMetadata) -> Visibility {
        let hint = match self {
            SurfaceHints::None => None,
            SurfaceHints::Mcp => def.hints.mcp.visibility,
            SurfaceHints::Pi => def.hints.pi.visibility,
        };
        hint.unwrap_or(def.visibility)
    }

    /// The name the tool asks for on the surface, if its hints give one.
    pub fn requested_name(self, def: &ToolMetadata) -> Option<&str> {
        match self {
            SurfaceHints::None => None,
            SurfaceHints::Mcp => def.hints.mcp.mcp_name.as_deref(),
            SurfaceHints::Pi => def.hints.pi.pi_name.as_deref(),
        }
    }
}

/// What a surface does with [write tools](ToolMetadata::is_write_tool).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WriteTools<'a> {
    /// Shows them like any other tool.
    #[default]
    Shown,
    /// Hides every write tool whose registry name, and whose name on the
    /// surface (from [`SurfaceHints::requested_name`]), are both missing
    /// from the set.
    AllowListed(&'a HashSet<String>),
}

/// A host's choice of tools, as a surface borrows it for the rule. Every
/// built-in surface keeps its filter in shared options, hence `Send + Sync`.
pub type ToolPredicate = dyn Fn(&ToolDefinition) -> bool + Send + Sync;

/// What a surface says about itself when it asks which tools it shows —
/// whether it can carry duplex tools, whose hints speak for it, whether it
/// lists only always-visible tools, the host's filter, whether write tools
/// need an allow-list — and the one rule that answers for a definition,
/// [`SurfaceProfile::exposure`]. Every adapter states its needs here
/// rather than deciding on its own.
///
/// [`SurfaceProfile::new`] is the most open surface (every tool but duplex
/// ones, listed); each method narrows or widens one aspect. The checks run
/// in one order, and the first that hides a tool gives the
/// [`HiddenReason`]:
///
/// 1. a duplex tool is hidden unless the surface carries duplex input
///    (none of the built-in surfaces does: a request carries no input
///    stream);
/// 2. a tool the host's filter refuses is hidden;
/// 3. on a surface [`for_model`](Self::for_model), a tool only an MCP App
///    may call ([`ToolUi::visible_to_model`](super::ToolUi::visible_to_model)
///    is `false`) is hidden;
/// 4. with [`WriteTools::AllowListed`], a [write tool](ToolMetadata::is_write_tool)
///    not on the allow-list is hidden;
/// 5. with [`only_always_visible`](Self::only_always_visible), a tool whose
///    visibility on the surface ([`SurfaceHints::visibility`]) is on-demand
///    is [`Exposure::Unlisted`];
/// 6. everything else is [`Exposure::Listed`].
///
/// ```
/// use gonk_tools::prelude::*;
/// use gonk_tools::definition::{Exposure, HiddenReason, SurfaceHints, SurfaceProfile};
///
/// let search = ToolDefinition::builder("notes.search")
///     .description("Search notes.")
///     .raw_handler(|v, _| async move { Ok(ToolOutput::new(v)) })
///     .build();
///
/// // A surface that lists every tool.
/// assert_eq!(SurfaceProfile::new().exposure(&search), Exposure::Listed);
///
/// // One that lists only always-visible tools: on-demand ones stay callable.
/// let mcp = SurfaceProfile::new().hints(SurfaceHints::Mcp).only_always_visible(true);
/// assert_eq!(mcp.exposure(&search), Exposure::Unlisted);
///
/// // One whose host leaves the notes out.
/// let keep = |def: &ToolDefinition| !def.name.starts_with("notes.");
/// let filtered = SurfaceProfile::new().filter(Some(&keep));
/// assert_eq!(filtered.exposure(&search), Exposure::Hidden(HiddenReason::Filtered));
/// ```
#[derive(Clone, Copy, Default)]
pub struct SurfaceProfile<'a> {
    carries_duplex: bool,
    only_always_visible: bool,
    for_model: bool,
    hints: SurfaceHints,
    filter: Option<&'a ToolPredicate>,
    write_tools: WriteTools<'a>,
}

impl fmt::Debug for SurfaceProfile<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SurfaceProfile")
            .field("carries_duplex", &self.carries_duplex)
            .field("only_always_visible", &self.only_always_visible)
            .field("for_model", &self.for_model)
            .field("hints", &self.hints)
            .field("filtered", &self.filter.is_some())
            .field("write_tools", &self.write_tools)
            .finish()
    }
}

impl<'a> SurfaceProfile<'a> {
    /// A surface that carries no duplex input, lists on-demand tools too,
    /// has no filter, shows write tools and reads no surface hints.
    pub const fn new() -> Self {
        SurfaceProfile {
            carries_duplex: false,
            only_always_visible: false,
            for_model: false,
            hints: SurfaceHints::None,
            filter: None,
            write_tools: WriteTools::Shown,
        }
    }

    /// Whether the surface can stream input to a duplex tool (default
    /// `false`: duplex tools are hidden).
    pub const fn carries_duplex(mut self, carries: bool) -> Self {
        self.carries_duplex = carries;
        self
    }

    /// Whose hints speak for the surface (default [`SurfaceHints::None`]).
    pub const fn hints(mut self, hints: SurfaceHints) -> Self {
        self.hints = hints;
        self
    }

    /// Lists only tools whose visibility on the surface is
    /// [`Visibility::Always`]; the others are [`Exposure::Unlisted`]
    /// (default `false`).
    pub const fn only_always_visible(mut self, only: bool) -> Self {
        self.only_always_visible = only;
        self
    }

    /// Whether the surface offers its tools straight to a model that
    /// renders no MCP App (a model provider's tool list, Pi): a tool only
    /// an app may call is then hidden, as a host that renders apps keeps
    /// it from its model (default `false`: MCP lists it, for the host's
    /// app).
    pub const fn for_model(mut self, for_model: bool) -> Self {
        self.for_model = for_model;
        self
    }

    /// The host's filter: a tool it refuses is hidden (default none).
    pub const fn filter(mut self, keep: Option<&'a ToolPredicate>) -> Self {
        self.filter = keep;
        self
    }

    /// What the surface does with write tools (default
    /// [`WriteTools::Shown`]).
    pub const fn write_tools(mut self, write_tools: WriteTools<'a>) -> Self {
        self.write_tools = write_tools;
        self
    }

    /// How the surface shows `def`, by the checks listed on
    /// [`SurfaceProfile`], in their order.
    pub fn exposure(&self, def: &ToolDefinition) -> Exposure {
        if def.capabilities.duplex && !self.carries_duplex {
            return Exposure::Hidden(HiddenReason::Duplex);
        }
        if self.filter.is_some_and(|keep| !keep(def)) {
            return Exposure::Hidden(HiddenReason::Filtered);
        }
        if self.for_model && def.ui().is_some_and(|ui| !ui.visible_to_model()) {
            return Exposure::Hidden(HiddenReason::AppOnly);
        }
        if let WriteTools::AllowListed(allowed) = self.write_tools {
            let listed = allowed.contains(&def.name)
                || self
                    .hints
                    .requested_name(def)
                    .is_some_and(|name| allowed.contains(name));
            if def.is_write_tool() && !listed {
                return Exposure::Hidden(HiddenReason::WriteTool);
            }
        }
        if self.only_always_visible && self.hints.visibility(def) != Visibility::Always {
            return Exposure::Unlisted;
        }
        Exposure::Listed
    }
}

impl ToolMetadata {
    /// Whether the tool is a write tool, which a surface may withhold
    /// ([`WriteTools::AllowListed`]): it writes the file system or uses the
    /// network, its approval is decided per call, or its static tier is
    /// `write` or `exec` (a tool without an approval declaration resolves
    /// to `exec`).
    pub fn is_write_tool(&self) -> bool {
        self.capabilities.writes_fs
            || self.capabilities.network
            || match &self.approval {
                None | Some(Approval::Dynamic(_)) => true,
                Some(Approval::Static(spec)) => spec.tier >= ApprovalTier::Write,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{Capabilities, McpHints, PiHints, ToolBuilder};
    use crate::prelude::*;
    use serde_json::Value;

    fn tool(name: &str) -> ToolBuilder {
        ToolDefinition::builder(name)
            .description("A tool.")
            .approval(ApprovalTier::Read)
    }

    fn build(builder: ToolBuilder) -> ToolDefinition {
        builder
            .raw_handler(|v: Value, _| async move { Ok(ToolOutput::new(v)) })
            .build()
    }

    fn duplex(name: &str) -> ToolDefinition {
        build(tool(name).capabilities(Capabilities {
            duplex: true,
            ..Capabilities::default()
        }))
    }

    #[test]
    fn a_surface_for_a_model_hides_tools_only_an_app_may_call() {
        use super::super::UiVisibility;
        let app_only = build(
            tool("board.move")
                .ui("ui://notes/board")
                .ui_visibility([UiVisibility::App]),
        );
        let both = build(tool("board.show").ui("ui://notes/board"));
        let model = SurfaceProfile::new().for_model(true);
        assert_eq!(
            model.exposure(&app_only),
            Exposure::Hidden(HiddenReason::AppOnly)
        );
        assert_eq!(model.exposure(&both), Exposure::Listed);
        assert_eq!(SurfaceProfile::new().exposure(&app_only), Exposure::Listed);
    }

    #[test]
    fn the_open_surface_lists_every_tool_but_duplex_ones() {
        let open = SurfaceProfile::new();
        assert_eq!(open.exposure(&build(tool("a"))), Exposure::Listed);
        assert_eq!(
            open.exposure(&build(tool("w").approval(ApprovalTier::Exec))),
            Exposure::Listed
        );
        assert_eq!(
            open.exposure(&duplex("d")),
            Exposure::Hidden(HiddenReason::Duplex)
        );
        assert_eq!(
            open.carries_duplex(true).exposure(&duplex("d")),
            Exposure::Listed
        );
    }

    #[test]
    fn the_checks_run_in_order_and_the_first_gives_the_reason() {
        let refuse_all = |_: &ToolDefinition| false;
        let allowed = HashSet::new();
        let strict = SurfaceProfile::new()
            .filter(Some(&refuse_all))
            .write_tools(WriteTools::AllowListed(&allowed))
            .only_always_visible(true);
        assert_eq!(
            strict.exposure(&duplex("d")),
            Exposure::Hidden(HiddenReason::Duplex)
        );
        let writer = build(tool("w").approval(ApprovalTier::Write));
        assert_eq!(
            strict.exposure(&writer),
            Exposure::Hidden(HiddenReason::Filtered)
        );
        assert_eq!(
            strict.filter(None).exposure(&writer),
            Exposure::Hidden(HiddenReason::WriteTool)
        );
        assert_eq!(
            strict.filter(None).exposure(&build(tool("r"))),
            Exposure::Unlisted
        );
    }

    #[test]
    fn write_tools_pass_the_allow_list_by_registry_or_surface_name() {
        let writer = build(tool("w").approval(ApprovalTier::Write).mcp(McpHints {
            mcp_name: Some("w_mcp".into()),
            ..McpHints::default()
        }));
        let allow = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
        let by_name: HashSet<String> = allow(&["w"]);
        let by_mcp_name: HashSet<String> = allow(&["w_mcp"]);
        let mcp = SurfaceProfile::new().hints(SurfaceHints::Mcp);
        for allowed in [&by_name, &by_mcp_name] {
            let profile = mcp.write_tools(WriteTools::AllowListed(allowed));
            assert_eq!(profile.exposure(&writer), Exposure::Listed);
        }
        // The MCP name counts only where the MCP hints speak.
        let other = SurfaceProfile::new().write_tools(WriteTools::AllowListed(&by_mcp_name));
        assert_eq!(
            other.exposure(&writer),
            Exposure::Hidden(HiddenReason::WriteTool)
        );
        // A read tool needs no allow-list.
        let none = HashSet::new();
        let profile = mcp.write_tools(WriteTools::AllowListed(&none));
        assert_eq!(profile.exposure(&build(tool("r"))), Exposure::Listed);
    }

    #[test]
    fn visibility_comes_from_the_surface_hint_else_the_tool() {
        let on_demand = build(tool("o"));
        let always = build(tool("a").visibility(Visibility::Always));
        let pi_always = build(tool("p").pi(PiHints {
            visibility: Some(Visibility::Always),
            ..PiHints::default()
        }));
        let mcp_on_demand = build(tool("m").visibility(Visibility::Always).mcp(McpHints {
            visibility: Some(Visibility::OnDemand),
            ..McpHints::default()
        }));
        let listed = |hints: SurfaceHints, def: &ToolDefinition| {
            SurfaceProfile::new()
                .hints(hints)
                .only_always_visible(true)
                .exposure(def)
        };
        assert_eq!(listed(SurfaceHints::Pi, &on_demand), Exposure::Unlisted);
        assert_eq!(listed(SurfaceHints::Pi, &always), Exposure::Listed);
        assert_eq!(listed(SurfaceHints::Pi, &pi_always), Exposure::Listed);
        assert_eq!(listed(SurfaceHints::Mcp, &pi_always), Exposure::Unlisted);
        assert_eq!(
            listed(SurfaceHints::Mcp, &mcp_on_demand),
            Exposure::Unlisted
        );
        assert_eq!(listed(SurfaceHints::Pi, &mcp_on_demand), Exposure::Listed);
        assert_eq!(listed(SurfaceHints::None, &pi_always), Exposure::Unlisted);
        // Without the option, visibility does not matter.
        assert_eq!(SurfaceProfile::new().exposure(&on_demand), Exposure::Listed);
    }

    #[test]
    fn write_tools_are_classified_by_capabilities_and_approval() {
        assert!(!build(tool("r")).is_write_tool());
        let fs = build(tool("f").capabilities(Capabilities {
            writes_fs: true,
            ..Capabilities::default()
        }));
        assert!(fs.is_write_tool());
        let network = build(tool("n").capabilities(Capabilities {
            network: true,
            ..Capabilities::default()
        }));
        assert!(network.is_write_tool());
        assert!(build(tool("w").approval(ApprovalTier::Write)).is_write_tool());
        assert!(build(tool("d").approval_fn(|_| Ok(ApprovalTier::Read.into()))).is_write_tool());
        let undeclared = build(ToolDefinition::builder("u").description("x"));
        assert!(undeclared.is_write_tool());
    }

    #[test]
    fn exposure_says_listed_and_hidden() {
        assert!(Exposure::Listed.is_listed());
        assert!(!Exposure::Unlisted.is_listed() && !Exposure::Unlisted.is_hidden());
        assert!(Exposure::Hidden(HiddenReason::Filtered).is_hidden());
    }
}
