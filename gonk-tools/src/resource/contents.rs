//! What a resource read returns, in MCP's wire shape: text or binary
//! contents, each with its URI and MIME type.

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::ToolError;

/// One item of a resource read: text or bytes, its URI, MIME type and
/// `_meta`. Serializes as MCP's `TextResourceContents` /
/// `BlobResourceContents` (`blob` base64).
///
/// ```
/// use gonk_tools::resource::ResourceContents;
///
/// let note = ResourceContents::text("# Groceries").with_mime_type("text/markdown");
/// assert_eq!(
///     serde_json::to_value(note.with_uri("notes://1")).unwrap(),
///     serde_json::json!({"uri": "notes://1", "mimeType": "text/markdown", "text": "# Groceries"}),
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceContents {
    /// The URI; empty means the URI that was read (dispatch fills it in).
    pub uri: String,
    /// The MIME type; unset means the resource's declared one.
    pub mime_type: Option<String>,
    /// Text or bytes.
    pub body: ResourceBody,
    /// MCP `_meta` of this item (tags, provenance).
    pub meta: Option<Map<String, Value>>,
}

/// The body of [`ResourceContents`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text (`text` on the wire).
    Text(String),
    /// Bytes (`blob`, base64, on the wire).
    Blob(Vec<u8>),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(text: impl Into<String>) -> Self {
        Self::with_body(ResourceBody::Text(text.into()))
    }

    /// Binary contents.
    pub fn blob(bytes: impl Into<Vec<u8>>) -> Self {
        Self::with_body(ResourceBody::Blob(bytes.into()))
    }

    /// `value` as JSON text, MIME type `application/json`.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        let text = serde_json::to_string(value)
            .map_err(|e| ToolError::internal(format!("resource value is not JSON: {e}")))?;
        Ok(Self::text(text).with_mime_type("application/json"))
    }

    fn with_body(body: ResourceBody) -> Self {
        ResourceContents {
            uri: String::new(),
            mime_type: None,
            body,
            meta: None,
        }
    }

    /// Sets the URI (by default the URI that was read).
    pub fn with_uri(mut self, uri: impl Into<String>) -> Self {
        self.uri = uri.into();
        self
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The text, if this is text.
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            ResourceBody::Text(text) => Some(text),
            ResourceBody::Blob(_) => None,
        }
    }

    /// The bytes: the text's or the blob's.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.body {
            ResourceBody::Text(text) => text.as_bytes(),
            ResourceBody::Blob(bytes) => bytes,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    uri: String,
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
}

/// [`Wire`], borrowed: serializing copies no text.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireRef<'a> {
    uri: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mime_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blob: Option<String>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a Map<String, Value>>,
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (text, blob) = match &self.body {
            ResourceBody::Text(text) => (Some(text.as_str()), None),
            ResourceBody::Blob(bytes) => (
                None,
                Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            ),
        };
        WireRef {
            uri: &self.uri,
            mime_type: self.mime_type.as_deref(),
            text,
            blob,
            meta: self.meta.as_ref(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let body = match (wire.text, wire.blob) {
            (Some(text), None) => ResourceBody::Text(text),
            (None, Some(blob)) => ResourceBody::Blob(
                base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(serde::de::Error::custom)?,
            ),
            _ => {
                return Err(serde::de::Error::custom(
                    "resource contents carry exactly one of `text` and `blob`",
                ))
            }
        };
        Ok(ResourceContents {
            uri: wire.uri,
            mime_type: wire.mime_type,
            body,
            meta: wire.meta,
        })
    }
}

/// A value serialized as JSON text (`application/json`) when a resource
/// handler returns it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// What a resource handler may return: text (`String`, `&'static str`),
/// bytes (`Vec<u8>`), [`ResourceContents`] (one or several) or [`Json`].
pub trait IntoResourceContents {
    /// The contents.
    fn into_resource_contents(self) -> Result<Vec<ResourceContents>, ToolError>;
}

impl IntoResourceContents for String {
    fn into_resource_contents(self) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![ResourceContents::text(self)])
    }
}

impl IntoResourceContents for &'static str {
    fn into_resource_contents(self) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![ResourceContents::text(self)])
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_resource_contents(self) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![ResourceContents::blob(self)])
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_resource_contents(self) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_resource_contents(self) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(self)
    }
}

impl<T: Serialize> IntoResourceContents for Json<T> {
    fn into_resource_contents(self) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![ResourceContents::json(&self.0)?])
    }
}
