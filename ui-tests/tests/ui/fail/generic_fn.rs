use gonk_tools::prelude::*;

/// Echo anything.
#[tool]
async fn echo<T: serde::de::DeserializeOwned>(input: T) -> String {
    let _ = input;
    String::new()
}

fn main() {}
