//! A registry's tools as [rig](https://docs.rs/rig-core) tools (feature
//! `rig`), so a rig agent calls them **in process** through
//! [`ToolRegistry::invoke`] — validation, auth, approval and metrics
//! included — instead of over an MCP hop.
//!
//! ```
//! # #[cfg(feature = "rig")] fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use gonk_tools::adapters::providers::rig::RigTools;
//! use gonk_tools::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Search { query: String }
//!
//! let registry = ToolRegistry::new();
//! registry.register(
//!     ToolDefinition::builder("notes.search")
//!         .description("Search notes.")
//!         .approval(ApprovalTier::Read)
//!         .handler(|input: Search, _ctx| async move { Ok::<_, ToolError>(vec![input.query]) })
//!         .build(),
//! )?;
//!
//! // Every tool as a `Box<dyn rig_core::tool::ToolDyn>`, named as providers accept
//! // (`notes.search` → `notes_search`), for `AgentBuilder::tools(..)`.
//! let tools = RigTools::new(registry).into_tools()?;
//! assert_eq!(tools[0].name(), "notes_search");
//! // let agent = rig_core::agent::AgentBuilder::new(model).tools(tools).build();
//! # Ok(()) }
//! # #[cfg(not(feature = "rig"))] fn main() {}
//! ```
//!
//! Each tool advertises the schema dispatch enforces (its root an object)
//! and is named by [`crate::adapters::names`] under the function-name rule every
//! model provider shares; a tool call's arguments are read the way
//! [`crate::adapters::providers`] reads them (`null` for an optional field means
//! absent). A failure reaches the model as `Error [CODE]: message` text
//! and reaches rig's hooks as a classified
//! [`ToolFailure`] (`INVALID_INPUT` →
//! invalid arguments, `TOOL_NOT_FOUND` → not found, denials → permission
//! denied, `ABORTED` → cancelled), with the code attached.

use std::sync::Arc;

use rig_core::tool::{
    ToolCallExtensions, ToolDyn, ToolError as RigError, ToolExecutionResult, ToolFailure, ToolSet,
};
use rig_core::wasm_compat::WasmBoxedFuture;
use serde_json::Value;

use crate::adapters::names::{NameMap, SurfaceNameError, SurfaceNameRules};
use crate::adapters::providers;
use crate::context::ToolContext;
use crate::definition::ToolDefinition;
use crate::definition::ToolPredicate;
use crate::error::{ErrorCode, ToolError};
use crate::event::ToolOutput;
use crate::registry::ToolRegistry;

/// The names rig tools get: what every model provider accepts.
const NAMES: SurfaceNameRules = SurfaceNameRules::FUNCTION_NAME.for_surface("rig");

/// Turns a registry's tools into rig tools.
#[derive(Clone)]
pub struct RigTools {
    registry: ToolRegistry,
    context: ToolContext,
    filter: Option<Arc<ToolPredicate>>,
}

impl std::fmt::Debug for RigTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigTools")
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

impl RigTools {
    /// Every tool of `registry` but duplex ones, called with a fresh
    /// [`ToolContext`].
    pub fn new(registry: ToolRegistry) -> Self {
        RigTools {
            registry,
            context: ToolContext::new(),
            filter: None,
        }
    }

    /// Calls run with a clone of `context`: its auth context (so every call
    /// passes the registry's gates as that principal), cancellation token,
    /// scope, cwd, env and host value.
    pub fn context(mut self, context: ToolContext) -> Self {
        self.context = context;
        self
    }

    /// Offers only the tools `keep` accepts.
    pub fn filter(
        mut self,
        keep: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some(Arc::new(keep));
        self
    }

    /// One [`RigTool`] per offered tool, in registration order. Fails when
    /// two tools would share a name ([`SurfaceNameError`]).
    pub fn tools(&self) -> Result<Vec<RigTool>, SurfaceNameError> {
        let defs = providers::offered(&self.registry, self.filter.as_ref());
        let names = NameMap::build(&NAMES, defs.iter().map(|def| def.name.as_str()))?;
        Ok(defs
            .iter()
            .map(|def| RigTool {
                registry: self.registry.clone(),
                context: self.context.clone(),
                tool: def.name.clone(),
                name: names
                    .surface_name(&def.name)
                    .unwrap_or(&def.name)
                    .to_owned(),
                description: def.advertised_description().to_owned(),
                parameters: providers::input_parameters(def),
            })
            .collect())
    }

    /// The tools boxed, for `AgentBuilder::tools(..)`.
    pub fn into_tools(self) -> Result<Vec<Box<dyn ToolDyn>>, SurfaceNameError> {
        Ok(self
            .tools()?
            .into_iter()
            .map(|tool| Box::new(tool) as Box<dyn ToolDyn>)
            .collect())
    }

    /// The tools as a rig [`ToolSet`].
    pub fn tool_set(&self) -> Result<ToolSet, SurfaceNameError> {
        Ok(ToolSet::from_tools(self.tools()?))
    }
}

/// One gonk tool as a rig [`ToolDyn`]: calls go through
/// [`ToolRegistry::invoke`].
#[derive(Clone)]
pub struct RigTool {
    registry: ToolRegistry,
    context: ToolContext,
    tool: String,
    name: String,
    description: String,
    parameters: Value,
}

impl std::fmt::Debug for RigTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigTool")
            .field("tool", &self.tool)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl RigTool {
    /// The registry name (`notes.search`; rig sees [`ToolDyn::name`]).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Runs the call through dispatch.
    async fn run(&self, args: &str) -> Result<ToolOutput<Value>, ToolError> {
        let arguments = providers::args::parse(args);
        providers::args::run(&self.registry, &self.tool, arguments, self.context.clone()).await
    }
}

/// rig's classification of a dispatch error.
fn failure(error: &ToolError) -> ToolFailure {
    let message = error.message.clone();
    let failure = match error.code {
        ErrorCode::InvalidInput => ToolFailure::invalid_args(message),
        ErrorCode::ToolNotFound => ToolFailure::not_found(message),
        ErrorCode::AuthorizationDenied
        | ErrorCode::ApprovalDenied
        | ErrorCode::ApprovalRequired
        | ErrorCode::AuthResourceUnresolved
        | ErrorCode::InsufficientScope => ToolFailure::permission_denied(message),
        ErrorCode::Aborted => ToolFailure::cancelled(message),
        ErrorCode::Timeout => ToolFailure::timeout(message),
        _ => ToolFailure::other(message),
    };
    failure.with_code(error.code.as_str())
}

impl ToolDyn for RigTool {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn call<'a>(&'a self, args: String) -> WasmBoxedFuture<'a, Result<String, RigError>> {
        Box::pin(async move {
            match self.run(&args).await {
                Ok(output) => Ok(providers::reply::output_text(&output)),
                Err(error) => Err(RigError::ToolCallError(Box::new(error))),
            }
        })
    }

    fn call_structured<'a>(
        &'a self,
        args: String,
        _extensions: &'a ToolCallExtensions,
    ) -> WasmBoxedFuture<'a, ToolExecutionResult> {
        Box::pin(async move {
            match self.run(&args).await {
                Ok(output) => ToolExecutionResult::success(providers::reply::output_text(&output)),
                Err(error) => ToolExecutionResult::failed(
                    providers::reply::failure_text(&error),
                    failure(&error),
                ),
            }
        })
    }
}
