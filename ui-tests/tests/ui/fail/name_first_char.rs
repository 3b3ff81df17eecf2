use gonk_tools::prelude::*;

/// A tool whose name comes from a fn starting with an underscore.
#[tool]
async fn _private_tool() {}

fn main() {}
