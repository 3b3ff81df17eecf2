//! Resources, prompts and completion over MCP: the lists (paged, with
//! cache hints), `resources/read`, `prompts/get` (both may ask their
//! client, as `tools/call` does), `completion/complete`, and the errors
//! of each era. The registry does the work; this module speaks the wire.

use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, CompletionInfo, ErrorCode as RpcCode,
    GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, Prompt,
    ReadResourceResult, Reference, Resource, ResourceTemplate, ResultType,
};
use rmcp::ErrorData;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::completion::{Completion, CompletionRequest};
use crate::error::{ErrorCode, ToolError};
use crate::prompt::{PromptDefinition, PromptResult};
use crate::registry::ResourceUpdates;
use crate::resource::{ResourceBody, ResourceContents, ResourceDefinition};
use crate::CompletionTarget;

/// Items per page of `resources/list`, `resources/templates/list` and
/// `prompts/list`.
pub(crate) const PAGE_SIZE: usize = 100;

/// MCP 2025's resource-not-found code (the 2026 revision uses `-32602`).
const RESOURCE_NOT_FOUND_2025: i32 = -32002;

/// One page of `items` from `cursor` (the offset, as the previous page's
/// `nextCursor` gave it), with the next cursor.
pub(crate) fn page<T>(
    items: Vec<T>,
    cursor: Option<&str>,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|start| *start <= items.len())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    "Invalid cursor: pass the nextCursor of the previous page, or none for the first",
                    Some(json!({ "cursor": cursor })),
                )
            })?,
    };
    let end = (start + PAGE_SIZE).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((
        items.into_iter().skip(start).take(end - start).collect(),
        next,
    ))
}

/// Ours to rmcp's: both are MCP's wire shape.
fn wire<T: Serialize, U: DeserializeOwned>(value: &T) -> Result<U, ErrorData> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| ErrorData::internal_error(format!("cannot project to MCP: {e}"), None))
}

fn described(def: &ResourceDefinition) -> Map<String, Value> {
    let mut item = Map::new();
    item.insert("name".into(), def.name().into());
    let optional = [
        ("title", def.title()),
        ("description", def.description()),
        ("mimeType", def.mime_type()),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            item.insert(key.into(), value.into());
        }
    }
    if !def.icons().is_empty() {
        item.insert("icons".into(), json!(def.icons()));
    }
    if !def.annotations().is_empty() {
        item.insert("annotations".into(), json!(def.annotations()));
    }
    // An app resource's `_meta.ui`, for hosts to review before a read.
    if let Some(meta) = def.meta() {
        item.insert("_meta".into(), Value::Object(meta.clone()));
    }
    item
}

/// A fixed resource as `resources/list` shows it.
pub(crate) fn project_resource(def: &ResourceDefinition) -> Result<Resource, ErrorData> {
    let mut item = described(def);
    item.insert("uri".into(), def.uri().into());
    if let Some(size) = def.size() {
        item.insert("size".into(), size.into());
    }
    wire(&item)
}

/// A template as `resources/templates/list` shows it.
pub(crate) fn project_template(def: &ResourceDefinition) -> Result<ResourceTemplate, ErrorData> {
    let mut item = described(def);
    item.insert("uriTemplate".into(), def.uri().into());
    wire(&item)
}

/// A prompt as `prompts/list` shows it.
pub(crate) fn project_prompt(def: &PromptDefinition) -> Result<Prompt, ErrorData> {
    let mut item = Map::new();
    item.insert("name".into(), def.name().into());
    if let Some(title) = def.title() {
        item.insert("title".into(), title.into());
    }
    if let Some(description) = def.description() {
        item.insert("description".into(), description.into());
    }
    if !def.arguments().is_empty() {
        item.insert("arguments".into(), json!(def.arguments()));
    }
    if !def.icons().is_empty() {
        item.insert("icons".into(), json!(def.icons()));
    }
    wire(&item)
}

/// Cache hints of a listing or a read: nothing is kept (the contents and
/// the catalog can change at any time, and subscribers hear of it); a
/// listing filtered by the caller's credentials is private to them.
fn hints(authenticated: bool) -> (u64, CacheScope) {
    let scope = if authenticated {
        CacheScope::Private
    } else {
        CacheScope::Public
    };
    (0, scope)
}

/// The fixed resources of `defs`, then `skill_files` (each skill's
/// `SKILL.md`), one page of them.
pub(crate) fn list_resources(
    defs: Vec<ResourceDefinition>,
    skill_files: Vec<Resource>,
    cursor: Option<&str>,
    authenticated: bool,
) -> Result<ListResourcesResult, ErrorData> {
    let fixed = defs
        .iter()
        .filter(|d| !d.is_template())
        .map(project_resource)
        .collect::<Result<Vec<_>, _>>()?;
    let all: Vec<Resource> = fixed.into_iter().chain(skill_files).collect();
    let (items, next) = page(all, cursor)?;
    let (ttl, scope) = hints(authenticated);
    let mut result = ListResourcesResult::with_all_items(items)
        .with_ttl_ms(ttl)
        .with_cache_scope(scope);
    result.next_cursor = next;
    Ok(result)
}

pub(crate) fn list_templates(
    defs: Vec<ResourceDefinition>,
    cursor: Option<&str>,
    authenticated: bool,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    let templates: Vec<_> = defs.into_iter().filter(|d| d.is_template()).collect();
    let (items, next) = page(templates, cursor)?;
    let items = items
        .iter()
        .map(project_template)
        .collect::<Result<_, _>>()?;
    let (ttl, scope) = hints(authenticated);
    let mut result = ListResourceTemplatesResult::with_all_items(items)
        .with_ttl_ms(ttl)
        .with_cache_scope(scope);
    result.next_cursor = next;
    Ok(result)
}

pub(crate) fn list_prompts(
    defs: Vec<PromptDefinition>,
    cursor: Option<&str>,
    authenticated: bool,
) -> Result<ListPromptsResult, ErrorData> {
    let (items, next) = page(defs, cursor)?;
    let items = items.iter().map(project_prompt).collect::<Result<_, _>>()?;
    let (ttl, scope) = hints(authenticated);
    let mut result = ListPromptsResult::with_all_items(items)
        .with_ttl_ms(ttl)
        .with_cache_scope(scope);
    result.next_cursor = next;
    Ok(result)
}

pub(crate) fn read_result(
    contents: Vec<ResourceContents>,
    authenticated: bool,
) -> Result<ReadResourceResult, ErrorData> {
    let (ttl, scope) = hints(authenticated);
    let mut result = ReadResourceResult::new(contents.into_iter().map(to_mcp).collect());
    result.result_type = Some(ResultType::COMPLETE);
    result.ttl_ms = Some(ttl);
    result.cache_scope = Some(scope);
    Ok(result)
}

/// One contents item as rmcp's type, built directly (a read is on the
/// hot path; no JSON round trip).
fn to_mcp(contents: ResourceContents) -> rmcp::model::ResourceContents {
    let ResourceContents {
        uri,
        mime_type,
        body,
        meta,
    } = contents;
    let item = match body {
        // rmcp marks text `text/plain` unless told otherwise.
        ResourceBody::Text(text) => match mime_type {
            Some(mime_type) => {
                rmcp::model::ResourceContents::text(text, uri).with_mime_type(mime_type)
            }
            None => rmcp::model::ResourceContents::text(text, uri),
        },
        ResourceBody::Blob(bytes) => {
            use base64::Engine as _;
            let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
            let item = rmcp::model::ResourceContents::blob(blob, uri);
            match mime_type {
                Some(mime_type) => item.with_mime_type(mime_type),
                None => item,
            }
        }
    };
    match meta {
        Some(meta) => item.with_meta(meta.into()),
        None => item,
    }
}

pub(crate) fn prompt_result(result: PromptResult) -> Result<GetPromptResult, ErrorData> {
    let mut result: GetPromptResult = wire(&result)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

/// What a `completion/complete` asks about, in our terms.
pub(crate) fn completion_request(
    request: &CompleteRequestParams,
) -> Result<(CompletionTarget, CompletionRequest), ErrorData> {
    let target = match &request.r#ref {
        Reference::Prompt(prompt) => CompletionTarget::Prompt(prompt.name.clone()),
        Reference::Resource(resource) => CompletionTarget::Resource(resource.uri.clone()),
        other => {
            return Err(ErrorData::invalid_params(
                format!(
                    "Cannot complete a {} reference: use ref/prompt or ref/resource",
                    other.reference_type()
                ),
                None,
            ))
        }
    };
    let context = request
        .context
        .as_ref()
        .and_then(|c| c.arguments.as_ref())
        .map(|arguments| {
            arguments
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect()
        })
        .unwrap_or_default();
    Ok((
        target,
        CompletionRequest {
            argument: request.argument.name.clone(),
            value: request.argument.value.clone(),
            context,
        },
    ))
}

pub(crate) fn complete_result(completion: Completion) -> CompleteResult {
    let completion = completion.capped();
    let mut info = CompletionInfo::default();
    info.values = completion.values;
    info.total = completion.total;
    info.has_more = Some(completion.has_more);
    CompleteResult::new(info)
}

/// A failed read, get or completion as the JSON-RPC error of the
/// request's era: not found is `-32602` with the URI in `data` (2026,
/// SEP-2164) or `-32002` (2025) for a resource, `-32602` for a prompt;
/// invalid arguments are `-32602` with the issues; anything else is an
/// internal error. `data.code` always carries our code.
pub(crate) fn error_data(error: &ToolError, stateless: bool) -> ErrorData {
    let mut data = Map::new();
    data.insert("code".into(), error.code.as_str().into());
    if let Some(details) = &error.details {
        match details {
            Value::Object(fields) => data.extend(fields.clone()),
            other => {
                data.insert("details".into(), other.clone());
            }
        }
    }
    let code = match error.code {
        ErrorCode::ResourceNotFound if !stateless => RpcCode(RESOURCE_NOT_FOUND_2025),
        ErrorCode::ResourceNotFound | ErrorCode::PromptNotFound | ErrorCode::InvalidInput => {
            RpcCode::INVALID_PARAMS
        }
        _ => RpcCode::INTERNAL_ERROR,
    };
    ErrorData::new(code, error.message.clone(), Some(Value::Object(data)))
}

/// The registry's catalog, as the capabilities say: resources (with
/// subscriptions and list changes) when any is registered, prompts when
/// any is, completions when either is.
pub(crate) fn capabilities(
    capabilities: &mut rmcp::model::ServerCapabilities,
    has_resources: bool,
    has_prompts: bool,
) {
    if has_resources {
        let mut resources = rmcp::model::ResourcesCapability::default();
        resources.subscribe = Some(true);
        resources.list_changed = Some(true);
        capabilities.resources = Some(resources);
    }
    if has_prompts {
        let mut prompts = rmcp::model::PromptsCapability::default();
        prompts.list_changed = Some(true);
        capabilities.prompts = Some(prompts);
    }
    if has_resources || has_prompts {
        capabilities.completions = Some(Map::new());
    }
}

/// The URIs a 2025 session subscribed to, and the session's share of the
/// registry's resource updates: taken only while it has a subscription,
/// so a write wakes only the sessions that asked to hear of one (not every
/// open session; see `docs/benchmarks.md#the-notes-server-under-load-notes-load`).
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    state: std::sync::Mutex<Subscribed>,
    /// Wakes the session's follower when a receiver is handed over.
    handed: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Subscribed {
    uris: std::collections::HashSet<String>,
    /// The follower holds a receiver (or one is waiting in `handoff`).
    listening: bool,
    /// The receiver made by the first subscription, for the follower.
    handoff: Option<ResourceUpdates>,
}

impl Subscriptions {
    /// Subscribes to `uri`. The first subscription makes the receiver
    /// (`updates`) here, before the subscribe is answered, so no update
    /// after the answer is missed.
    pub(crate) fn add(&self, uri: String, updates: impl FnOnce() -> ResourceUpdates) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.uris.insert(uri);
        if !state.listening {
            state.listening = true;
            state.handoff = Some(updates());
            self.handed.notify_one();
        }
    }

    pub(crate) fn remove(&self, uri: &str) {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .uris
            .remove(uri);
    }

    /// Whether `uri` is subscribed to.
    #[cfg(test)]
    pub(crate) fn contains(&self, uri: &str) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .uris
            .contains(uri)
    }

    /// Waits for the receiver the first subscription made.
    pub(crate) async fn handed_over(&self) -> ResourceUpdates {
        loop {
            let handed = self.handed.notified();
            if let Some(updates) = self
                .state
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .handoff
                .take()
            {
                return updates;
            }
            handed.await;
        }
    }

    /// Whether `uri` is subscribed to, and whether the follower should
    /// keep its receiver (`false` once nothing is subscribed: the
    /// follower drops it, and the next subscription makes a new one).
    pub(crate) fn wants(&self, uri: &str) -> (bool, bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.uris.is_empty() {
            state.listening = false;
            return (false, false);
        }
        (state.uris.contains(uri), true)
    }
}
