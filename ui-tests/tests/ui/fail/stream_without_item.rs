use gonk_tools::prelude::*;

/// Count.
#[tool]
async fn count() -> impl futures::Stream {
    futures::stream::empty::<u32>()
}

fn main() {}
