use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct NoteRef {
    pub id: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Style {
    pub tone: Option<String>,
}

/// Summarize a note.
#[prompt]
async fn summarize(note: NoteRef, style: Style) -> String {
    format!("{} {:?}", note.id, style.tone)
}

fn main() {}
