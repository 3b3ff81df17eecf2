//! `tools/list`: which tools a session sees, and the MCP projection of one
//! definition (name, description, schemas, annotations).

use std::sync::Arc;

use rmcp::model::{JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::adapters::mcp::{McpServerOptions, WriteToolPolicy};
use crate::definition::{SurfaceHints, SurfaceProfile, ToolDefinition, WriteTools};

/// `_meta` key of a listed tool whose input is wrapped as `{value}`, so
/// the client transport wraps the input too.
pub(crate) const WRAPPED_INPUT_META_KEY: &str = "gonk-tools/wrappedInput";

/// Whether a tool counts as a write tool for the [`WriteToolPolicy`]: it
/// writes the file system or uses the network, its approval is decided per
/// call, or its static tier is `write` or `exec` (a tool without an approval
/// declaration resolves to `exec`). The rule is the core's
/// ([`ToolMetadata::is_write_tool`](crate::definition::ToolMetadata::is_write_tool)).
pub fn is_write_tool(def: &ToolDefinition) -> bool {
    def.is_write_tool()
}

/// The name a tool has over MCP: the `mcp_name` hint, else its name.
pub(crate) fn mcp_name(def: &ToolDefinition) -> &str {
    def.hints.mcp.mcp_name.as_deref().unwrap_or(&def.name)
}

/// What a session says about itself to the exposure rule: duplex tools
/// hidden, the host's filter, write tools withheld unless allow-listed (by
/// registry or MCP name) under [`WriteToolPolicy::RequireAllowlist`], and
/// on-demand tools (by the `mcp` visibility hint, else the tool's)
/// callable but unlisted with
/// [`McpServerOptions::only_always_visible`].
pub(crate) fn profile(options: &McpServerOptions, policy: WriteToolPolicy) -> SurfaceProfile<'_> {
    let write_tools = match policy {
        WriteToolPolicy::RequireAllowlist => WriteTools::AllowListed(&options.allow_write_tools),
        WriteToolPolicy::Warn | WriteToolPolicy::Permissive => WriteTools::Shown,
    };
    SurfaceProfile::new()
        .hints(SurfaceHints::Mcp)
        .filter(options.filter.as_deref())
        .write_tools(write_tools)
        .only_always_visible(options.only_always_visible)
}

pub(crate) use crate::schema::is_object_schema;

/// The advertised input schema and whether it wraps the tool's own schema
/// as `{value}` ([`crate::schema::object_input_schema`]: an open schema is
/// an open object, its arguments passed through).
pub(crate) fn input_schema(def: &ToolDefinition) -> (JsonObject, bool) {
    let (schema, wrapped) = crate::schema::object_input_schema(def.effective_input_schema());
    (schema.as_object().cloned().unwrap_or_default(), wrapped)
}

/// Whether calls of `def` arrive wrapped as `{value}` (decided when the
/// definition was built).
pub(crate) fn input_is_wrapped(def: &ToolDefinition) -> bool {
    def.input_is_wrapped()
}

fn annotations(def: &ToolDefinition) -> Option<ToolAnnotations> {
    let hints = def.hints.mcp.annotations;
    if hints.read_only.is_none()
        && hints.destructive.is_none()
        && hints.idempotent.is_none()
        && hints.open_world.is_none()
    {
        return None;
    }
    Some(ToolAnnotations::from_raw(
        None,
        hints.read_only,
        hints.destructive,
        hints.idempotent,
        hints.open_world,
    ))
}

/// Whether `tools/list` advertises the tool's output schema (only object
/// schemas: only object data becomes `structuredContent`).
pub(crate) fn advertises_output_schema(def: &ToolDefinition) -> bool {
    def.output_schema.as_ref().is_some_and(is_object_schema)
}

/// The MCP projection of one definition: its MCP name, advertised
/// description, object input schema (a non-object schema wrapped as
/// `{value}`), its output schema when that is an object schema (MCP
/// clients expect `structuredContent` to match it, and only object data
/// becomes `structuredContent`), its annotations (absent when no
/// annotation hint is set), and in `_meta` the MCP App it links
/// ([`crate::app::tool_meta`]).
pub fn project_tool(def: &ToolDefinition) -> Tool {
    let (input, wrapped) = input_schema(def);
    let mut tool = Tool::new_with_raw(
        mcp_name(def).to_owned(),
        Some(def.advertised_description().to_owned().into()),
        Arc::new(input),
    );
    // The linked app, for every client: one without app support ignores it.
    let mut meta = def.ui().map(crate::app::tool_meta);
    if wrapped {
        meta.get_or_insert_with(serde_json::Map::new)
            .insert(WRAPPED_INPUT_META_KEY.to_owned(), Value::Bool(true));
    }
    if let Some(meta) = meta {
        tool = tool.with_meta(MetaObject(meta));
    }
    if let Some(Value::Object(output)) = &def.output_schema {
        if advertises_output_schema(def) {
            tool = tool.with_raw_output_schema(Arc::new(output.clone()));
        }
    }
    if let Some(annotations) = annotations(def) {
        tool = tool.with_annotations(annotations);
    }
    tool
}

/// The definition a session may call under the MCP name `name`.
pub(crate) fn resolve(
    registry: &crate::registry::ToolRegistry,
    name: &str,
    options: &McpServerOptions,
    policy: WriteToolPolicy,
) -> Option<ToolDefinition> {
    let direct = registry.get(name).filter(|def| mcp_name(def) == name);
    let def = direct
        .or_else(|| {
            registry
                .list()
                .into_iter()
                .find(|def| mcp_name(def) == name)
        })
        // A name under a source whose server is unreachable: its
        // placeholder says so (see `ToolRegistry::hold_source`).
        .or_else(|| registry.held_placeholder(name))?;
    (!profile(options, policy).exposure(&def).is_hidden()).then_some(def)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::{Capabilities, Exposure, HiddenReason, McpAnnotations, McpHints};
    use crate::prelude::*;
    use serde_json::json;

    async fn echo(v: Value, _ctx: ToolContext) -> Result<ToolOutput<Value>, ToolError> {
        Ok(ToolOutput::new(v))
    }

    fn tool(name: &str) -> crate::definition::ToolBuilder {
        ToolDefinition::builder(name)
            .description("A tool.")
            .approval(ApprovalTier::Read)
    }

    #[test]
    fn write_tools_are_classified_by_capabilities_and_approval() {
        let read = tool("a").raw_handler(echo).build();
        assert!(!is_write_tool(&read));
        let fs = tool("b")
            .capabilities(Capabilities {
                writes_fs: true,
                ..Default::default()
            })
            .raw_handler(echo)
            .build();
        assert!(is_write_tool(&fs));
        let tier = tool("c")
            .approval(ApprovalTier::Write)
            .raw_handler(echo)
            .build();
        assert!(is_write_tool(&tier));
        let dynamic = tool("d")
            .approval_fn(|_| Ok(ApprovalTier::Read.into()))
            .raw_handler(echo)
            .build();
        assert!(is_write_tool(&dynamic));
        let undeclared = ToolDefinition::builder("e")
            .description("x")
            .raw_handler(echo)
            .build();
        assert!(is_write_tool(&undeclared));
    }

    #[test]
    fn annotations_are_absent_unless_a_hint_is_set() {
        let plain = tool("a").raw_handler(echo).build();
        let projected = serde_json::to_value(project_tool(&plain)).unwrap();
        assert!(projected.get("annotations").is_none());
        let hinted = tool("b")
            .mcp(McpHints {
                annotations: McpAnnotations {
                    read_only: Some(true),
                    ..Default::default()
                },
                ..Default::default()
            })
            .raw_handler(echo)
            .build();
        let projected = serde_json::to_value(project_tool(&hinted)).unwrap();
        assert_eq!(projected["annotations"], json!({"readOnlyHint": true}));
    }

    #[test]
    fn non_object_schemas_are_wrapped_as_value() {
        let def = tool("n")
            .input_json_schema(json!({"type": "integer"}))
            .raw_handler(echo)
            .build();
        let (schema, wrapped) = input_schema(&def);
        assert!(wrapped);
        assert_eq!(
            Value::Object(schema),
            json!({"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"], "additionalProperties": false})
        );
    }

    fn exposure(
        def: &ToolDefinition,
        options: &McpServerOptions,
        policy: WriteToolPolicy,
    ) -> Exposure {
        profile(options, policy).exposure(def)
    }

    #[test]
    fn exposure_applies_duplex_filter_policy_and_visibility() {
        let read = tool("r").raw_handler(echo).build();
        let write = tool("w")
            .approval(ApprovalTier::Write)
            .mcp(McpHints {
                mcp_name: Some("w_mcp".into()),
                ..Default::default()
            })
            .raw_handler(echo)
            .build();
        let duplex = tool("d")
            .capabilities(Capabilities {
                duplex: true,
                ..Default::default()
            })
            .raw_handler(echo)
            .build();
        let always = tool("a")
            .visibility(Visibility::Always)
            .raw_handler(echo)
            .build();
        let options = McpServerOptions::new("t", "1");
        let strict = WriteToolPolicy::RequireAllowlist;
        assert_eq!(
            exposure(&duplex, &options, WriteToolPolicy::Permissive),
            Exposure::Hidden(HiddenReason::Duplex)
        );
        assert_eq!(exposure(&read, &options, strict), Exposure::Listed);
        assert_eq!(
            exposure(&write, &options, strict),
            Exposure::Hidden(HiddenReason::WriteTool)
        );
        assert_eq!(
            exposure(&write, &options, WriteToolPolicy::Warn),
            Exposure::Listed
        );
        let allowed = options.clone().allow_write_tools(["w_mcp"]);
        assert_eq!(exposure(&write, &allowed, strict), Exposure::Listed);
        let filtered = options.clone().filter(|def| def.name != "r");
        assert_eq!(
            exposure(&read, &filtered, strict),
            Exposure::Hidden(HiddenReason::Filtered)
        );
        let only_always = options.only_always_visible(true);
        assert_eq!(exposure(&read, &only_always, strict), Exposure::Unlisted);
        assert_eq!(exposure(&always, &only_always, strict), Exposure::Listed);
    }

    #[test]
    fn calls_resolve_by_mcp_name_and_never_to_hidden_tools() {
        let registry = ToolRegistry::new();
        registry
            .register_all([
                tool("plain").raw_handler(echo).build(),
                tool("renamed")
                    .mcp(McpHints {
                        mcp_name: Some("renamed_for_mcp".into()),
                        ..Default::default()
                    })
                    .raw_handler(echo)
                    .build(),
                tool("writer")
                    .approval(ApprovalTier::Write)
                    .raw_handler(echo)
                    .build(),
            ])
            .unwrap();
        let options = McpServerOptions::new("t", "1");
        let strict = WriteToolPolicy::RequireAllowlist;
        let name = |n: &str| resolve(&registry, n, &options, strict).map(|d| d.name.clone());
        assert_eq!(name("plain").as_deref(), Some("plain"));
        assert_eq!(name("renamed_for_mcp").as_deref(), Some("renamed"));
        assert_eq!(
            name("renamed"),
            None,
            "the registry name is not the MCP name"
        );
        assert_eq!(name("writer"), None, "withheld write tool");
    }
}
