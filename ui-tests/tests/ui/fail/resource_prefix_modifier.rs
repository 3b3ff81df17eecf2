use gonk_tools::prelude::*;

/// Notes by the first letters of their id.
#[resource("notes://{id:3}")]
async fn by_prefix(id: String) -> String {
    id
}

fn main() {}
