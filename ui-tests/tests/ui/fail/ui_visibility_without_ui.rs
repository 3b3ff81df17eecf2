use gonk_tools::prelude::*;

/// Move a note.
#[tool(visibility = "app")]
async fn board_move() -> String {
    String::new()
}

/// Refresh the board.
#[tool(ui(visibility = "app"))]
async fn board_refresh() -> String {
    String::new()
}

/// Show the board.
#[tool(ui(url = "ui://notes/board"))]
async fn board_show() -> String {
    String::new()
}

fn main() {}
