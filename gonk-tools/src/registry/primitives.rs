//! The registry's resources and prompts — MCP's other two primitives —
//! beside its tools: registration, listing (only what the caller may
//! discover), and the read, get and complete calls, each run through
//! [`invoke_definition`](ToolRegistry::invoke_definition) so it keeps the
//! whole dispatch contract.

use std::sync::{Arc, RwLock};

use indexmap::IndexMap;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, watch};

use super::{RegistryError, ToolRegistry};
use crate::changes::{BusMessage, ChangeBus, SharedChange};
use crate::completion::{Completion, CompletionRequest};
use crate::context::ToolContext;
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::event::collect_tool_outcome;
use crate::prompt::{PromptDefinition, PromptResult};
use crate::resource::{ResourceContents, ResourceDefinition, UriTemplate};
use crate::security::{AuthSlot, Gate};
use crate::skill::{Skill, SkillFile};

/// The resources and prompts of a registry (shared by the registries
/// derived from it).
pub(crate) struct Primitives {
    catalog: RwLock<Catalog>,
    /// Bumped when a resource or prompt is registered or removed.
    changes: watch::Sender<u64>,
    /// URIs of resources whose contents changed.
    updates: broadcast::Sender<String>,
    /// The bus this registry shares its changes on, with its origin id
    /// ([`ToolRegistry::share_changes`]).
    bus: RwLock<Option<(String, Arc<dyn ChangeBus>)>>,
}

impl Primitives {
    pub(crate) fn attach_bus(&self, origin: String, bus: Arc<dyn ChangeBus>) {
        *self.bus.write().unwrap_or_else(|p| p.into_inner()) = Some((origin, bus));
    }

    /// Detaches the bus, if it is still the one `origin` attached.
    pub(crate) fn detach_bus(&self, origin: &str) {
        let mut bus = self.bus.write().unwrap_or_else(|p| p.into_inner());
        if bus.as_ref().is_some_and(|(own, _)| own == origin) {
            *bus = None;
        }
    }

    /// Tells the other processes on the bus, if there is one.
    pub(crate) fn publish(&self, change: SharedChange) {
        let bus = self.bus.read().unwrap_or_else(|p| p.into_inner());
        if let Some((origin, bus)) = bus.as_ref() {
            bus.publish(BusMessage {
                origin: origin.clone(),
                change,
            });
        }
    }

    /// Tells this process's subscribers that `uri` changed.
    pub(crate) fn raise_resource_updated(&self, uri: String) {
        // No receiver is not an error: nobody is listening.
        let _ = self.updates.send(uri);
    }

    /// Tells this process's watchers that resources or prompts changed.
    pub(crate) fn raise_list_changed(&self) {
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// A resource changed here: this process's subscribers and the bus.
    pub(crate) fn resource_updated(&self, uri: String) {
        if self.bus.read().unwrap_or_else(|p| p.into_inner()).is_some() {
            self.publish(SharedChange::ResourceUpdated { uri: uri.clone() });
        }
        self.raise_resource_updated(uri);
    }
}

impl Default for Primitives {
    fn default() -> Self {
        Primitives {
            catalog: RwLock::default(),
            changes: watch::Sender::new(0),
            updates: broadcast::channel(256).0,
            bus: RwLock::new(None),
        }
    }
}

#[derive(Default)]
struct Catalog {
    /// Fixed URIs and templates, by the URI as written.
    resources: IndexMap<String, (ResourceDefinition, UriTemplate)>,
    prompts: IndexMap<String, PromptDefinition>,
    /// By name.
    skills: IndexMap<String, Skill>,
}

impl Catalog {
    /// The resource `uri` reads: a fixed URI first, then the first
    /// template that matches, with its variables.
    fn resolve(&self, uri: &str) -> Option<(ResourceDefinition, Map<String, Value>)> {
        if let Some((def, template)) = self.resources.get(uri) {
            if template.is_fixed() {
                return Some((def.clone(), Map::new()));
            }
        }
        self.resources
            .values()
            .filter(|(_, template)| !template.is_fixed())
            .find_map(|(def, template)| Some((def.clone(), template.matches(uri)?)))
    }
}

/// What a completion is asked about (MCP's `ref`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompletionTarget {
    /// An argument of the prompt of that name.
    Prompt(String),
    /// A variable of the resource template (or URI) as written.
    Resource(String),
}

/// A watch on a registry's resources and prompts, from
/// [`ToolRegistry::primitive_changes`].
#[derive(Debug)]
pub struct PrimitiveChanges(watch::Receiver<u64>);

impl PrimitiveChanges {
    /// Resolves at the next registration or removal of a resource or
    /// prompt; `None` once the registry is gone.
    pub async fn changed(&mut self) -> Option<u64> {
        self.0.changed().await.ok()?;
        Some(*self.0.borrow_and_update())
    }
}

/// URIs of resources whose contents changed, from
/// [`ToolRegistry::resource_updates`].
#[derive(Debug)]
pub struct ResourceUpdates(broadcast::Receiver<String>);

impl ResourceUpdates {
    /// The next updated URI; `None` once the registry is gone. A receiver
    /// that falls more than 256 updates behind skips the oldest.
    pub async fn next(&mut self) -> Option<String> {
        loop {
            match self.0.recv().await {
                Ok(uri) => return Some(uri),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// Tells a registry's subscribers that a resource changed, from
/// [`ToolRegistry::resource_notifier`]. Cheap to clone.
#[derive(Clone)]
pub struct ResourceNotifier(Arc<Primitives>);

impl std::fmt::Debug for ResourceNotifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceNotifier").finish_non_exhaustive()
    }
}

impl ResourceNotifier {
    /// The resource at `uri` changed.
    pub fn notify(&self, uri: impl Into<String>) {
        self.0.resource_updated(uri.into());
    }
}

fn resource_not_found(uri: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ResourceNotFound,
        format!("Resource not found: {uri}"),
    )
    .with_details(serde_json::json!({ "uri": uri }))
}

fn prompt_not_found(name: &str) -> ToolError {
    ToolError::new(
        ErrorCode::PromptNotFound,
        format!("Prompt not found: {name}"),
    )
}

impl ToolRegistry {
    pub(crate) fn primitives(&self) -> &Arc<Primitives> {
        &self.inner.primitives
    }

    fn primitive_catalog(&self) -> std::sync::RwLockReadGuard<'_, Catalog> {
        self.primitives()
            .catalog
            .read()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn change_primitives<T>(&self, f: impl FnOnce(&mut Catalog) -> T) -> T {
        let primitives = self.primitives();
        let out = f(&mut primitives
            .catalog
            .write()
            .unwrap_or_else(|p| p.into_inner()));
        primitives.raise_list_changed();
        primitives.publish(SharedChange::PrimitivesChanged);
        out
    }

    /// Checks a read, get or completion definition like a tool's handler:
    /// it has one, and the registry holds the state it extracts.
    fn check_handler(&self, what: &str, def: Option<&ToolDefinition>) -> Result<(), RegistryError> {
        let def = def.ok_or_else(|| RegistryError::MissingHandler(what.to_owned()))?;
        self.check_state(def)
    }

    /// Registers a resource or resource template. Its template must parse
    /// (RFC 6570 level 1–2), it needs a handler, its completers must name
    /// template variables, and the registry must hold the state it
    /// extracts; a URI registered twice is an error.
    ///
    /// A resource served as `text/html;profile=mcp-app` (an
    /// [`AppResource`](crate::app::AppResource)) must also sit at a fixed
    /// `ui://` URI, with well-formed `_meta.ui` (each CSP entry an origin).
    pub fn register_resource(&self, def: ResourceDefinition) -> Result<(), RegistryError> {
        let template = def
            .template()
            .map_err(|error| RegistryError::InvalidResource {
                uri: def.uri().to_owned(),
                reason: error.reason().to_owned(),
            })?;
        crate::app::check_resource(&def).map_err(|reason| RegistryError::InvalidResource {
            uri: def.uri().to_owned(),
            reason,
        })?;
        self.check_handler(def.uri(), def.read_definition())?;
        for (variable, completer) in def.inner.completers.iter() {
            if !template.variables().any(|v| v == variable) {
                return Err(RegistryError::InvalidResource {
                    uri: def.uri().to_owned(),
                    reason: format!(
                        "a completer is attached to `{variable}`, which the template does not have"
                    ),
                });
            }
            self.check_state(completer)?;
        }
        self.change_primitives(|catalog| {
            if catalog.resources.contains_key(def.uri()) {
                return Err(RegistryError::Duplicate(def.uri().to_owned()));
            }
            catalog
                .resources
                .insert(def.uri().to_owned(), (def, template));
            Ok(())
        })
    }

    /// Registers a prompt: it needs a handler, its completers must name
    /// arguments it has, and the registry must hold the state it
    /// extracts; a name registered twice is an error.
    pub fn register_prompt(&self, def: PromptDefinition) -> Result<(), RegistryError> {
        self.check_handler(def.name(), def.get_definition())?;
        for (argument, completer) in def.inner.completers.iter() {
            if !def.arguments().iter().any(|a| a.name == argument) {
                let arguments: Vec<String> = def
                    .arguments()
                    .iter()
                    .map(|a| format!("`{}`", a.name))
                    .collect();
                let known = if arguments.is_empty() {
                    "it has none".to_owned()
                } else {
                    format!("they are {}", arguments.join(", "))
                };
                return Err(RegistryError::InvalidPrompt {
                    name: def.name().to_owned(),
                    reason: format!(
                        "a completer is attached to `{argument}`, which is not one of its arguments ({known}): \
                         name an argument as clients see it, by serde's name, so a field renamed with \
                         `#[serde(rename = \"..\")]` goes by its new name (in `#[prompt]`: `complete(\"<new name>\" = ..)`)"
                    ),
                });
            }
            self.check_state(completer)?;
        }
        self.change_primitives(|catalog| {
            if catalog.prompts.contains_key(def.name()) {
                return Err(RegistryError::Duplicate(def.name().to_owned()));
            }
            catalog.prompts.insert(def.name().to_owned(), def);
            Ok(())
        })
    }

    /// Registers skills ([`embed_skills!`](crate::embed_skills) or
    /// [`Skill::load_dir`]); a skill at a path registered before (its
    /// name, or namespace and name), or twice among them, is refused and
    /// none of them is registered.
    pub fn register_skills(
        &self,
        skills: impl IntoIterator<Item = Skill>,
    ) -> Result<(), RegistryError> {
        let skills: Vec<Skill> = skills.into_iter().collect();
        self.change_primitives(|catalog| {
            let mut paths = std::collections::HashSet::new();
            for skill in &skills {
                let path = skill.path();
                if catalog.skills.contains_key(&path) || !paths.insert(path.clone()) {
                    return Err(RegistryError::DuplicateSkill(path));
                }
            }
            for skill in skills {
                catalog.skills.insert(skill.path(), skill);
            }
            Ok(())
        })
    }

    /// Replaces every skill in `namespace` with `skills` (each given that
    /// namespace) in one change: what a source catalog does with the
    /// skills of the server it imports. A path twice among them is refused
    /// and nothing changes.
    pub fn replace_namespace_skills(
        &self,
        namespace: &str,
        skills: impl IntoIterator<Item = Skill>,
    ) -> Result<(), RegistryError> {
        let mut namespaced = Vec::new();
        for skill in skills {
            let skill = skill
                .with_namespace(namespace)
                .map_err(|error| RegistryError::DuplicateSkill(error.to_string()))?;
            namespaced.push(skill);
        }
        self.change_primitives(|catalog| {
            let mut paths = std::collections::HashSet::new();
            for skill in &namespaced {
                let path = skill.path();
                let taken = catalog
                    .skills
                    .get(&path)
                    .is_some_and(|held| held.namespace() != Some(namespace));
                if taken || !paths.insert(path.clone()) {
                    return Err(RegistryError::DuplicateSkill(path));
                }
            }
            catalog
                .skills
                .retain(|_, skill| skill.namespace() != Some(namespace));
            for skill in namespaced {
                catalog.skills.insert(skill.path(), skill);
            }
            Ok(())
        })
    }

    /// Removes the skill at `path` (its name, or `<namespace>/<name>`);
    /// `true` if it existed.
    pub fn unregister_skill(&self, path: &str) -> bool {
        self.change_primitives(|catalog| catalog.skills.shift_remove(path).is_some())
    }

    /// Every skill, in registration order.
    pub fn skills(&self) -> Vec<Skill> {
        self.primitive_catalog().skills.values().cloned().collect()
    }

    /// Whether any skill is registered.
    pub fn has_skills(&self) -> bool {
        !self.primitive_catalog().skills.is_empty()
    }

    /// The skill whose `SKILL.md` is at `uri` (`skill://<name>/SKILL.md`).
    pub fn skill(&self, uri: &str) -> Option<Skill> {
        let path = uri
            .strip_prefix(crate::skill::SKILL_SCHEME)?
            .strip_suffix(crate::skill::SKILL_MD)?
            .strip_suffix('/')?;
        self.primitive_catalog().skills.get(path).cloned()
    }

    /// The skill whose folder is `uri` or holds it.
    pub fn skill_at(&self, uri: &str) -> Option<Skill> {
        let rest = uri.strip_prefix(crate::skill::SKILL_SCHEME)?;
        // The longest path that `uri` is in: `skill://a/b/…` is in `a/b`
        // before `a`.
        self.primitive_catalog()
            .skills
            .iter()
            .filter(|(path, _)| {
                rest.strip_prefix(path.as_str())
                    .is_some_and(|tail| tail.is_empty() || tail.starts_with('/'))
            })
            .max_by_key(|(path, _)| path.len())
            .map(|(_, skill)| skill.clone())
    }

    /// The skill file at `uri` (`skill://<name>/<path>`), with its skill.
    pub fn skill_file(&self, uri: &str) -> Option<(Skill, SkillFile)> {
        let skill = self.skill_at(uri)?;
        let file = skill.file_at(uri)?.clone();
        Some((skill, file))
    }

    /// Removes the resource registered at `uri` (as written); `true` if
    /// it existed.
    pub fn unregister_resource(&self, uri: &str) -> bool {
        self.change_primitives(|catalog| catalog.resources.shift_remove(uri).is_some())
    }

    /// Removes the prompt `name`; `true` if it existed.
    pub fn unregister_prompt(&self, name: &str) -> bool {
        self.change_primitives(|catalog| catalog.prompts.shift_remove(name).is_some())
    }

    /// The resource registered at `uri` exactly as written (no template
    /// matching).
    pub(super) fn resource_at(&self, uri: &str) -> Option<ResourceDefinition> {
        self.primitive_catalog()
            .resources
            .get(uri)
            .map(|(def, _)| def.clone())
    }

    /// Every resource and template, in registration order.
    pub fn resources(&self) -> Vec<ResourceDefinition> {
        self.primitive_catalog()
            .resources
            .values()
            .map(|(def, _)| def.clone())
            .collect()
    }

    /// Every prompt, in registration order.
    pub fn prompts(&self) -> Vec<PromptDefinition> {
        self.primitive_catalog().prompts.values().cloned().collect()
    }

    /// The prompt `name`, unchecked against any caller.
    pub fn get_prompt_definition(&self, name: &str) -> Option<PromptDefinition> {
        self.primitive_catalog().prompts.get(name).cloned()
    }

    /// The resource a read of `uri` would run, unchecked against any
    /// caller, with the template variables it matched.
    pub fn resolve_resource(&self, uri: &str) -> Option<(ResourceDefinition, Map<String, Value>)> {
        self.primitive_catalog().resolve(uri)
    }

    /// The resources and templates `ctx`'s caller may discover (all of
    /// them for an unauthenticated context), in registration order.
    pub async fn list_resources_for(&self, ctx: &ToolContext) -> Vec<ResourceDefinition> {
        let all = self.resources();
        if ctx.auth.is_none() {
            return all;
        }
        let reads: Vec<ToolDefinition> = all
            .iter()
            .filter_map(|r| r.read_definition().cloned())
            .collect();
        let visible = Gate::new(&self.inner.security)
            .discoverable(reads, AuthSlot::of(ctx).as_ref())
            .await;
        all.into_iter()
            .filter(|r| {
                r.read_definition()
                    .is_some_and(|d| visible.iter().any(|v| v.as_ptr() == d.as_ptr()))
            })
            .collect()
    }

    /// The prompts `ctx`'s caller may discover, in registration order.
    pub async fn list_prompts_for(&self, ctx: &ToolContext) -> Vec<PromptDefinition> {
        let all = self.prompts();
        if ctx.auth.is_none() {
            return all;
        }
        let gets: Vec<ToolDefinition> = all
            .iter()
            .filter_map(|p| p.get_definition().cloned())
            .collect();
        let visible = Gate::new(&self.inner.security)
            .discoverable(gets, AuthSlot::of(ctx).as_ref())
            .await;
        all.into_iter()
            .filter(|p| {
                p.get_definition()
                    .is_some_and(|d| visible.iter().any(|v| v.as_ptr() == d.as_ptr()))
            })
            .collect()
    }

    /// Reads the resource at `uri`: the fixed resource of that URI, else
    /// the first template that matches it, its variables validated and
    /// passed to the handler. Every contents item without a URI gets
    /// `uri`, and without a MIME type the resource's.
    ///
    /// `RESOURCE_NOT_FOUND` when nothing matches or the caller may not
    /// discover what does (the same error, so a hidden resource reads as
    /// a missing one); otherwise the handler's outcome under the dispatch
    /// contract (`INVALID_INPUT` for variables that do not fit their
    /// types, `AUTHORIZATION_DENIED`, `TIMEOUT`, `ABORTED`, …).
    pub async fn read_resource(
        &self,
        uri: &str,
        ctx: ToolContext,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        let (def, mut vars) = self
            .resolve_resource(uri)
            .ok_or_else(|| resource_not_found(uri))?;
        let read = def
            .read_definition()
            .cloned()
            .ok_or_else(|| resource_not_found(uri))?;
        crate::schema::coerce_string_arguments(read.metadata().effective_input_schema(), &mut vars);
        let events = self.invoke_definition(read, Value::Object(vars), ctx);
        let output = collect_tool_outcome(events, |_| {})
            .await
            .map_err(|e| hidden_as(e, || resource_not_found(uri)))?;
        let mut contents: Vec<ResourceContents> = serde_json::from_value(output.data)
            .map_err(|e| ToolError::internal(format!("resource contents of {uri}: {e}")))?;
        for item in &mut contents {
            if item.uri.is_empty() {
                item.uri = uri.to_owned();
            }
            if item.mime_type.is_none() {
                item.mime_type = def.mime_type().map(str::to_owned);
            }
        }
        Ok(contents)
    }

    /// Renders prompt `name` with `arguments` (strings, as MCP sends
    /// them, converted to the types the argument struct asks for and
    /// validated against its schema).
    ///
    /// `PROMPT_NOT_FOUND` when there is none or the caller may not
    /// discover it; otherwise the handler's outcome under the dispatch
    /// contract.
    pub async fn get_prompt(
        &self,
        name: &str,
        mut arguments: Map<String, Value>,
        ctx: ToolContext,
    ) -> Result<PromptResult, ToolError> {
        let get = self
            .get_prompt_definition(name)
            .and_then(|p| p.get_definition().cloned())
            .ok_or_else(|| prompt_not_found(name))?;
        crate::schema::coerce_string_arguments(
            get.metadata().effective_input_schema(),
            &mut arguments,
        );
        let events = self.invoke_definition(get, Value::Object(arguments), ctx);
        let output = collect_tool_outcome(events, |_| {})
            .await
            .map_err(|e| hidden_as(e, || prompt_not_found(name)))?;
        serde_json::from_value(output.data)
            .map_err(|e| ToolError::internal(format!("prompt {name} rendered no messages: {e}")))
    }

    /// Completes `request.argument` of `target` with its attached
    /// completer. A target the caller may not discover reads as missing
    /// (`PROMPT_NOT_FOUND` / `RESOURCE_NOT_FOUND`); an argument without a
    /// completer completes to nothing.
    pub async fn complete(
        &self,
        target: &CompletionTarget,
        request: CompletionRequest,
        ctx: ToolContext,
    ) -> Result<Completion, ToolError> {
        let (owner, completer, missing) = match target {
            CompletionTarget::Prompt(name) => {
                let prompt = self.get_prompt_definition(name);
                let owner = prompt.as_ref().and_then(|p| p.get_definition().cloned());
                let completer = prompt.and_then(|p| p.completer(&request.argument).cloned());
                (owner, completer, prompt_not_found(name))
            }
            CompletionTarget::Resource(uri) => {
                let resource = self
                    .primitive_catalog()
                    .resources
                    .get(uri.as_str())
                    .map(|(def, _)| def.clone());
                let owner = resource.as_ref().and_then(|r| r.read_definition().cloned());
                let completer = resource.and_then(|r| r.completer(&request.argument).cloned());
                (owner, completer, resource_not_found(uri))
            }
        };
        let owner = owner.ok_or_else(|| missing.clone())?;
        if ctx.auth.is_some() {
            let visible = Gate::new(&self.inner.security)
                .discoverable(vec![owner], AuthSlot::of(&ctx).as_ref())
                .await;
            if visible.is_empty() {
                return Err(missing);
            }
        }
        let Some(completer) = completer else {
            return Ok(Completion::default());
        };
        let input = serde_json::to_value(&request)
            .map_err(|e| ToolError::internal(format!("completion request: {e}")))?;
        let events = self.invoke_definition(completer, input, ctx);
        let output = collect_tool_outcome(events, |_| {})
            .await
            .map_err(|e| hidden_as(e, || missing.clone()))?;
        serde_json::from_value(output.data)
            .map_err(|e| ToolError::internal(format!("completion values: {e}")))
    }

    /// Tells subscribers that the resource at `uri` changed (MCP's
    /// `notifications/resources/updated`, to the clients that subscribed
    /// to it). Call it after a write; `ctx.notify_resource_updated(uri)`
    /// does the same from a tool.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.primitives().resource_updated(uri.into());
    }

    /// A handle that sends what
    /// [`notify_resource_updated`](Self::notify_resource_updated) sends
    /// without holding the registry — for a change listener
    /// ([`on_change`](Self::on_change)), which the registry itself holds.
    pub fn resource_notifier(&self) -> ResourceNotifier {
        ResourceNotifier(Arc::clone(self.primitives()))
    }

    /// The URIs of resources that change from now on
    /// ([`notify_resource_updated`](Self::notify_resource_updated)).
    pub fn resource_updates(&self) -> ResourceUpdates {
        ResourceUpdates(self.primitives().updates.subscribe())
    }

    /// A watch on the registration of resources and prompts (MCP's
    /// `list_changed` of both).
    pub fn primitive_changes(&self) -> PrimitiveChanges {
        PrimitiveChanges(self.primitives().changes.subscribe())
    }
}

/// A hidden definition's `TOOL_NOT_FOUND` as the primitive's own
/// not-found error, the same a missing one gets.
fn hidden_as(error: ToolError, missing: impl FnOnce() -> ToolError) -> ToolError {
    if error.code == ErrorCode::ToolNotFound {
        missing()
    } else {
        error
    }
}
