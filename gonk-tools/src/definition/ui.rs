//! [`ToolUi`]: the MCP App a tool links (`_meta.ui` of a listed tool) and
//! who may call it ([`UiVisibility`]). The resource side, and what the
//! extension is, are in the `app` module.

use serde::{Deserialize, Serialize};

/// Who may call a tool that links an app: the model, the app, or both
/// (MCP Apps' `visibility`). A host keeps a tool without
/// [`Model`](Self::Model) out of the model's tool list, and refuses a
/// call from the app of a tool without [`App`](Self::App).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UiVisibility {
    /// The model sees the tool and may call it (`"model"`).
    Model,
    /// The app, rendered by the host, may call it (`"app"`).
    App,
}

impl UiVisibility {
    /// Its name on the wire: `"model"` or `"app"`.
    pub fn as_str(self) -> &'static str {
        match self {
            UiVisibility::Model => "model",
            UiVisibility::App => "app",
        }
    }
}

/// The app a tool links, and who may call the tool: what `tools/list`
/// shows as `_meta.ui` (`{"resourceUri": "ui://…", "visibility": [..]}`).
/// Set with `#[tool(ui = "ui://…")]` (or `ui(uri = "ui://…", visibility =
/// "app")`) or [`ToolBuilder::ui`](super::ToolBuilder::ui); read with
/// [`ToolDefinition::ui`](super::ToolDefinition::ui).
///
/// ```
/// use gonk_tools::app::{ToolUi, UiVisibility};
///
/// let ui = ToolUi::new("ui://notes/board");
/// assert_eq!(ui.visibility(), [UiVisibility::Model, UiVisibility::App]);
/// let app_only = ui.with_visibility([UiVisibility::App]);
/// assert!(!app_only.visible_to_model());
/// assert_eq!(
///     serde_json::to_value(&app_only).unwrap(),
///     serde_json::json!({"resourceUri": "ui://notes/board", "visibility": ["app"]}),
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUi {
    resource_uri: String,
    visibility: Vec<UiVisibility>,
}

impl ToolUi {
    /// Links the app resource at `resource_uri` (a `ui://` URI), callable
    /// by the model and the app (MCP Apps' default).
    pub fn new(resource_uri: impl Into<String>) -> Self {
        ToolUi {
            resource_uri: resource_uri.into(),
            visibility: vec![UiVisibility::Model, UiVisibility::App],
        }
    }

    /// Who may call the tool; each value counts once. An empty list is
    /// refused at registration (no caller could reach the tool).
    pub fn with_visibility(mut self, visibility: impl IntoIterator<Item = UiVisibility>) -> Self {
        self.visibility.clear();
        for v in visibility {
            if !self.visibility.contains(&v) {
                self.visibility.push(v);
            }
        }
        self
    }

    /// The `ui://` URI of the app resource.
    pub fn resource_uri(&self) -> &str {
        &self.resource_uri
    }

    /// Who may call the tool.
    pub fn visibility(&self) -> &[UiVisibility] {
        &self.visibility
    }

    /// Whether the model may see and call the tool (`"model"` is in its
    /// visibility). A host leaves an app-only tool out of the model's
    /// tool list; the server still lists it, for the app.
    pub fn visible_to_model(&self) -> bool {
        self.visibility.contains(&UiVisibility::Model)
    }

    /// Whether the app may call the tool (`"app"` is in its visibility).
    pub fn callable_by_app(&self) -> bool {
        self.visibility.contains(&UiVisibility::App)
    }

    /// What is wrong with it, if anything: the URI is not a `ui://` URI
    /// with a path, or no one may call the tool.
    pub fn check(&self) -> Result<(), String> {
        let uri = &self.resource_uri;
        if uri.is_empty() {
            return Err(
                "it sets a UI visibility but links no app: link one with .ui(\"ui://…\") (`#[tool(ui = \"ui://…\")]`)"
                    .to_owned(),
            );
        }
        super::name::check_ui_uri(uri)?;
        if self.visibility.is_empty() {
            return Err(
                "its UI visibility is empty, so neither the model nor the app could call it: give `model`, `app` or both"
                    .to_owned(),
            );
        }
        Ok(())
    }

    pub(crate) fn set_resource_uri(&mut self, uri: String) {
        self.resource_uri = uri;
    }
}
