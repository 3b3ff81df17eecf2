//! The link from a tool to its MCP App, checked when the tool is
//! registered: a well-formed `ui://` URI, a visibility someone has, and
//! an app resource registered at that URI first.

use super::{RegistryError, ToolRegistry};
use crate::definition::ToolDefinition;

impl ToolRegistry {
    /// Checks the app a tool links, if any: a well-formed `ui://` URI, a
    /// visibility someone has, and an app resource registered at that URI.
    pub(super) fn check_app_link(&self, def: &ToolDefinition) -> Result<(), RegistryError> {
        let Some(ui) = def.ui() else {
            return Ok(());
        };
        let refused = |reason: String| RegistryError::InvalidApp {
            name: def.name.clone(),
            reason,
        };
        ui.check().map_err(refused)?;
        let uri = ui.resource_uri();
        match self.resource_at(uri) {
            None => Err(refused(format!(
                "no resource is registered at `{uri}`: register its AppResource first \
                 (registry.register_resource(AppResource::html(\"{uri}\", ..).build())), then the tool"
            ))),
            Some(resource) if resource.mime_type() != Some(crate::app::MIME_TYPE) => {
                Err(refused(format!(
                    "the resource at `{uri}` is not an MCP App (its MIME type is {}, not {}): build it with AppResource::html",
                    resource.mime_type().map_or("unset".to_owned(), |m| format!("`{m}`")),
                    crate::app::MIME_TYPE,
                )))
            }
            Some(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{AppCsp, AppPermissions, AppResource, UiVisibility, MIME_TYPE};
    use crate::error::ToolError;
    use crate::resource::ResourceDefinition;
    use crate::tool::NoInput;
    use serde_json::Value;

    fn linked(uri: &str) -> ToolDefinition {
        ToolDefinition::builder("board.show")
            .description("Show the board.")
            .ui(uri)
            .handler(|_: NoInput, _ctx| async move { Ok::<_, ToolError>("3 notes") })
            .build()
    }

    fn reason(error: RegistryError) -> String {
        match error {
            RegistryError::InvalidApp { name, reason } => {
                assert_eq!(name, "board.show");
                reason
            }
            other => panic!("expected InvalidApp, got {other:?}"),
        }
    }

    #[test]
    fn a_tool_linking_an_unregistered_app_is_refused_until_the_app_is_registered() {
        let registry = ToolRegistry::new();
        let error = registry.register(linked("ui://notes/board")).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("no resource is registered at `ui://notes/board`")
                && message.contains("register its AppResource first"),
            "{message}"
        );
        assert!(!registry.has("board.show"), "nothing registered");

        registry
            .register_resource(AppResource::html("ui://notes/board", "<p>board</p>").build())
            .unwrap();
        registry.register(linked("ui://notes/board")).unwrap();
        assert_eq!(
            registry
                .get("board.show")
                .unwrap()
                .ui()
                .unwrap()
                .resource_uri(),
            "ui://notes/board"
        );
    }

    #[test]
    fn a_tool_linking_a_resource_that_is_no_app_is_refused() {
        let registry = ToolRegistry::new();
        registry
            .register_resource(
                ResourceDefinition::builder("ui://notes/board")
                    .mime_type("text/html")
                    .handler(|_: NoInput, _ctx| async move { Ok::<_, ToolError>("<p>") })
                    .build(),
            )
            .unwrap();
        let why = reason(registry.register(linked("ui://notes/board")).unwrap_err());
        assert!(
            why.contains("not an MCP App") && why.contains("`text/html`"),
            "{why}"
        );
    }

    #[test]
    fn a_malformed_link_is_refused_with_the_form_it_takes() {
        let registry = ToolRegistry::new();
        let why = reason(
            registry
                .register(linked("https://notes/board"))
                .unwrap_err(),
        );
        assert!(why.contains("is not a `ui://` URI"), "{why}");
        let nobody = ToolDefinition::builder("board.show")
            .description("Show the board.")
            .ui("ui://notes/board")
            .ui_visibility([])
            .handler(|_: NoInput, _ctx| async move { Ok::<_, ToolError>("x") })
            .build();
        let why = reason(registry.register(nobody).unwrap_err());
        assert!(why.contains("visibility is empty"), "{why}");
        let no_uri = ToolDefinition::builder("board.show")
            .description("Show the board.")
            .ui_visibility([UiVisibility::App])
            .handler(|_: NoInput, _ctx| async move { Ok::<_, ToolError>("x") })
            .build();
        let why = reason(registry.register(no_uri).unwrap_err());
        assert!(why.contains("links no app"), "{why}");
    }

    #[test]
    fn the_visibility_given_first_survives_the_uri() {
        let def = ToolDefinition::builder("board.move")
            .description("Move a note.")
            .ui_visibility([UiVisibility::App, UiVisibility::App])
            .ui("ui://notes/board")
            .handler(|_: NoInput, _ctx| async move { Ok::<_, ToolError>("x") })
            .build();
        let ui = def.ui().unwrap();
        assert_eq!(ui.visibility(), [UiVisibility::App]);
        assert_eq!(ui.resource_uri(), "ui://notes/board");
    }

    #[tokio::test]
    async fn an_app_resource_reads_as_html_with_its_meta() {
        let registry = ToolRegistry::new();
        registry
            .register_resource(
                AppResource::html("ui://notes/board", "<!doctype html><p>board</p>")
                    .csp(AppCsp::default().connect_domain("https://api.example.com"))
                    .permissions(AppPermissions::default().clipboard_write())
                    .domain("board.example-content.com")
                    .prefers_border(true)
                    .build(),
            )
            .unwrap();
        let read = registry
            .read_resource("ui://notes/board", crate::ToolContext::new())
            .await
            .unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].as_text(), Some("<!doctype html><p>board</p>"));
        assert_eq!(read[0].mime_type.as_deref(), Some(MIME_TYPE));
        let expected = serde_json::json!({"ui": {
            "csp": {"connectDomains": ["https://api.example.com"]},
            "permissions": {"clipboardWrite": {}},
            "domain": "board.example-content.com",
            "prefersBorder": true,
        }});
        assert_eq!(
            read[0].meta.clone().map(Value::Object),
            Some(expected.clone())
        );
        let listed = registry.resources();
        assert_eq!(listed[0].meta().cloned().map(Value::Object), Some(expected));
    }

    #[test]
    fn an_app_resource_with_a_bad_csp_is_refused() {
        let error = ToolRegistry::new()
            .register_resource(
                AppResource::html("ui://notes/board", "<p>")
                    .csp(AppCsp::default().connect_domain("https://api.example.com; script-src *"))
                    .build(),
            )
            .unwrap_err();
        let message = error.to_string();
        assert!(message.contains("connectDomains"), "{message}");
    }
}
