//! Completion of prompt arguments and resource-template variables (MCP's
//! `completion/complete`): a completer attached with
//! `ResourceBuilder::complete`
//! or `PromptBuilder::complete`
//! (`complete(var = fn)` in the macros), run through dispatch like a
//! handler — authorization, cancellation, time limit, panic isolation, one
//! metric.

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::ToolContext;
use crate::definition::{ApprovalTier, ToolDefinition};
use crate::error::ToolError;

/// At most this many values go back (MCP's limit); more set `has_more`.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What the client typed, and what it already resolved.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompletionRequest {
    /// The argument (or template variable) being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Arguments (or variables) resolved before this one, as strings.
    #[serde(default)]
    pub context: Map<String, Value>,
}

impl CompletionRequest {
    /// The already resolved argument `name`, if the client sent it.
    pub fn context_value(&self, name: &str) -> Option<&str> {
        self.context.get(name).and_then(Value::as_str)
    }
}

/// Suggested values, best first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values (at most [`MAX_COMPLETION_VALUES`] are sent).
    pub values: Vec<String>,
    /// How many values exist in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u32>,
    /// Whether more values exist than were sent.
    #[serde(default)]
    pub has_more: bool,
}

impl Completion {
    /// Keeps the first [`MAX_COMPLETION_VALUES`], setting `total` and
    /// `has_more` when it cuts.
    pub fn capped(mut self) -> Self {
        if self.values.len() > MAX_COMPLETION_VALUES {
            let total = self.values.len();
            self.values.truncate(MAX_COMPLETION_VALUES);
            self.has_more = true;
            self.total = Some(self.total.unwrap_or(total as u32).max(total as u32));
        }
        self
    }
}

impl From<Vec<String>> for Completion {
    fn from(values: Vec<String>) -> Self {
        Completion {
            values,
            total: None,
            has_more: false,
        }
    }
}

impl From<Vec<&str>> for Completion {
    fn from(values: Vec<&str>) -> Self {
        values
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
            .into()
    }
}

/// The completers a resource or prompt has, by argument (or variable).
#[derive(Default)]
pub(crate) struct Completers(Vec<(String, ToolDefinition)>);

impl Completers {
    /// Attaches `completer` to `argument` of `owner`, replacing one
    /// attached before.
    pub(crate) fn attach<C, Fut, R, E>(
        &mut self,
        owner: &str,
        argument: &str,
        kind: crate::definition::Primitive,
        completer: C,
    ) where
        C: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: Into<Completion> + Send + 'static,
        E: Into<ToolError> + Send + 'static,
    {
        let def = completer_definition(owner, argument, kind, completer);
        self.0.retain(|(name, _)| name != argument);
        self.0.push((argument.to_owned(), def));
    }

    /// Every argument with its completer.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &ToolDefinition)> + '_ {
        self.0.iter().map(|(name, def)| (name.as_str(), def))
    }

    /// The completer of `argument`.
    pub(crate) fn get(&self, argument: &str) -> Option<&ToolDefinition> {
        self.iter()
            .find(|(name, _)| *name == argument)
            .map(|(_, def)| def)
    }
}

/// The completer of `argument` of `owner`, as a definition dispatch runs
/// (never listed as a tool). `kind` is what a policy sees it as.
fn completer_definition<C, Fut, R, E>(
    owner: &str,
    argument: &str,
    kind: crate::definition::Primitive,
    completer: C,
) -> ToolDefinition
where
    C: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, E>> + Send + 'static,
    R: Into<Completion> + Send + 'static,
    E: Into<ToolError> + Send + 'static,
{
    let completer = Arc::new(completer);
    ToolDefinition::builder(format!("{owner}#{argument}"))
        .description(format!("Completes `{argument}` of {owner}."))
        .approval(ApprovalTier::Read)
        .primitive(kind)
        .handler(move |request: CompletionRequest, ctx| {
            completer(request, ctx).map(|r| match r {
                Ok(values) => Ok(values.into().capped()),
                Err(e) => Err(e.into()),
            })
        })
        .build()
}
