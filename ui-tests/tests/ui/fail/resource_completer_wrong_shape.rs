use gonk_tools::prelude::*;

/// A note.
#[resource("notes://{id}", complete(id = note_ids))]
async fn note(id: u64) -> String {
    id.to_string()
}

async fn note_ids(prefix: String) -> Vec<String> {
    vec![prefix]
}

fn main() {}
