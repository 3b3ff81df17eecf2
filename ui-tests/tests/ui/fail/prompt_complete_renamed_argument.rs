use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct SummarizeArgs {
    pub id: u64,
    #[serde(rename = "topic")]
    pub tag: Option<String>,
}

/// An identifier names a Rust field: the name clients see goes in a string.
#[prompt(complete(topic = values))]
async fn summarize(args: SummarizeArgs) -> String {
    format!("{} {:?}", args.id, args.tag)
}

/// No arguments, nothing to complete.
#[prompt(complete("topic" = values))]
async fn greet() -> String {
    "Hello".to_owned()
}

/// A string names an argument.
#[prompt(complete("" = values))]
async fn empty(args: SummarizeArgs) -> String {
    format!("{}", args.id)
}

async fn values(request: CompletionRequest, ctx: ToolContext) -> Result<Vec<String>, ToolError> {
    let _ = ctx;
    Ok(vec![request.value])
}

fn main() {}
