//! Tool names on surfaces that cannot carry every name the registry
//! allows: a reversible [`NameMap`] from registry names to surface names.
//!
//! Registry names are 1–128 characters of `A-Za-z0-9_.-` (MCP's rule).
//! Model providers are narrower — OpenAI, Anthropic and Gemini function
//! names allow no `.` and at most 64 characters — and so is Pi, which hands
//! its tools to those providers. Every surface maps the names it cannot
//! carry reversibly and refuses collisions with a clear error, by this one
//! rule:
//!
//! * a surface describes what it accepts with [`SurfaceNameRules`] (and,
//!   when a tool can ask for a name of its own there, how it does so);
//! * [`NameMap::build`] turns each registry name into a surface name
//!   (a character the surface refuses becomes `_`: `notes.search` →
//!   `notes_search`) and keeps both directions, so a call that comes back
//!   as `notes_search` runs `notes.search`; [`NameMap::build_with`] also
//!   takes the names tools ask for (Pi's `pi_name`);
//! * two tools that would share a surface name, or a name the surface
//!   cannot hold at all (too long), make the build fail with a
//!   [`SurfaceNameError`] naming both tools and what to do — never a
//!   silent overwrite.
//!
//! The model providers in [`providers`](crate::adapters::providers), the
//! rig adapter and Pi all map names here, so a name maps the same way
//! everywhere. (The rule for registry names themselves — what `#[tool]`
//! checks at compile time — is a different one: see
//! [`validate_tool_name`](crate::definition::validate_tool_name).)
//!
//! ```
//! use gonk_tools::adapters::names::{NameMap, SurfaceNameRules};
//!
//! let map = NameMap::build(&SurfaceNameRules::FUNCTION_NAME, ["notes.search", "notes.get"]).unwrap();
//! assert_eq!(map.surface_name("notes.search"), Some("notes_search"));
//! assert_eq!(map.tool_name("notes_search"), Some("notes.search"));
//!
//! let clash = NameMap::build(&SurfaceNameRules::FUNCTION_NAME, ["notes.search", "notes_search"]);
//! assert!(clash.unwrap_err().to_string().contains("both map to"));
//! ```

use std::borrow::Cow;
use std::collections::HashMap;

/// What names a surface accepts, and how a tool picks a name of its own
/// there. (Not the rule for registry names: that is
/// [`validate_tool_name`](crate::definition::validate_tool_name).)
#[derive(Clone, Copy, Debug)]
pub struct SurfaceNameRules {
    surface: &'static str,
    max_len: usize,
    allowed: fn(char) -> bool,
    rename_hint: Option<&'static str>,
}

fn function_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

impl SurfaceNameRules {
    /// `^[A-Za-z0-9_-]{1,64}$`: the function-name rule shared by OpenAI,
    /// Anthropic and Gemini (see [`providers`](crate::adapters::providers) for the
    /// documents it comes from).
    pub const FUNCTION_NAME: SurfaceNameRules =
        SurfaceNameRules::new("function", 64, function_name_char);

    /// Rules for a surface called `surface` (used in error messages), whose
    /// names have at most `max_len` characters, each one `allowed`.
    ///
    /// Registry names always start with a letter, so a surface that needs a
    /// letter first needs no rule for it.
    pub const fn new(surface: &'static str, max_len: usize, allowed: fn(char) -> bool) -> Self {
        SurfaceNameRules {
            surface,
            max_len,
            allowed,
            rename_hint: None,
        }
    }

    /// The same rules under another surface label (`"OpenAI"`), for error
    /// messages.
    pub const fn for_surface(self, surface: &'static str) -> Self {
        SurfaceNameRules { surface, ..self }
    }

    /// The same rules on a surface where a tool can ask for a name of its
    /// own, set as `how` says — for Pi, `` `#[tool(pi(name = "..."))]` or
    /// `hints.pi.pi_name` `` — so that errors offer that fix.
    pub const fn with_rename_hint(self, how: &'static str) -> Self {
        SurfaceNameRules {
            rename_hint: Some(how),
            ..self
        }
    }

    /// The surface's label, as error messages show it.
    pub fn surface(&self) -> &'static str {
        self.surface
    }

    /// How a tool asks for a name of its own on the surface, if it can.
    pub fn rename_hint(&self) -> Option<&'static str> {
        self.rename_hint
    }

    /// `name` with every character the surface refuses replaced by `_`
    /// (borrowed when nothing changes).
    pub fn mangle<'a>(&self, name: &'a str) -> Cow<'a, str> {
        if name.chars().all(self.allowed) {
            Cow::Borrowed(name)
        } else {
            Cow::Owned(
                name.chars()
                    .map(|c| if (self.allowed)(c) { c } else { '_' })
                    .collect(),
            )
        }
    }

    /// The name `tool` gets on the surface, not yet checked: the name it
    /// asked for (`requested`) as it is, else its registry name
    /// [mangled](Self::mangle).
    pub fn surface_name<'a>(&self, tool: &'a str, requested: Option<&'a str>) -> Cow<'a, str> {
        match requested {
            Some(name) => Cow::Borrowed(name),
            None => self.mangle(tool),
        }
    }

    /// Why the surface cannot carry `name` as it is, if it cannot.
    pub fn check(&self, name: &str) -> Result<(), String> {
        let len = name.chars().count();
        if len == 0 {
            return Err("the name is empty".into());
        }
        if len > self.max_len {
            return Err(format!(
                "`{name}` is {len} characters long; {} names hold at most {}",
                self.surface, self.max_len
            ));
        }
        if let Some(bad) = name.chars().find(|c| !(self.allowed)(*c)) {
            return Err(format!(
                "`{name}` contains `{bad}`, which {} names cannot hold",
                self.surface
            ));
        }
        Ok(())
    }
}

/// Why a [`NameMap`] could not be built. The message names the tools and
/// the fix: the surface's own way to rename a tool when it has one
/// ([`SurfaceNameRules::with_rename_hint`]), else renaming or leaving a
/// tool out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SurfaceNameError {
    /// Two tools would get the same surface name.
    #[error("tools `{first}` and `{second}` both map to the {surface} name `{name}`; {fix}, since a surface name must lead back to exactly one tool", fix = collision_fix(.surface, *.rename_hint))]
    Collision {
        /// The surface (`"OpenAI"`).
        surface: &'static str,
        /// The shared surface name.
        name: String,
        /// The tool that claimed it first.
        first: String,
        /// The tool that claimed it second.
        second: String,
        /// How a tool asks for another name on the surface, if it can
        /// ([`SurfaceNameRules::rename_hint`]).
        rename_hint: Option<&'static str>,
    },
    /// A tool's name cannot be carried even after mapping (or the name it
    /// asked for breaks the surface's rule).
    #[error("tool `{tool}` cannot be offered as a {surface} name: {reason}; {fix}", fix = unrepresentable_fix(.surface, *.rename_hint))]
    Unrepresentable {
        /// The surface.
        surface: &'static str,
        /// The registry name.
        tool: String,
        /// What is wrong.
        reason: String,
        /// How a tool asks for another name on the surface, if it can
        /// ([`SurfaceNameRules::rename_hint`]).
        rename_hint: Option<&'static str>,
    },
}

fn collision_fix(surface: &str, rename_hint: Option<&str>) -> String {
    match rename_hint {
        Some(how) => format!(
            "give one of them another {surface} name ({how}) or leave one out (e.g. with ToolRegistry::filter)"
        ),
        None => "rename one of them or leave one out (e.g. with ToolRegistry::filter)".to_owned(),
    }
}

fn unrepresentable_fix(surface: &str, rename_hint: Option<&str>) -> String {
    match rename_hint {
        Some(how) => format!(
            "give it another {surface} name ({how}) or leave it out (e.g. with ToolRegistry::filter)"
        ),
        None => "give it a shorter name or leave it out (e.g. with ToolRegistry::filter)".to_owned(),
    }
}

/// Registry names ↔ surface names, both ways, for one set of tools.
#[derive(Clone, Debug, Default)]
pub struct NameMap {
    to_surface: HashMap<String, String>,
    to_tool: HashMap<String, String>,
}

impl NameMap {
    /// Maps every name in `names` under `rules`.
    pub fn build<'a>(
        rules: &SurfaceNameRules,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<NameMap, SurfaceNameError> {
        NameMap::build_with(rules, names.into_iter().map(|name| (name, None)))
    }

    /// Maps every `(tool, requested)` pair in order: `requested` (a
    /// surface-name hint such as `pi_name`) is used as it is and must
    /// already satisfy `rules`; without one the tool's name is mapped
    /// ([`SurfaceNameRules::surface_name`]). The first tool whose name
    /// cannot be carried or is already taken is the error.
    pub fn build_with<'a>(
        rules: &SurfaceNameRules,
        entries: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> Result<NameMap, SurfaceNameError> {
        let entries = entries.into_iter();
        let mut map = NameMap {
            to_surface: HashMap::with_capacity(entries.size_hint().0),
            to_tool: HashMap::with_capacity(entries.size_hint().0),
        };
        for (tool, requested) in entries {
            let surface_name = rules.surface_name(tool, requested);
            rules
                .check(&surface_name)
                .map_err(|reason| SurfaceNameError::Unrepresentable {
                    surface: rules.surface,
                    tool: tool.to_owned(),
                    reason,
                    rename_hint: rules.rename_hint,
                })?;
            if let Some(first) = map.to_tool.get(surface_name.as_ref()) {
                return Err(SurfaceNameError::Collision {
                    surface: rules.surface,
                    name: surface_name.into_owned(),
                    first: first.clone(),
                    second: tool.to_owned(),
                    rename_hint: rules.rename_hint,
                });
            }
            let surface_name = surface_name.into_owned();
            map.to_tool.insert(surface_name.clone(), tool.to_owned());
            map.to_surface.insert(tool.to_owned(), surface_name);
        }
        Ok(map)
    }

    /// The surface name of registry tool `tool`.
    pub fn surface_name(&self, tool: &str) -> Option<&str> {
        self.to_surface.get(tool).map(String::as_str)
    }

    /// The registry tool behind surface name `surface_name`.
    pub fn tool_name(&self, surface_name: &str) -> Option<&str> {
        self.to_tool.get(surface_name).map(String::as_str)
    }

    /// How many tools are mapped.
    pub fn len(&self) -> usize {
        self.to_surface.len()
    }

    /// Whether no tool is mapped.
    pub fn is_empty(&self) -> bool {
        self.to_surface.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: SurfaceNameRules = SurfaceNameRules::FUNCTION_NAME.for_surface("OpenAI");

    #[test]
    fn names_the_surface_carries_are_kept() {
        let map = NameMap::build(&RULES, ["search", "notes-get", "a_b"]).unwrap();
        for name in ["search", "notes-get", "a_b"] {
            assert_eq!(map.surface_name(name), Some(name));
            assert_eq!(map.tool_name(name), Some(name));
        }
    }

    #[test]
    fn dots_map_to_underscores_and_back() {
        let map = NameMap::build(&RULES, ["notes.search", "a.b.c"]).unwrap();
        assert_eq!(map.surface_name("notes.search"), Some("notes_search"));
        assert_eq!(map.tool_name("notes_search"), Some("notes.search"));
        assert_eq!(map.tool_name("a_b_c"), Some("a.b.c"));
        assert_eq!(
            map.tool_name("notes.search"),
            None,
            "only surface names map back"
        );
        assert_eq!(map.len(), 2);
    }

    #[test]
    fn collisions_name_both_tools() {
        let error = NameMap::build(&RULES, ["notes.search", "notes_search"]).unwrap_err();
        assert_eq!(
            error,
            SurfaceNameError::Collision {
                surface: "OpenAI",
                name: "notes_search".into(),
                first: "notes.search".into(),
                second: "notes_search".into(),
                rename_hint: None,
            }
        );
        let message = error.to_string();
        assert!(
            message.contains(
                "`notes.search` and `notes_search` both map to the OpenAI name `notes_search`"
            ),
            "{message}"
        );
        assert!(message.contains("rename one of them"), "{message}");
    }

    #[test]
    fn names_too_long_for_the_surface_are_refused() {
        let long = format!("t{}", "x".repeat(64));
        let error = NameMap::build(&RULES, [long.as_str()]).unwrap_err();
        assert!(matches!(error, SurfaceNameError::Unrepresentable { .. }));
        assert!(error
            .to_string()
            .contains("65 characters long; OpenAI names hold at most 64"));
        let fits = "t".repeat(64);
        assert!(NameMap::build(&RULES, [fits.as_str()]).is_ok());
    }

    #[test]
    fn a_rename_hint_is_the_fix_errors_offer() {
        const PI: SurfaceNameRules = SurfaceNameRules::FUNCTION_NAME
            .for_surface("Pi")
            .with_rename_hint("`#[tool(pi(name = \"...\"))]`");
        let clash = NameMap::build(&PI, ["a.b", "a_b"]).unwrap_err();
        assert_eq!(
            clash.to_string(),
            "tools `a.b` and `a_b` both map to the Pi name `a_b`; give one of them another Pi name \
             (`#[tool(pi(name = \"...\"))]`) or leave one out (e.g. with ToolRegistry::filter), \
             since a surface name must lead back to exactly one tool"
        );
        let bad = NameMap::build_with(&PI, [("t", Some("bad.name"))]).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "tool `t` cannot be offered as a Pi name: `bad.name` contains `.`, which Pi names \
             cannot hold; give it another Pi name (`#[tool(pi(name = \"...\"))]`) or leave it out \
             (e.g. with ToolRegistry::filter)"
        );
        let plain = NameMap::build(&RULES, ["t".repeat(65).as_str()]).unwrap_err();
        assert!(
            plain.to_string().ends_with(
                "; give it a shorter name or leave it out (e.g. with ToolRegistry::filter)"
            ),
            "{plain}"
        );
    }

    #[test]
    fn the_surface_name_is_the_requested_one_else_the_mangled_one() {
        assert_eq!(RULES.surface_name("notes.search", None), "notes_search");
        assert_eq!(RULES.surface_name("notes.search", Some("find")), "find");
        assert_eq!(RULES.surface_name("a.b", Some("c.d")), "c.d", "not mangled");
    }

    #[test]
    fn requested_names_are_checked_not_mapped() {
        let map = NameMap::build_with(&RULES, [("notes.search", Some("find"))]).unwrap();
        assert_eq!(map.tool_name("find"), Some("notes.search"));
        let error = NameMap::build_with(&RULES, [("a", Some("a.b"))]).unwrap_err();
        assert!(error.to_string().contains("contains `.`"), "{error}");
        let clash = NameMap::build_with(&RULES, [("a.b", None), ("c", Some("a_b"))]).unwrap_err();
        assert!(matches!(clash, SurfaceNameError::Collision { .. }));
    }
}
