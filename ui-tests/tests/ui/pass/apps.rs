use gonk_tools::app::{AppResource, UiVisibility};
use gonk_tools::prelude::*;

/// Show the board.
#[tool(ui = "ui://notes/board")]
async fn board() -> String {
    "3 notes".into()
}

/// Move a note (the board calls it).
#[tool(ui(uri = "ui://notes/board", visibility = "app"), visibility = "on-demand")]
async fn board_move() -> String {
    "moved".into()
}

/// Summarize the board for the model only.
#[tool(ui(uri = "ui://notes/board", visibility = ["model"]))]
async fn board_summary() -> String {
    "summary".into()
}

struct Notes;

#[tools]
impl Notes {
    /// Refresh the board.
    #[tool(ui(uri = "ui://notes/board", visibility = ["model", "app"]))]
    async fn refresh(&self) -> String {
        "fresh".into()
    }
}

fn main() {
    let registry = ToolRegistry::new();
    registry
        .register_resource(AppResource::html("ui://notes/board", "<p>board</p>").build())
        .unwrap();
    registry
        .register_all([
            Board::definition(),
            BoardMove::definition(),
            BoardSummary::definition(),
        ])
        .unwrap();
    let visibility = |name: &str| registry.get(name).unwrap().ui().unwrap().visibility().to_vec();
    assert_eq!(visibility("board"), [UiVisibility::Model, UiVisibility::App]);
    assert_eq!(visibility("board_move"), [UiVisibility::App]);
    assert_eq!(visibility("board_summary"), [UiVisibility::Model]);
    assert_eq!(registry.get("board_move").unwrap().visibility, Visibility::OnDemand);
    let board = std::sync::Arc::new(Notes);
    registry.register_all(board.tool_definitions()).unwrap();
    assert_eq!(visibility("refresh"), [UiVisibility::Model, UiVisibility::App]);
}
