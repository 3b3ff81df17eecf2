//! Prompts: message templates a client offers its user (MCP's
//! `prompts/list` and `prompts/get`), with typed arguments.
//!
//! A prompt's arguments are a struct: its properties are the advertised
//! arguments (name, description from the field's doc, required unless
//! optional). They arrive as strings, are converted to the types the
//! struct's schema asks for, and are validated against that schema before
//! the handler runs — through dispatch, like a tool (authorization against
//! a policy resource of kind `prompt`, audit, time limit, cancellation,
//! panic isolation, one metric). A prompt the caller may not discover
//! reads as missing.
//!
//! ```
//! use gonk_tools::prelude::*;
//! use gonk_tools::prompt::{PromptDefinition, PromptMessage};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Review {
//!     /// The language of the code.
//!     language: String,
//!     /// Be brief.
//!     brief: Option<bool>,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = ToolRegistry::new();
//! registry.register_prompt(
//!     PromptDefinition::builder("review")
//!         .description("Review code.")
//!         .handler(|args: Review, _ctx| async move {
//!             let style = if args.brief == Some(true) { "briefly" } else { "thoroughly" };
//!             Ok::<_, ToolError>(vec![PromptMessage::user(format!(
//!                 "Review this {} code {style}.", args.language
//!             ))])
//!         })
//!         .build(),
//! ).unwrap();
//! let prompt = registry.get_prompt_definition("review").unwrap();
//! let names: Vec<_> = prompt.arguments().iter().map(|a| (a.name.as_str(), a.required)).collect();
//! assert_eq!(names, [("brief", false), ("language", true)]); // in schema (name) order
//!
//! let args = serde_json::json!({"language": "Rust", "brief": "true"});
//! let got = registry.get_prompt("review", args.as_object().unwrap().clone(), ToolContext::new()).await.unwrap();
//! assert_eq!(got.messages[0].content.as_text(), Some("Review this Rust code briefly."));
//! # }
//! ```

mod typed;

pub use self::typed::*;

use std::future::Future;
use std::sync::Arc;

use base64::Engine as _;
use futures::FutureExt as _;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::completion::{Completers, Completion, CompletionRequest};
use crate::context::ToolContext;
use crate::definition::{ApprovalTier, Primitive, ToolBuilder, ToolDefinition};
use crate::error::ToolError;
pub use crate::resource::Role;
use crate::resource::{Icon, ResourceContents};

/// One argument of a prompt, as advertised.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is (the field's doc comment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the client must send it.
    #[serde(default)]
    pub required: bool,
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: PromptContent,
}

impl PromptMessage {
    /// A user text message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, PromptContent::Text { text: text.into() })
    }

    /// An assistant text message.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, PromptContent::Text { text: text.into() })
    }

    /// A user message carrying an image.
    pub fn user_image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self::new(
            Role::User,
            PromptContent::Image {
                data: data.into(),
                mime_type: mime_type.into(),
            },
        )
    }

    /// A user message embedding a resource's contents.
    pub fn user_resource(contents: ResourceContents) -> Self {
        Self::new(Role::User, PromptContent::Resource(contents))
    }

    /// A message from `role` with `content`.
    pub fn new(role: Role, content: PromptContent) -> Self {
        PromptMessage { role, content }
    }
}

/// The content of a [`PromptMessage`], in MCP's wire shape (`type`:
/// `text`, `image`, `audio`, `resource`, `resource_link`; bytes base64).
#[derive(Clone, Debug, PartialEq)]
pub enum PromptContent {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Its bytes.
        data: Vec<u8>,
        /// Its MIME type.
        mime_type: String,
    },
    /// Audio.
    Audio {
        /// Its bytes.
        data: Vec<u8>,
        /// Its MIME type.
        mime_type: String,
    },
    /// An embedded resource.
    Resource(ResourceContents),
    /// A link to a resource the client may read.
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its MIME type.
        mime_type: Option<String>,
    },
}

impl PromptContent {
    /// The text, if this is text.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            PromptContent::Text { text } => Some(text),
            _ => None,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentWire {
    Text {
        text: String,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    Resource {
        resource: ResourceContents,
    },
    ResourceLink {
        uri: String,
        name: String,
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl Serialize for PromptContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        match self.clone() {
            PromptContent::Text { text } => ContentWire::Text { text },
            PromptContent::Image { data, mime_type } => ContentWire::Image {
                data: b64(&data),
                mime_type,
            },
            PromptContent::Audio { data, mime_type } => ContentWire::Audio {
                data: b64(&data),
                mime_type,
            },
            PromptContent::Resource(resource) => ContentWire::Resource { resource },
            PromptContent::ResourceLink {
                uri,
                name,
                mime_type,
            } => ContentWire::ResourceLink {
                uri,
                name,
                mime_type,
            },
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PromptContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = |data: String| {
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(serde::de::Error::custom)
        };
        Ok(match ContentWire::deserialize(deserializer)? {
            ContentWire::Text { text } => PromptContent::Text { text },
            ContentWire::Image { data, mime_type } => PromptContent::Image {
                data: bytes(data)?,
                mime_type,
            },
            ContentWire::Audio { data, mime_type } => PromptContent::Audio {
                data: bytes(data)?,
                mime_type,
            },
            ContentWire::Resource { resource } => PromptContent::Resource(resource),
            ContentWire::ResourceLink {
                uri,
                name,
                mime_type,
            } => PromptContent::ResourceLink {
                uri,
                name,
                mime_type,
            },
        })
    }
}

/// What `prompts/get` answers: an optional description and the messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptResult {
    /// A description of this rendering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// What a prompt handler may return: text (one user message), messages,
/// or a [`PromptResult`].
pub trait IntoPromptResult {
    /// The result.
    fn into_prompt_result(self) -> PromptResult;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> PromptResult {
        self
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> PromptResult {
        PromptResult {
            description: None,
            messages: self,
        }
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> PromptResult {
        vec![self].into_prompt_result()
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> PromptResult {
        PromptMessage::user(self).into_prompt_result()
    }
}

pub(crate) struct PromptInner {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) get: Option<ToolDefinition>,
    pub(crate) completers: Completers,
}

/// A prompt: metadata, arguments and the handler that renders it. Cheap
/// to clone.
///
/// Make one with [`PromptDefinition::builder`] or `#[prompt]`; register it
/// with [`ToolRegistry::register_prompt`](crate::ToolRegistry::register_prompt).
#[derive(Clone)]
pub struct PromptDefinition {
    pub(crate) inner: Arc<PromptInner>,
}

impl std::fmt::Debug for PromptDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDefinition")
            .field("name", &self.inner.name)
            .field("arguments", &self.inner.arguments)
            .finish_non_exhaustive()
    }
}

impl PromptDefinition {
    /// Starts a prompt named `name`.
    pub fn builder(name: impl Into<String>) -> PromptBuilder {
        let name = name.into();
        PromptBuilder {
            get: ToolDefinition::builder(name.clone())
                .approval(ApprovalTier::Read)
                .primitive(Primitive::Prompt),
            inner: PromptInner {
                name,
                title: None,
                description: None,
                icons: Vec::new(),
                arguments: Vec::new(),
                get: None,
                completers: Completers::default(),
            },
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The human-readable title.
    pub fn title(&self) -> Option<&str> {
        self.inner.title.as_deref()
    }

    /// What it is for.
    pub fn description(&self) -> Option<&str> {
        self.inner.description.as_deref()
    }

    /// Its icons.
    pub fn icons(&self) -> &[Icon] {
        &self.inner.icons
    }

    /// The advertised arguments, from the argument struct's schema.
    pub fn arguments(&self) -> &[PromptArgument] {
        &self.inner.arguments
    }

    /// The arguments that have a completer.
    pub fn completable(&self) -> impl Iterator<Item = &str> + '_ {
        self.inner.completers.iter().map(|(name, _)| name)
    }

    /// The definition dispatch runs to render it: its input schema is the
    /// arguments' schema.
    pub fn get_definition(&self) -> Option<&ToolDefinition> {
        self.inner.get.as_ref()
    }

    pub(crate) fn completer(&self, argument: &str) -> Option<&ToolDefinition> {
        self.inner.completers.get(argument)
    }
}

/// Builds a [`PromptDefinition`]; from [`PromptDefinition::builder`].
#[must_use = "call .build() to get the definition"]
pub struct PromptBuilder {
    inner: PromptInner,
    get: ToolBuilder,
}

impl PromptBuilder {
    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner.title = Some(title.into());
        self
    }

    /// What it is for (the doc comment, from the macro).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        let description = description.into();
        self.get = self.get.description(description.clone());
        self.inner.description = Some(description);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.inner.icons.push(icon);
        self
    }

    /// Declares that the handler extracts application state `T`.
    pub fn requires_state<T: Send + Sync + 'static>(mut self) -> Self {
        self.get = self.get.requires_state::<T>();
        self
    }

    /// Stops a rendering after `limit` (`TIMEOUT`).
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        self.get = self.get.timeout(limit);
        self
    }

    /// The handler: the arguments as `A` (a struct; its properties are the
    /// advertised arguments), returning text, messages or a
    /// [`PromptResult`].
    pub fn handler<A, O, E, F, Fut>(mut self, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: IntoPromptResult + Send + 'static,
        E: Into<ToolError> + Send + 'static,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, E>> + Send + 'static,
    {
        self.inner.arguments = arguments_of(&crate::schema::input_schema_for::<A>());
        self.get = self.get.handler(move |args: A, ctx| {
            f(args, ctx).map(|r| match r {
                Ok(output) => Ok(output.into_prompt_result()),
                Err(e) => Err(e.into()),
            })
        });
        self
    }

    /// Attaches a completer to argument `argument`.
    pub fn complete<C, Fut, R, E>(mut self, argument: &str, completer: C) -> Self
    where
        C: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: Into<Completion> + Send + 'static,
        E: Into<ToolError> + Send + 'static,
    {
        let owner = self.inner.name.clone();
        self.inner
            .completers
            .attach(&owner, argument, Primitive::Prompt, completer);
        self
    }

    /// Finishes the definition; the handler and the completers' arguments
    /// are checked when it is registered.
    pub fn build(mut self) -> PromptDefinition {
        if self.inner.description.is_none() {
            self.get = self
                .get
                .description(format!("Renders prompt {}.", self.inner.name));
        }
        let get = self.get.build();
        self.inner.get = get.has_handler().then_some(get);
        PromptDefinition {
            inner: Arc::new(self.inner),
        }
    }
}

/// The advertised arguments of an argument struct's schema, in property
/// order.
fn arguments_of(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| PromptArgument {
                    name: name.clone(),
                    description: property
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    required: required.contains(&name.as_str()),
                })
                .collect()
        })
        .unwrap_or_default()
}
