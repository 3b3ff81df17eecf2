use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct Add {
    pub a: i64,
    pub b: i64,
}

/// Add two integers.
#[tool]
async fn add(input: Add) -> i64 {
    input.a + input.b
}

fn main() {}
