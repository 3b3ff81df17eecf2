use gonk_tools::prelude::*;

/// One revision of a note.
#[resource("notes://{id}/revisions/{rev}")]
async fn revision(id: u64) -> String {
    id.to_string()
}

fn main() {}
