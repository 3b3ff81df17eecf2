use gonk_tools::prelude::*;

/// Summarize a note.
#[prompt(titel = "Summarize")]
async fn summarize() -> String {
    String::new()
}

fn main() {}
