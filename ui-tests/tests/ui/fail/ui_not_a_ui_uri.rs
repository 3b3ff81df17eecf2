use gonk_tools::prelude::*;

/// Show the board.
#[tool(ui = "https://notes.example/board")]
async fn board() -> String {
    String::new()
}

/// Move a note.
#[tool(ui(uri = "ui://", visibility = "app"))]
async fn board_move() -> String {
    String::new()
}

fn main() {}
