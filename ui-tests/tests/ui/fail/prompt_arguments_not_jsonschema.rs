use gonk_tools::prelude::*;

#[derive(Deserialize)]
pub struct SummarizeArgs {
    pub id: u64,
}

/// Summarize a note.
#[prompt]
async fn summarize(args: SummarizeArgs) -> String {
    args.id.to_string()
}

fn main() {}
