//! [`ToolTransform`]: a new tool made from an existing definition —
//! renamed, re-described, arguments renamed, hidden behind a fixed value,
//! given a default or a narrower schema, another approval tier — that
//! keeps the original's dispatch contract: a call is checked against the
//! new schema (by dispatch), mapped back to the original's arguments,
//! checked against the original's schema, and run by the original's
//! handler. [`TransformSet`] applies transforms to a catalog by name.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::{ApprovalTier, DefinitionInner, ErasedHandler, ToolDefinition};
use crate::error::{ErrorCode, ToolError};

/// What happens to one argument of the original tool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArgTransform {
    rename: Option<String>,
    hidden: bool,
    value: Option<Value>,
    description: Option<String>,
    schema: Option<Value>,
}

impl ArgTransform {
    /// No change yet.
    pub fn new() -> Self {
        ArgTransform::default()
    }

    /// Callers give it under `name` instead.
    pub fn rename(mut self, name: impl Into<String>) -> Self {
        self.rename = Some(name.into());
        self
    }

    /// Hidden: not in the new schema, and a caller who gives it anyway is
    /// refused (`INVALID_INPUT`); the original gets `value`.
    pub fn hide_with(mut self, value: Value) -> Self {
        self.hidden = true;
        self.value = Some(value);
        self
    }

    /// Hidden without a value: the original never gets it (it must not
    /// be required).
    pub fn hide(mut self) -> Self {
        self.hidden = true;
        self.value = None;
        self
    }

    /// Shown, with `value` as its default: advertised as the schema's
    /// `default`, and given to the original when the caller leaves it out.
    pub fn default_value(mut self, value: Value) -> Self {
        self.hidden = false;
        self.value = Some(value);
        self
    }

    /// Its description in the new schema.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Its schema in the new tool (e.g. a smaller `maximum`, an `enum`):
    /// a call is checked against it, then against the original's.
    pub fn schema(mut self, schema: Value) -> Self {
        self.schema = Some(schema);
        self
    }

    /// Whether the argument is hidden.
    pub fn is_hidden(&self) -> bool {
        self.hidden
    }
}

/// A change to one tool; [`apply`](Self::apply) makes the new definition.
///
/// ```
/// use gonk_tools::definition::{ArgTransform, ToolTransform};
/// use gonk_tools::prelude::*;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let search = ToolDefinition::builder("notes.search")
///     .description("Search notes.")
///     .input_json_schema(json!({"type": "object",
///         "properties": {"query": {"type": "string"}, "tenant": {"type": "string"}},
///         "required": ["query", "tenant"]}))
///     .raw_handler(|input, _| async move { Ok(ToolOutput::new(input)) })
///     .build();
/// let mine = ToolTransform::new()
///     .name("find")
///     .description("Find my notes.")
///     .argument("query", ArgTransform::new().rename("text"))
///     .argument("tenant", ArgTransform::new().hide_with(json!("acme")))
///     .apply(&search)?;
/// let registry = ToolRegistry::new();
/// registry.register(mine)?;
/// let out = collect_tool_outcome(registry.invoke("find", json!({"text": "milk"}), ToolContext::new()), |_| {}).await?;
/// assert_eq!(out.data, json!({"query": "milk", "tenant": "acme"}));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolTransform {
    name: Option<String>,
    description: Option<String>,
    approval: Option<ApprovalTier>,
    arguments: BTreeMap<String, ArgTransform>,
}

impl ToolTransform {
    /// No change yet.
    pub fn new() -> Self {
        ToolTransform::default()
    }

    /// The new tool's name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The new tool's description (what models read).
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// The new tool's approval tier.
    pub fn approval(mut self, tier: ApprovalTier) -> Self {
        self.approval = Some(tier);
        self
    }

    /// What happens to the original's argument `name`.
    pub fn argument(mut self, name: impl Into<String>, change: ArgTransform) -> Self {
        self.arguments.insert(name.into(), change);
        self
    }

    /// The new tool's name, if it is renamed.
    pub fn new_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The tool made from `original`, or why this transform does not fit
    /// it (an argument it does not have, a rename onto another argument,
    /// a required argument hidden without a value, an invalid name).
    pub fn apply(&self, original: &ToolDefinition) -> Result<ToolDefinition, String> {
        let name = self.name.clone().unwrap_or_else(|| original.name.clone());
        super::validate_tool_name(&name).map_err(|reason| {
            format!(
                "transform of {}: new name {name:?}: {reason}",
                original.name
            )
        })?;
        let fail = |what: String| format!("transform of {}: {what}", original.name);
        let schema = original.effective_input_schema().clone();
        let mut plan = Plan::default();
        let schema = if self.arguments.is_empty() {
            schema
        } else {
            self.new_schema(schema, &mut plan).map_err(fail)?
        };
        let mut meta = original.inner.meta.clone();
        meta.name = name.clone();
        if let Some(text) = &self.description {
            meta.description = text.clone();
            meta.degraded_description = None;
        }
        if let Some(tier) = self.approval {
            meta.approval = Some(tier.into());
        }
        meta.input_json_schema = Some(schema);
        let handler = original
            .inner
            .handler
            .clone()
            .map(|inner| wrap(original.clone(), Arc::new(plan), inner));
        let input_wrapped = crate::schema::wrap_non_object(meta.effective_input_schema()).is_some();
        let name: Arc<str> = Arc::from(name.as_str());
        Ok(ToolDefinition {
            inner: Arc::new(DefinitionInner {
                meta,
                root_stack: Arc::from([Arc::clone(&name)]),
                name,
                input_wrapped,
                handler,
                required_state: original.inner.required_state.clone(),
                hand_written_schema: true,
                compiled: OnceLock::new(),
                policy: OnceLock::new(),
                primitive: original.inner.primitive,
            }),
        })
    }

    /// The original's object schema with the argument changes, filling
    /// `plan` with how a call maps back.
    fn new_schema(&self, schema: Value, plan: &mut Plan) -> Result<Value, String> {
        let Value::Object(mut schema) = schema else {
            return Err("its input schema is not an object schema".to_owned());
        };
        let mut properties = match schema.remove("properties") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        let mut required: Vec<String> = crate::schema::required_names(&schema);
        let mut renamed = Map::new();
        for (arg, change) in &self.arguments {
            let Some(mut property) = properties.remove(arg) else {
                return Err(format!(
                    "it has no argument {arg:?} (it has: {})",
                    self.known(&properties, &renamed)
                ));
            };
            let was_required = required.contains(arg);
            required.retain(|r| r != arg);
            if change.hidden {
                if change.value.is_none() && was_required {
                    return Err(format!(
                        "argument {arg:?} is required, so hiding it needs a value (\"default\")"
                    ));
                }
                plan.hidden.push((arg.clone(), change.value.clone()));
                continue;
            }
            let shown = change.rename.clone().unwrap_or_else(|| arg.clone());
            if let Some(narrow) = &change.schema {
                property = narrow.clone();
            }
            if let Value::Object(map) = &mut property {
                if let Some(text) = &change.description {
                    map.insert("description".into(), Value::String(text.clone()));
                }
                if let Some(value) = &change.value {
                    map.insert("default".into(), value.clone());
                }
            }
            if let Some(value) = &change.value {
                plan.defaults.push((arg.clone(), value.clone()));
            }
            if was_required && change.value.is_none() {
                required.push(shown.clone());
            }
            if shown != *arg {
                plan.renames.push((shown.clone(), arg.clone()));
            }
            if renamed.insert(shown.clone(), property).is_some() {
                return Err(format!("two arguments would both be named {shown:?}"));
            }
        }
        for (shown, property) in renamed {
            if properties.contains_key(&shown) {
                return Err(format!(
                    "argument {shown:?} would be given twice (it is renamed onto an argument the tool has)"
                ));
            }
            properties.insert(shown, property);
        }
        schema.insert("properties".into(), Value::Object(properties));
        if required.is_empty() {
            schema.remove("required");
        } else {
            schema.insert(
                "required".into(),
                Value::Array(required.into_iter().map(Value::String).collect()),
            );
        }
        Ok(Value::Object(schema))
    }

    fn known(&self, left: &Map<String, Value>, done: &Map<String, Value>) -> String {
        let mut names: Vec<&str> = left.keys().chain(done.keys()).map(String::as_str).collect();
        names.extend(self.arguments.keys().map(String::as_str));
        names.sort_unstable();
        names.dedup();
        names.join(", ")
    }
}

/// How a call of the new tool maps back to the original's arguments.
#[derive(Default)]
struct Plan {
    /// (shown, original)
    renames: Vec<(String, String)>,
    /// Hidden arguments and the value the original gets, if any.
    hidden: Vec<(String, Option<Value>)>,
    /// Shown arguments with a default: (original, value).
    defaults: Vec<(String, Value)>,
}

impl Plan {
    fn original_input(&self, input: Value, tool: &str) -> Result<Value, ToolError> {
        let Value::Object(mut input) = input else {
            return Ok(input);
        };
        for (hidden, _) in &self.hidden {
            // A hidden argument given anyway is refused, never forwarded:
            // the caller cannot override what the host fixed.
            let shown_elsewhere = self.renames.iter().any(|(shown, _)| shown == hidden);
            if !shown_elsewhere && input.contains_key(hidden) {
                return Err(ToolError::new(
                    ErrorCode::InvalidInput,
                    format!("{tool} has no argument {hidden:?}; it is fixed by the host"),
                ));
            }
        }
        for (shown, original) in &self.renames {
            let also_shown = self.renames.iter().any(|(s, _)| s == original);
            if !also_shown && input.contains_key(original) {
                return Err(ToolError::new(
                    ErrorCode::InvalidInput,
                    format!("{tool} takes {original:?} as {shown:?}"),
                ));
            }
        }
        let mut mapped = Map::new();
        for (key, value) in input.iter_mut() {
            let original = self
                .renames
                .iter()
                .find(|(shown, _)| shown == key)
                .map_or(key.as_str(), |(_, original)| original.as_str());
            mapped.insert(original.to_owned(), std::mem::take(value));
        }
        for (original, value) in &self.defaults {
            mapped
                .entry(original.clone())
                .or_insert_with(|| value.clone());
        }
        for (hidden, value) in &self.hidden {
            if let Some(value) = value {
                mapped.insert(hidden.clone(), value.clone());
            }
        }
        Ok(Value::Object(mapped))
    }
}

/// The new tool's handler: map back, check against the original's
/// schema, run the original's handler.
fn wrap(original: ToolDefinition, plan: Arc<Plan>, inner: ErasedHandler) -> ErasedHandler {
    Arc::new(move |input, ctx| {
        let mapped = plan.original_input(input, &original.name)?;
        let compiled = original
            .compiled()
            .map_err(|reason| ToolError::internal(reason.to_owned()))?;
        compiled.input.validate(&mapped).map_err(|issues| {
            ToolError::new(
                ErrorCode::InvalidInput,
                format!(
                    "Input validation failed: the arguments, mapped to {}'s, do not fit its schema",
                    original.name
                ),
            )
            .with_details(serde_json::to_value(&issues).unwrap_or(Value::Null))
        })?;
        inner(mapped, ctx)
    })
}

/// Transforms by the name a tool has before the change; applied to a
/// catalog as it is imported (a source builder's `transforms`),
/// or by hand with [`apply_all`](Self::apply_all).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransformSet {
    by_name: BTreeMap<String, ToolTransform>,
}

impl TransformSet {
    /// No transforms.
    pub fn new() -> Self {
        TransformSet::default()
    }

    /// Transforms the tool named `name` with `transform`.
    pub fn with(mut self, name: impl Into<String>, transform: ToolTransform) -> Self {
        self.by_name.insert(name.into(), transform);
        self
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The names transformed.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// Only the transforms of tools whose name starts with `prefix`.
    pub fn under(&self, prefix: &str) -> TransformSet {
        TransformSet {
            by_name: self
                .by_name
                .iter()
                .filter(|(name, _)| name.starts_with(prefix))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }

    /// Each definition, transformed if a transform names it; the first
    /// that does not fit is the error. A transform naming no definition
    /// here does nothing.
    pub fn apply_all(&self, defs: Vec<ToolDefinition>) -> Result<Vec<ToolDefinition>, String> {
        defs.into_iter()
            .map(|def| match self.by_name.get(&def.name) {
                Some(transform) => transform.apply(&def),
                None => Ok(def),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::Approval;
    use crate::prelude::*;
    use serde_json::json;

    fn original() -> ToolDefinition {
        ToolDefinition::builder("api.search")
            .description("Remote search")
            .approval(ApprovalTier::Write)
            .input_json_schema(json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "maximum": 100},
                    "tenant": {"type": "string"},
                    "verbose": {"type": "boolean"},
                },
                "required": ["query", "tenant"],
                "additionalProperties": false,
            }))
            .raw_handler(|input, _| async move { Ok(ToolOutput::new(input)) })
            .build()
    }

    fn transform() -> ToolTransform {
        ToolTransform::new()
            .name("find")
            .description("Find things.")
            .approval(ApprovalTier::Read)
            .argument(
                "query",
                ArgTransform::new()
                    .rename("text")
                    .description("Words to find."),
            )
            .argument("tenant", ArgTransform::new().hide_with(json!("acme")))
            .argument(
                "limit",
                ArgTransform::new()
                    .default_value(json!(5))
                    .schema(json!({"type": "integer", "maximum": 10})),
            )
            .argument("verbose", ArgTransform::new().hide())
    }

    async fn call(registry: &ToolRegistry, input: Value) -> Result<ToolOutput, ToolError> {
        collect_tool_outcome(registry.invoke("find", input, ToolContext::new()), |_| {}).await
    }

    #[test]
    fn the_new_schema_shows_what_the_transform_says() {
        let made = transform().apply(&original()).unwrap();
        assert_eq!(made.name, "find");
        assert_eq!(made.description, "Find things.");
        assert_eq!(
            made.effective_input_schema(),
            &json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "Words to find."},
                    "limit": {"type": "integer", "maximum": 10, "default": 5},
                },
                "required": ["text"],
                "additionalProperties": false,
            })
        );
        assert!(
            matches!(&made.approval, Some(Approval::Static(s)) if s.tier == ApprovalTier::Read)
        );
    }

    #[tokio::test]
    async fn a_call_maps_back_and_hidden_arguments_cannot_be_overridden() {
        let registry = ToolRegistry::new();
        registry
            .register(transform().apply(&original()).unwrap())
            .unwrap();
        let out = call(&registry, json!({"text": "milk"})).await.unwrap();
        assert_eq!(
            out.data,
            json!({"query": "milk", "tenant": "acme", "limit": 5})
        );
        let out = call(&registry, json!({"text": "milk", "limit": 7}))
            .await
            .unwrap();
        assert_eq!(out.data["limit"], 7);
        for (input, why) in [
            (
                json!({"text": "milk", "tenant": "evil"}),
                "a hidden argument",
            ),
            (
                json!({"text": "milk", "limit": 50}),
                "over the narrowed maximum",
            ),
            (
                json!({"query": "milk"}),
                "the original's name of a renamed argument",
            ),
        ] {
            let error = call(&registry, input).await.expect_err(why);
            assert_eq!(error.code, ErrorCode::InvalidInput, "{why}: {error:?}");
        }
    }

    #[tokio::test]
    async fn a_wider_new_schema_is_still_held_to_the_original() {
        let widened = ToolTransform::new().name("find").argument(
            "limit",
            ArgTransform::new().schema(json!({"type": "integer"})),
        );
        let registry = ToolRegistry::new();
        registry
            .register(widened.apply(&original()).unwrap())
            .unwrap();
        let error = call(
            &registry,
            json!({"query": "q", "tenant": "t", "limit": 1000}),
        )
        .await
        .expect_err("over the original's maximum");
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(
            error.message.contains("do not fit its schema"),
            "{}",
            error.message
        );
    }

    #[test]
    fn transforms_that_do_not_fit_say_why() {
        let cases = [
            (
                ToolTransform::new().argument("nope", ArgTransform::new().hide()),
                "has no argument \"nope\"",
            ),
            (
                ToolTransform::new().argument("tenant", ArgTransform::new().hide()),
                "hiding it needs a value",
            ),
            (
                ToolTransform::new().argument("limit", ArgTransform::new().rename("query")),
                "would be given twice",
            ),
            (ToolTransform::new().name("9 bad"), "new name \"9 bad\""),
        ];
        for (transform, expected) in cases {
            let error = transform.apply(&original()).unwrap_err();
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }
}
