use gonk_tools::prelude::*;

/// A note.
#[resource("notes://{note-id}")]
async fn note(note_id: u64) -> String {
    note_id.to_string()
}

fn main() {}
