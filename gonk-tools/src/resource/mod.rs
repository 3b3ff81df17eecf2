//! Resources: readable context an MCP client lists and reads by URI —
//! fixed (`notes://recent`) or from a URI template (`notes://{id}`).
//!
//! A resource is served by a handler that dispatch runs like a tool's:
//! the template's variables are its input, validated against their schema
//! (strings from the URI converted to the types it asks for); an
//! authenticated read is authorized (discover, then invoke, of a policy
//! resource of kind `resource` whose target is the template), audited,
//! timed, cancellable, isolated from panics and counted in one metric. A
//! resource the caller may not discover reads as missing.
//!
//! Define one with `#[resource("notes://{id}")]` on an async fn, or with
//! [`ResourceDefinition::builder`]:
//!
//! ```
//! use gonk_tools::prelude::*;
//! use gonk_tools::resource::{ResourceContents, ResourceDefinition};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct NoteId { id: u64 }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = ToolRegistry::new();
//! registry.register_resource(
//!     ResourceDefinition::builder("notes://{id}")
//!         .name("note")
//!         .description("A note as Markdown.")
//!         .mime_type("text/markdown")
//!         .handler(|vars: NoteId, _ctx| async move {
//!             Ok::<_, ToolError>(format!("# Note {}", vars.id))
//!         })
//!         .build(),
//! ).unwrap();
//! let read = registry.read_resource("notes://12", ToolContext::new()).await.unwrap();
//! assert_eq!(read[0].as_text(), Some("# Note 12"));
//! assert_eq!(read[0].uri, "notes://12");
//! assert_eq!(read[0].mime_type.as_deref(), Some("text/markdown"));
//! # }
//! ```

mod contents;
mod template;
mod typed;

use std::future::Future;
use std::sync::Arc;

use futures::FutureExt as _;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use self::contents::{IntoResourceContents, Json, ResourceBody, ResourceContents};
pub use self::template::{TemplateError, UriTemplate};
pub use self::typed::*;
use crate::completion::{Completers, Completion, CompletionRequest};
use crate::context::ToolContext;
use crate::definition::{ApprovalTier, Primitive, ToolBuilder, ToolDefinition};
use crate::error::ToolError;

/// Who a resource (or a message) is meant for (MCP's `Role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human.
    User,
    /// The model.
    Assistant,
}

/// An icon a client may show (MCP's `Icon`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes, as `48x48` or `any`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
        }
    }

    /// Sets its MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Adds a size (`48x48`, `any`).
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }
}

/// A resource's annotations (MCP's `Annotations`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceAnnotations {
    /// Who it is meant for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<Role>,
    /// How important it is, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When it last changed (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl ResourceAnnotations {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.audience.is_empty() && self.priority.is_none() && self.last_modified.is_none()
    }
}

pub(crate) struct ResourceInner {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) annotations: ResourceAnnotations,
    pub(crate) meta: Option<serde_json::Map<String, serde_json::Value>>,
    pub(crate) read: Option<ToolDefinition>,
    pub(crate) completers: Completers,
}

/// A resource (fixed URI) or resource template: metadata and the handler
/// that reads it. Cheap to clone.
///
/// Make one with [`ResourceDefinition::builder`] or `#[resource]`;
/// register it with [`ToolRegistry::register_resource`](crate::ToolRegistry::register_resource).
#[derive(Clone)]
pub struct ResourceDefinition {
    pub(crate) inner: Arc<ResourceInner>,
}

impl std::fmt::Debug for ResourceDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceDefinition")
            .field("uri", &self.inner.uri)
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

impl ResourceDefinition {
    /// Starts a resource at `uri`: a fixed URI, or an RFC 6570 level 1–2
    /// template (`notes://{id}`, `file:///{+path}`), checked when it is
    /// registered.
    pub fn builder(uri: impl Into<String>) -> ResourceBuilder {
        let uri = uri.into();
        ResourceBuilder {
            read: ToolDefinition::builder(uri.clone())
                .approval(ApprovalTier::Read)
                .primitive(Primitive::Resource),
            inner: ResourceInner {
                name: uri.clone(),
                uri,
                title: None,
                description: None,
                mime_type: None,
                size: None,
                icons: Vec::new(),
                annotations: ResourceAnnotations::default(),
                meta: None,
                read: None,
                completers: Completers::default(),
            },
        }
    }

    /// The URI, or the template as written.
    pub fn uri(&self) -> &str {
        &self.inner.uri
    }

    /// Whether the URI is a template (it has variables).
    pub fn is_template(&self) -> bool {
        self.inner.uri.contains('{')
    }

    /// The template, parsed; an error for a malformed one.
    pub fn template(&self) -> Result<UriTemplate, TemplateError> {
        UriTemplate::parse(&self.inner.uri)
    }

    /// The name (by default the URI).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The human-readable title.
    pub fn title(&self) -> Option<&str> {
        self.inner.title.as_deref()
    }

    /// What it holds (models read this).
    pub fn description(&self) -> Option<&str> {
        self.inner.description.as_deref()
    }

    /// The MIME type of its contents.
    pub fn mime_type(&self) -> Option<&str> {
        self.inner.mime_type.as_deref()
    }

    /// Its size in bytes, when declared.
    pub fn size(&self) -> Option<u64> {
        self.inner.size
    }

    /// Its icons.
    pub fn icons(&self) -> &[Icon] {
        &self.inner.icons
    }

    /// Its annotations.
    pub fn annotations(&self) -> &ResourceAnnotations {
        &self.inner.annotations
    }

    /// The `_meta` listed with it (`resources/list`): an app resource's
    /// `ui` entry (see `AppResource`).
    pub fn meta(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        self.inner.meta.as_ref()
    }

    /// The variables (or arguments) that have a completer.
    pub fn completable(&self) -> impl Iterator<Item = &str> + '_ {
        self.inner.completers.iter().map(|(name, _)| name)
    }

    /// The definition dispatch runs to read it: its input schema is the
    /// variables' schema.
    pub fn read_definition(&self) -> Option<&ToolDefinition> {
        self.inner.read.as_ref()
    }

    pub(crate) fn completer(&self, argument: &str) -> Option<&ToolDefinition> {
        self.inner.completers.get(argument)
    }
}

/// Builds a [`ResourceDefinition`]; from [`ResourceDefinition::builder`].
#[must_use = "call .build() to get the definition"]
pub struct ResourceBuilder {
    inner: ResourceInner,
    read: ToolBuilder,
}

impl ResourceBuilder {
    /// The name clients list it under (default: the URI).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.inner.name = name.into();
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner.title = Some(title.into());
        self
    }

    /// What it holds (the doc comment, from the macro).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        let description = description.into();
        self.read = self.read.description(description.clone());
        self.inner.description = Some(description);
        self
    }

    /// The MIME type of its contents (the default of contents that set
    /// none).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.inner.mime_type = Some(mime_type.into());
        self
    }

    /// Its size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.inner.size = Some(size);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.inner.icons.push(icon);
        self
    }

    /// Who it is meant for.
    pub fn audience(mut self, audience: Vec<Role>) -> Self {
        self.inner.annotations.audience = audience;
        self
    }

    /// How important it is, 0 to 1.
    pub fn priority(mut self, priority: f64) -> Self {
        self.inner.annotations.priority = Some(priority);
        self
    }

    /// All annotations at once.
    pub fn annotations(mut self, annotations: ResourceAnnotations) -> Self {
        self.inner.annotations = annotations;
        self
    }

    /// The `_meta` listed with it on `resources/list` (a read's contents
    /// carry their own, [`ResourceContents::with_meta`]).
    pub fn meta(mut self, meta: serde_json::Map<String, serde_json::Value>) -> Self {
        self.inner.meta = Some(meta);
        self
    }

    /// Declares that the handler extracts application state `T`; the
    /// registry refuses the resource until it holds a `T`.
    pub fn requires_state<T: Send + Sync + 'static>(mut self) -> Self {
        self.read = self.read.requires_state::<T>();
        self
    }

    /// Stops a read after `limit` (`TIMEOUT`).
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        self.read = self.read.timeout(limit);
        self
    }

    /// The handler: the template's variables as `V` (a struct with one
    /// field per variable; [`NoInput`](crate::NoInput) for a fixed URI),
    /// returning text, bytes, [`ResourceContents`] or [`Json`].
    pub fn handler<V, O, E, F, Fut>(mut self, f: F) -> Self
    where
        V: DeserializeOwned + JsonSchema + Send + 'static,
        O: IntoResourceContents + Send + 'static,
        E: Into<ToolError> + Send + 'static,
        F: Fn(V, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
    {
        self.read = self.read.handler(move |vars: V, ctx| {
            f(vars, ctx).map(|r| match r {
                Ok(output) => output.into_resource_contents(),
                Err(e) => Err(e.into()),
            })
        });
        self
    }

    /// Attaches a completer to template variable `variable`
    /// (`completion/complete`): it gets what was typed and the variables
    /// resolved so far.
    pub fn complete<C, Fut, R, E>(mut self, variable: &str, completer: C) -> Self
    where
        C: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: Into<Completion> + Send + 'static,
        E: Into<ToolError> + Send + 'static,
    {
        let owner = self.inner.uri.clone();
        self.inner
            .completers
            .attach(&owner, variable, Primitive::Resource, completer);
        self
    }

    /// Finishes the definition. The template, the handler and the
    /// completers' variables are checked when it is registered.
    pub fn build(mut self) -> ResourceDefinition {
        if self.inner.description.is_none() {
            self.read = self.read.description(format!("Reads {}.", self.inner.uri));
        }
        let read = self.read.build();
        self.inner.read = read.has_handler().then_some(read);
        ResourceDefinition {
            inner: Arc::new(self.inner),
        }
    }
}
