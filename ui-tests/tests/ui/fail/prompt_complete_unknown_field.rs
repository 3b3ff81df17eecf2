use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
pub struct SummarizeArgs {
    pub id: u64,
    pub tag: Option<String>,
}

/// Summarize a note.
#[prompt(complete(tags = tag_values))]
async fn summarize(args: SummarizeArgs) -> String {
    format!("{} {:?}", args.id, args.tag)
}

async fn tag_values(request: CompletionRequest, ctx: ToolContext) -> Result<Vec<String>, ToolError> {
    let _ = ctx;
    Ok(vec![request.value])
}

fn main() {}
