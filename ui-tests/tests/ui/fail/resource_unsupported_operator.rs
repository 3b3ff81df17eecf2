use gonk_tools::prelude::*;

/// Notes matching a query.
#[resource("notes://search{?q}")]
async fn search(q: String) -> String {
    q
}

fn main() {}
