use gonk_tools::prelude::*;

/// Move a note.
#[tool(ui(uri = "ui://notes/board", visibility = "ap"))]
async fn board_move() -> String {
    String::new()
}

/// Refresh the board.
#[tool(ui(uri = "ui://notes/board", visibility = ["app", "app"]))]
async fn board_refresh() -> String {
    String::new()
}

/// Hide the board.
#[tool(ui(uri = "ui://notes/board", visibility = []))]
async fn board_hide() -> String {
    String::new()
}

fn main() {}
