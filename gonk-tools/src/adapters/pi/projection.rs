//! The projection of definitions to Pi's tool shape: one [`PiToolSpec`]
//! per tool (what `pi.registerTool` takes, minus `execute`), and the
//! [`PiCatalog`] of a whole registry — which tools Pi gets, under which
//! names, and which are skipped and why.

use std::borrow::Cow;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::PiOptions;
use crate::adapters::names::{NameMap, SurfaceNameError, SurfaceNameRules};
use crate::definition::{
    CapabilityStatus, Cost, Exposure, HiddenReason, Latency, SurfaceHints, ToolDefinition,
};
use crate::registry::ToolRegistry;

/// The names Pi registers: Pi hands its tools to model providers, most of
/// which accept only `[A-Za-z0-9_-]{1,64}`, so Pi takes their
/// function-name rule; a tool picks a Pi name of its own with
/// `#[tool(pi(name = "..."))]` or `hints.pi.pi_name`.
pub const PI_NAMES: SurfaceNameRules = SurfaceNameRules::FUNCTION_NAME
    .for_surface("Pi")
    .with_rename_hint("`#[tool(pi(name = \"...\"))]` or `hints.pi.pi_name`");

/// The name `def` has in Pi: its `pi_name` hint as it is, else its
/// registry name with every `.` mapped to `_` (`notes.search` →
/// `notes_search`), by [`PI_NAMES`]. [`PiCatalog::build`] checks it.
pub fn pi_name(def: &ToolDefinition) -> Cow<'_, str> {
    PI_NAMES.surface_name(&def.name, SurfaceHints::Pi.requested_name(def))
}

/// Why a duplex tool is not registered.
pub const SKIP_DUPLEX: &str = "duplex (not supported by Pi registerTool)";
/// Why a tool the host's filter excluded is not registered.
pub const SKIP_FILTERED: &str = "filtered by caller";
/// Why an on-demand tool is not registered under
/// [`PiOptions::only_always_visible`].
pub const SKIP_ON_DEMAND: &str = "on-demand (only always-visible tools are registered)";

/// A tool as `pi.registerTool` takes it, without `execute`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PiToolSpec {
    /// The Pi name (see [`pi_name`]).
    pub name: String,
    /// The registry name, shown to humans.
    pub label: String,
    /// What the model reads: the advertised description and the
    /// cost/latency sentence.
    pub description: String,
    /// The enforced input schema, always an object schema (a non-object
    /// schema is wrapped as `{value}`).
    pub parameters: Value,
}

/// A tool left out of Pi, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiSkipped {
    /// The registry name.
    pub name: String,
    /// Why it is not registered.
    pub reason: String,
}

/// One tool of a [`PiCatalog`].
#[derive(Clone, Debug)]
pub struct PiTool {
    /// What Pi registers.
    pub spec: PiToolSpec,
    /// The registry name calls are dispatched to.
    pub tool: String,
    /// Whether Pi's arguments arrive wrapped as `{value}`.
    pub(crate) wrapped: bool,
}

/// The projection of a registry: the tools Pi registers, in registration
/// order and under collision-free names, the ones it skips, and the
/// warnings met on the way.
#[derive(Clone, Debug, Default)]
pub struct PiCatalog {
    tools: Vec<PiTool>,
    /// Pi names ↔ registry names of the registered tools.
    names: NameMap,
    /// A registered tool's registry name → its index in `tools`.
    by_tool: HashMap<String, usize>,
    skipped: Vec<PiSkipped>,
    warnings: Vec<String>,
}

impl PiCatalog {
    /// Projects every tool of `registry` that `options` exposes. Fails when
    /// two exposed tools map to one Pi name or a Pi name breaks the
    /// providers' rule ([`PI_NAMES`]): the error names the tools and how to
    /// fix it.
    pub fn build(
        registry: &ToolRegistry,
        options: &PiOptions,
    ) -> Result<PiCatalog, SurfaceNameError> {
        let mut catalog = PiCatalog::default();
        let profile = options.profile();
        let mut exposed = Vec::new();
        for def in registry.list() {
            match skip_reason(profile.exposure(&def)) {
                Some(reason) => catalog.skipped.push(PiSkipped {
                    name: def.name.clone(),
                    reason: reason.to_owned(),
                }),
                None => exposed.push(def),
            }
        }
        catalog.names = NameMap::build_with(
            &PI_NAMES,
            exposed
                .iter()
                .map(|def| (def.name.as_str(), SurfaceHints::Pi.requested_name(def))),
        )?;
        for def in exposed {
            let (description, warning) = describe(&def);
            catalog.warnings.extend(warning);
            let (parameters, wrapped) = parameters(&def);
            catalog
                .by_tool
                .insert(def.name.clone(), catalog.tools.len());
            catalog.tools.push(PiTool {
                spec: PiToolSpec {
                    name: pi_name(&def).into_owned(),
                    label: def.name.clone(),
                    description,
                    parameters,
                },
                tool: def.name.clone(),
                wrapped,
            });
        }
        Ok(catalog)
    }

    /// The tools Pi registers, in registration order.
    pub fn tools(&self) -> &[PiTool] {
        &self.tools
    }

    /// The Pi names registered, in order.
    pub fn registered(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.spec.name.as_str()).collect()
    }

    /// The tools left out, with the reason.
    pub fn skipped(&self) -> &[PiSkipped] {
        &self.skipped
    }

    /// Warnings met while projecting (a capability probe that panicked).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The tool Pi knows as `pi_name`.
    pub fn resolve(&self, pi_name: &str) -> Option<&PiTool> {
        let tool = self.names.tool_name(pi_name)?;
        self.by_tool.get(tool).map(|&i| &self.tools[i])
    }
}

/// Why Pi does not register a tool the exposure rule does not list: Pi has
/// no on-demand discovery, so an unlisted tool could never be called.
fn skip_reason(exposure: Exposure) -> Option<&'static str> {
    match exposure {
        Exposure::Listed => None,
        Exposure::Unlisted => Some(SKIP_ON_DEMAND),
        Exposure::Hidden(HiddenReason::Duplex) => Some(SKIP_DUPLEX),
        // Pi withholds no write tools: only the host's filter hides the rest.
        Exposure::Hidden(_) => Some(SKIP_FILTERED),
    }
}

/// The projection of one definition. A warning met on the way (see
/// [`PiCatalog::warnings`]) is logged with `tracing`.
pub fn project_tool(def: &ToolDefinition) -> PiToolSpec {
    let (description, warning) = describe(def);
    if let Some(warning) = warning {
        tracing::warn!(target: "gonk_tools::pi", tool = %def.name, "{warning}");
    }
    PiToolSpec {
        name: pi_name(def).into_owned(),
        label: def.name.clone(),
        description,
        parameters: parameters(def).0,
    }
}

/// The enforced input schema as an object schema, and whether it had to be
/// wrapped as `{value}` (an open schema is an open object, not wrapped).
fn parameters(def: &ToolDefinition) -> (Value, bool) {
    let (schema, wrapped) = crate::schema::object_input_schema(def.effective_input_schema());
    (schema.into_owned(), wrapped)
}

/// The description Pi shows the model, and a warning when the capability
/// probe panicked.
fn describe(def: &ToolDefinition) -> (String, Option<String>) {
    let (base, warning) = advertised(def);
    (with_cost_and_latency(base, def.cost, def.latency), warning)
}

/// The degraded description when the probe says so and one exists; the
/// full description otherwise — also when the probe panics, which earns
/// one warning.
fn advertised(def: &ToolDefinition) -> (&str, Option<String>) {
    let Some(probe) = &def.capability_for else {
        return (&def.description, None);
    };
    match std::panic::catch_unwind(AssertUnwindSafe(|| probe())) {
        Ok(CapabilityStatus::Degraded) => (
            def.degraded_description
                .as_deref()
                .unwrap_or(&def.description),
            None,
        ),
        Ok(CapabilityStatus::Available) => (&def.description, None),
        Err(_) => (
            &def.description,
            Some(format!(
                "tool {}: capability_for panicked; Pi gets the full description",
                def.name
            )),
        ),
    }
}

fn cost_word(cost: Cost) -> &'static str {
    match cost {
        Cost::Low => "low",
        Cost::Moderate => "moderate",
        Cost::High => "high",
    }
}

fn latency_word(latency: Latency) -> &'static str {
    match latency {
        Latency::Instant => "instant",
        Latency::Seconds => "seconds",
        Latency::Minutes => "minutes",
    }
}

/// `text`, then `Cost: c. Latency: l.` (either part alone when only one is
/// set; `text` unchanged when neither is).
fn with_cost_and_latency(text: &str, cost: Option<Cost>, latency: Option<Latency>) -> String {
    let parts: Vec<String> = cost
        .map(|c| format!("Cost: {}", cost_word(c)))
        .into_iter()
        .chain(latency.map(|l| format!("Latency: {}", latency_word(l))))
        .collect();
    if parts.is_empty() {
        return text.to_owned();
    }
    let text = text.trim_end();
    let separator = match text {
        "" => "",
        t if t.ends_with('.') => " ",
        _ => ". ",
    };
    format!("{text}{separator}{}.", parts.join(". "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{Capabilities, PiHints, ToolBuilder, Visibility};
    use crate::prelude::*;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Search {
        /// Free text.
        #[schemars(length(min = 1))]
        query: String,
        #[schemars(range(min = 1, max = 20))]
        limit: Option<u32>,
    }

    fn tool(name: &str) -> ToolBuilder {
        ToolDefinition::builder(name)
            .description("Base description.")
            .approval(ApprovalTier::Read)
            .handler(|_: Search, _| async move { Ok::<_, ToolError>(0) })
    }

    fn registry(defs: Vec<ToolDefinition>) -> ToolRegistry {
        let registry = ToolRegistry::new();
        registry.register_all(defs).unwrap();
        registry
    }

    #[test]
    fn the_description_ends_with_every_cost_and_latency_pair() {
        let costs = [
            (Cost::Low, "low"),
            (Cost::Moderate, "moderate"),
            (Cost::High, "high"),
        ];
        let latencies = [
            (Latency::Instant, "instant"),
            (Latency::Seconds, "seconds"),
            (Latency::Minutes, "minutes"),
        ];
        for (cost, c) in costs {
            for (latency, l) in latencies {
                let with_period = tool("t").cost(cost).latency(latency).build();
                assert_eq!(
                    project_tool(&with_period).description,
                    format!("Base description. Cost: {c}. Latency: {l}.")
                );
                let without = tool("t")
                    .description("No trailing period  \n")
                    .cost(cost)
                    .latency(latency)
                    .build();
                assert_eq!(
                    project_tool(&without).description,
                    format!("No trailing period. Cost: {c}. Latency: {l}.")
                );
            }
            let cost_only = tool("t").cost(cost).build();
            assert_eq!(
                project_tool(&cost_only).description,
                format!("Base description. Cost: {c}.")
            );
        }
        for (latency, l) in latencies {
            let latency_only = tool("t").description("Slow").latency(latency).build();
            assert_eq!(
                project_tool(&latency_only).description,
                format!("Slow. Latency: {l}.")
            );
        }
        let neither = tool("t").description("Left as it is  ").build();
        assert_eq!(project_tool(&neither).description, "Left as it is  ");
    }

    #[test]
    fn the_issue_examples_hold() {
        let high = tool("t").cost(Cost::High).latency(Latency::Minutes).build();
        assert_eq!(
            project_tool(&high).description,
            "Base description. Cost: high. Latency: minutes."
        );
        let low = tool("t")
            .description("No trailing period")
            .cost(Cost::Low)
            .latency(Latency::Instant)
            .build();
        assert_eq!(
            project_tool(&low).description,
            "No trailing period. Cost: low. Latency: instant."
        );
    }

    #[test]
    fn a_degraded_capability_advertises_the_degraded_text_when_there_is_one() {
        let degraded = tool("t")
            .capability_for(|| CapabilityStatus::Degraded)
            .degraded_description("Works offline only")
            .cost(Cost::Low)
            .build();
        assert_eq!(
            project_tool(&degraded).description,
            "Works offline only. Cost: low."
        );
        let available = tool("t")
            .capability_for(|| CapabilityStatus::Available)
            .degraded_description("Works offline only")
            .build();
        assert_eq!(project_tool(&available).description, "Base description.");
        let no_text = tool("t")
            .capability_for(|| CapabilityStatus::Degraded)
            .build();
        assert_eq!(project_tool(&no_text).description, "Base description.");
    }

    #[test]
    fn a_panicking_probe_gives_the_full_description_and_one_warning() {
        let panicking = tool("probe.panics")
            .capability_for(|| panic!("probe failed"))
            .degraded_description("Degraded")
            .latency(Latency::Seconds)
            .build();
        let catalog = PiCatalog::build(
            &registry(vec![panicking, tool("quiet").build()]),
            &PiOptions::new(),
        )
        .unwrap();
        assert_eq!(
            catalog.tools()[0].spec.description,
            "Base description. Latency: seconds."
        );
        assert_eq!(catalog.warnings().len(), 1, "{:?}", catalog.warnings());
        let warning = &catalog.warnings()[0];
        assert!(warning.contains("probe.panics"), "{warning}");
        assert!(warning.contains("capability_for"), "{warning}");
    }

    #[test]
    fn the_pi_hint_names_the_tool_and_the_label_is_the_tool_name() {
        let hinted = tool("notes.search")
            .pi(PiHints {
                pi_name: Some("search_notes".into()),
                ..PiHints::default()
            })
            .build();
        let spec = project_tool(&hinted);
        assert_eq!(spec.name, "search_notes");
        assert_eq!(spec.label, "notes.search");
        let mapped = project_tool(&tool("notes.search").build());
        assert_eq!(mapped.name, "notes_search");
        assert_eq!(mapped.label, "notes.search");
    }

    #[test]
    fn parameters_are_the_enforced_schema() {
        let def = tool("t").build();
        assert_eq!(project_tool(&def).parameters, *def.effective_input_schema());
        assert_eq!(
            project_tool(&def).parameters["properties"]["query"]["minLength"],
            1
        );
        let overridden = tool("o")
            .input_json_schema(json!({"type": "object", "properties": {"x": {"type": "integer"}}}))
            .build();
        assert_eq!(
            project_tool(&overridden).parameters,
            json!({"type": "object", "properties": {"x": {"type": "integer"}}})
        );
        let scalar = tool("s")
            .input_json_schema(json!({"type": "integer"}))
            .build();
        assert_eq!(
            project_tool(&scalar).parameters,
            json!({"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"], "additionalProperties": false})
        );
    }

    #[test]
    fn duplex_filtered_and_on_demand_tools_are_skipped_with_a_reason() {
        let duplex = tool("talk")
            .capabilities(Capabilities {
                duplex: true,
                ..Capabilities::default()
            })
            .build();
        let always = tool("always").visibility(Visibility::Always).build();
        let pi_always = tool("pi.always")
            .pi(PiHints {
                visibility: Some(Visibility::Always),
                ..PiHints::default()
            })
            .build();
        let registry = registry(vec![
            tool("a.one").build(),
            duplex,
            tool("secret").build(),
            always,
            pi_always,
        ]);
        let options = PiOptions::new().filter(|def| def.name != "secret");
        let catalog = PiCatalog::build(&registry, &options).unwrap();
        assert_eq!(catalog.registered(), ["a_one", "always", "pi_always"]);
        assert_eq!(
            catalog.skipped(),
            [
                PiSkipped {
                    name: "talk".into(),
                    reason: SKIP_DUPLEX.into()
                },
                PiSkipped {
                    name: "secret".into(),
                    reason: SKIP_FILTERED.into()
                },
            ]
        );
        assert_eq!(SKIP_DUPLEX, "duplex (not supported by Pi registerTool)");
        assert_eq!(SKIP_FILTERED, "filtered by caller");

        let only_always = PiCatalog::build(&registry, &options.only_always_visible(true)).unwrap();
        assert_eq!(only_always.registered(), ["always", "pi_always"]);
        assert_eq!(
            only_always.skipped()[0],
            PiSkipped {
                name: "a.one".into(),
                reason: SKIP_ON_DEMAND.into()
            }
        );
        assert_eq!(only_always.resolve("pi_always").unwrap().tool, "pi.always");
        assert!(only_always.resolve("a_one").is_none());
    }

    #[test]
    fn colliding_and_invalid_pi_names_are_refused_with_the_fix() {
        let error = PiCatalog::build(
            &registry(vec![
                tool("notes.search").build(),
                tool("notes_search").build(),
            ]),
            &PiOptions::new(),
        )
        .unwrap_err();
        assert_eq!(
            error,
            SurfaceNameError::Collision {
                surface: "Pi",
                name: "notes_search".into(),
                first: "notes.search".into(),
                second: "notes_search".into(),
                rename_hint: PI_NAMES.rename_hint(),
            }
        );
        let message = error.to_string();
        assert!(
            message.contains(
                "tools `notes.search` and `notes_search` both map to the Pi name `notes_search`"
            ),
            "{message}"
        );
        assert!(message.contains("pi(name ="), "{message}");
        assert!(message.contains("hints.pi.pi_name"), "{message}");

        // A Pi name resolves the collision; the mapping stays reversible.
        let renamed = tool("notes_search")
            .pi(PiHints {
                pi_name: Some("notes_search_v2".into()),
                ..PiHints::default()
            })
            .build();
        let catalog = PiCatalog::build(
            &registry(vec![tool("notes.search").build(), renamed]),
            &PiOptions::new(),
        )
        .unwrap();
        assert_eq!(
            catalog.resolve("notes_search").unwrap().tool,
            "notes.search"
        );
        assert_eq!(
            catalog.resolve("notes_search_v2").unwrap().tool,
            "notes_search"
        );

        let dotted_hint = tool("t")
            .pi(PiHints {
                pi_name: Some("bad.name".into()),
                ..PiHints::default()
            })
            .build();
        let error = PiCatalog::build(&registry(vec![dotted_hint]), &PiOptions::new()).unwrap_err();
        assert!(
            matches!(error, SurfaceNameError::Unrepresentable { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("contains `.`"), "{error}");
        assert!(error.to_string().contains("pi(name ="), "{error}");
        let long = tool(&format!("a{}", ".b".repeat(40))).build();
        let error = PiCatalog::build(&registry(vec![long]), &PiOptions::new()).unwrap_err();
        assert!(
            error.to_string().contains("Pi names hold at most 64"),
            "{error}"
        );
        let fits = tool(&format!("a{}", ".b".repeat(31))).build();
        assert!(PiCatalog::build(&registry(vec![fits]), &PiOptions::new()).is_ok());
    }

    #[test]
    fn dots_map_to_underscores_unless_a_pi_name_is_given() {
        let named = |name: &str, pi: Option<&str>| {
            tool(name)
                .pi(PiHints {
                    pi_name: pi.map(str::to_owned),
                    ..PiHints::default()
                })
                .build()
        };
        assert_eq!(pi_name(&named("notes.search", None)), "notes_search");
        assert_eq!(pi_name(&named("a.b.c-d", None)), "a_b_c-d");
        assert_eq!(pi_name(&named("plain_name", None)), "plain_name");
        assert_eq!(pi_name(&named("notes.search", Some("find"))), "find");
    }

    #[test]
    fn pi_names_follow_the_providers_rule() {
        assert!(PI_NAMES.check("notes_search-2").is_ok());
        assert!(PI_NAMES.check("").is_err());
        assert!(PI_NAMES.check("a.b").unwrap_err().contains("contains `.`"));
        assert!(PI_NAMES.check(&"x".repeat(64)).is_ok());
        assert!(PI_NAMES
            .check(&"x".repeat(65))
            .unwrap_err()
            .contains("at most 64"));
    }
}
