use gonk_tools::prelude::*;

/// A note.
#[resource("notes://{id}", complete(note_id = note_ids))]
async fn note(id: u64) -> String {
    id.to_string()
}

fn main() {}
