//! MCP Apps (`io.modelcontextprotocol/ui`) on the wire: the server's
//! declaration of the extension, and what a client declared of it, for
//! [`ToolContext::ui_supported`](crate::ToolContext::ui_supported). The
//! tool's `_meta.ui` is in [`tools`](super::tools), the app resource's in
//! [`resources`](super::resources); [`crate::app`] holds the types.

use rmcp::model::{ClientCapabilities, RequestMetaObject};
use serde_json::{json, Value};

use crate::app::{UiCapability, EXTENSION_ID, MIME_TYPE};

/// Declares the extension in `capabilities` (SEP-2133: a server lists the
/// extensions it implements), with the MIME type it serves apps as. The
/// app resources are resources, so that capability is declared already.
pub(crate) fn declare(capabilities: &mut rmcp::model::ServerCapabilities) {
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(
            EXTENSION_ID.to_owned(),
            json!({ "mimeTypes": [MIME_TYPE] })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
}

/// What a 2025 session's client declared of the extension at `initialize`.
pub(crate) fn declared(capabilities: Option<&ClientCapabilities>) -> Option<UiCapability> {
    let settings = capabilities?.extensions.as_ref()?.get(EXTENSION_ID)?;
    Some(settings_of(settings.get("mimeTypes")))
}

/// What a stateless request's `_meta` declares of the extension, read off
/// the raw map (as the asking kinds are: decoding the whole capabilities
/// object would cost every call).
pub(crate) fn in_meta(meta: &RequestMetaObject) -> Option<UiCapability> {
    let settings = meta
        .0
         .0
        .get("io.modelcontextprotocol/clientCapabilities")?
        .get("extensions")?
        .get(EXTENSION_ID)?;
    settings
        .is_object()
        .then(|| settings_of(settings.get("mimeTypes")))
}

fn settings_of(mime_types: Option<&Value>) -> UiCapability {
    let mime_types = mime_types
        .and_then(Value::as_array)
        .map(|types| types.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default();
    UiCapability::new(mime_types)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stateless_request_declares_the_extension_in_its_meta() {
        let meta: RequestMetaObject = serde_json::from_value(json!({
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": { EXTENSION_ID: { "mimeTypes": [MIME_TYPE] } }
            }
        }))
        .unwrap();
        assert!(in_meta(&meta).is_some_and(|ui| ui.renders_apps()));
        let other: RequestMetaObject = serde_json::from_value(json!({
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": { EXTENSION_ID: { "mimeTypes": ["text/uri-list"] } }
            }
        }))
        .unwrap();
        assert!(in_meta(&other).is_some_and(|ui| !ui.renders_apps()));
        let none: RequestMetaObject = serde_json::from_value(json!({
            "io.modelcontextprotocol/clientCapabilities": {}
        }))
        .unwrap();
        assert_eq!(in_meta(&none), None);
    }
}
