use gonk_tools::prelude::*;

pub struct Store;

/// A note.
#[resource("notes://{id}")]
async fn note(id: u64, store: State<Store>, rev: u32) -> String {
    let _ = store;
    format!("{id}@{rev}")
}

fn main() {}
