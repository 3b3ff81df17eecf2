use gonk_tools::prelude::*;

/// A note's length.
#[resource("notes://{id}/length")]
async fn note_length(id: u64) -> u64 {
    id
}

fn main() {}
