//! Resources: what an authenticated call acts on ([`ResourceRef`]), the
//! redacted form receipts carry ([`RedactedResource`]), and the
//! [`ToolResourceResolver`] that turns a tool's input into the
//! application resource it declared.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::SecurityError;
use super::principal::AuthenticatedPrincipal;
use crate::definition::AuthorizationResource;

/// A resource as the policy sees it.
///
/// For the tool itself dispatch uses `kind = "tool"`, `target = <tool
/// name>`; a resolver returns the application resource a call acts on
/// (`kind = "note"`, `target = "note-17"`, `tenant_id = "acme"`).
/// `metadata` is for the policy only: it never reaches a receipt or event.
///
/// Strings and metadata are shared (`Arc`), so passing a resource through
/// the gates and redacting it copies nothing. Build one with the `with_*`
/// methods; change metadata with [`with_metadata`](Self::with_metadata) or
/// `Arc::make_mut(&mut resource.metadata)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// The kind (`"tool"`, `"note"`).
    pub kind: Arc<str>,
    /// The specific resource (a tool name, a note id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Arc<str>>,
    /// A host-defined scope (`"workspace"`, a path prefix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Arc<str>>,
    /// The owning tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<Arc<str>>,
    /// The owning workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Arc<str>>,
    /// Anything else the policy needs. Never written to receipts.
    #[serde(default, skip_serializing_if = "no_metadata")]
    pub metadata: Arc<Map<String, Value>>,
}

fn no_metadata(metadata: &Arc<Map<String, Value>>) -> bool {
    metadata.is_empty()
}

impl ResourceRef {
    /// A resource of `kind`.
    pub fn new(kind: impl Into<Arc<str>>) -> Self {
        ResourceRef {
            kind: kind.into(),
            target: None,
            scope: None,
            tenant_id: None,
            workspace_id: None,
            metadata: Arc::default(),
        }
    }

    /// Sets the target.
    pub fn with_target(mut self, target: impl Into<Arc<str>>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// Sets the scope.
    pub fn with_scope(mut self, scope: impl Into<Arc<str>>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// Sets the tenant.
    pub fn with_tenant(mut self, tenant_id: impl Into<Arc<str>>) -> Self {
        self.tenant_id = Some(tenant_id.into());
        self
    }

    /// Sets the workspace.
    pub fn with_workspace(mut self, workspace_id: impl Into<Arc<str>>) -> Self {
        self.workspace_id = Some(workspace_id.into());
        self
    }

    /// Adds a metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        Arc::make_mut(&mut self.metadata).insert(key.into(), value);
        self
    }

    /// The redacted form: kind, target, tenant and workspace only.
    pub fn redacted(&self) -> RedactedResource {
        RedactedResource {
            kind: Arc::clone(&self.kind),
            target: self.target.clone(),
            tenant_id: self.tenant_id.clone(),
            workspace_id: self.workspace_id.clone(),
        }
    }

    /// Whether `field` is present and non-empty. `target`, `scope`,
    /// `tenantId` and `workspaceId` (or their snake_case spellings) name the
    /// fields; any other name must be a non-null metadata entry.
    pub fn has_field(&self, field: &str) -> bool {
        let text = |v: &Option<Arc<str>>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
        match field {
            "kind" => !self.kind.trim().is_empty(),
            "target" => text(&self.target),
            "scope" => text(&self.scope),
            "tenantId" | "tenant_id" => text(&self.tenant_id),
            "workspaceId" | "workspace_id" => text(&self.workspace_id),
            other => self.metadata.get(other).is_some_and(|v| !v.is_null()),
        }
    }
}

/// A resource with everything but kind, target, tenant and workspace
/// removed: what receipts and `APPROVAL_REQUIRED` details carry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RedactedResource {
    /// The kind.
    pub kind: Arc<str>,
    /// The target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Arc<str>>,
    /// The tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<Arc<str>>,
    /// The workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<Arc<str>>,
}

/// What a [`ToolResourceResolver`] is asked to resolve.
#[derive(Clone, Copy, Debug)]
pub struct ResourceResolutionRequest<'a> {
    /// The caller.
    pub principal: &'a AuthenticatedPrincipal,
    /// The tool being called.
    pub tool: &'a str,
    /// The tool's declaration: the kind and the fields it must resolve.
    pub declared: &'a AuthorizationResource,
    /// The validated input.
    pub input: &'a serde_json::Value,
    /// The call stack the tool would run with, root first, ending with `tool`.
    pub call_stack: &'a [Arc<str>],
}

/// Resolves the application resource a tool call acts on (e.g. loads the
/// note named by `input.noteId` and reports its owner tenant), so the
/// policy decides on authoritative data rather than on what the caller
/// claims.
///
/// Return `Ok(None)` when the resource does not exist. The registry then
/// checks the resolved resource's kind against the declaration and each of
/// its `required_fields` (default `target`); any failure (including `Err`)
/// is `AUTH_RESOURCE_UNRESOLVED` and the policy is not asked.
pub trait ToolResourceResolver: Send + Sync {
    /// Resolves the resource of one call.
    fn resolve<'a>(
        &'a self,
        request: ResourceResolutionRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<ResourceRef>, SecurityError>>;
}

impl<T: ToolResourceResolver + ?Sized> ToolResourceResolver for Arc<T> {
    fn resolve<'a>(
        &'a self,
        request: ResourceResolutionRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<ResourceRef>, SecurityError>> {
        (**self).resolve(request)
    }
}

/// A resolver from a synchronous closure.
///
/// ```
/// use gonk_tools::security::*;
///
/// let resolver = resolver_fn(|req: ResourceResolutionRequest<'_>| {
///     let id = req.input.get("noteId").and_then(|v| v.as_str());
///     Ok(id.map(|id| ResourceRef::new("note").with_target(id).with_tenant("acme")))
/// });
/// # let _ = resolver;
/// ```
pub fn resolver_fn<F>(f: F) -> ResolverFn<F>
where
    F: Fn(ResourceResolutionRequest<'_>) -> Result<Option<ResourceRef>, SecurityError>
        + Send
        + Sync,
{
    ResolverFn(f)
}

/// See [`resolver_fn`].
pub struct ResolverFn<F>(F);

impl<F> ToolResourceResolver for ResolverFn<F>
where
    F: Fn(ResourceResolutionRequest<'_>) -> Result<Option<ResourceRef>, SecurityError>
        + Send
        + Sync,
{
    fn resolve<'a>(
        &'a self,
        request: ResourceResolutionRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<ResourceRef>, SecurityError>> {
        let outcome = (self.0)(request);
        Box::pin(std::future::ready(outcome))
    }
}
