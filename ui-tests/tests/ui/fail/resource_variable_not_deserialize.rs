use gonk_tools::prelude::*;

#[derive(Serialize, JsonSchema)]
pub struct NoteId(u64);

/// A note.
#[resource("notes://{id}")]
async fn note(id: NoteId) -> String {
    id.0.to_string()
}

fn main() {}
