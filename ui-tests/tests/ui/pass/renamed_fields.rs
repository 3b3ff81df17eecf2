//! Input fields named as clients see them, by serde: a field renamed by
//! the struct's `rename_all` is written as its Rust field, one renamed on
//! its own as the string clients see. Completions and headers attach
//! under those names, so registration takes them.
use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;
use gonk_tools::prompt::Prompt;
use gonk_tools::CompletionTarget;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummarizeArgs {
    /// The note.
    pub note_id: u64,
    /// A tag.
    #[serde(rename = "topic")]
    pub tag: Option<String>,
}

/// Summarize a note.
#[prompt(complete(note_id = typed, "topic" = typed))]
async fn summarize(args: SummarizeArgs) -> String {
    format!("{} {:?}", args.note_id, args.tag)
}

/// Echoes what was typed, under the argument it completes.
async fn typed(request: CompletionRequest, _ctx: ToolContext) -> Result<Vec<String>, ToolError> {
    Ok(vec![format!("{}={}", request.argument, request.value)])
}

#[derive(Deserialize, JsonSchema)]
pub struct Query {
    #[serde(rename = "region-code")]
    pub region: String,
    pub text: String,
}

/// Search one region.
#[tool(mcp(header("region-code" = "Region")))]
async fn search(input: Query) -> String {
    input.text
}

#[tokio::main]
async fn main() {
    let def = Summarize::definition();
    assert_eq!(def.completable().collect::<Vec<_>>(), ["noteId", "topic"]);
    let registry = ToolRegistry::new();
    registry.register_prompt(def).unwrap();
    let target = CompletionTarget::Prompt(<Summarize as Prompt>::NAME.to_owned());
    for argument in ["noteId", "topic"] {
        let request = CompletionRequest {
            argument: argument.to_owned(),
            value: "r".to_owned(),
            context: Default::default(),
        };
        let completion = registry.complete(&target, request, ToolContext::new()).await.unwrap();
        assert_eq!(completion.values, [format!("{argument}=r")]);
    }

    let search = Search::definition();
    assert_eq!(search.input_schema["properties"]["region-code"]["x-mcp-header"], "Region");
    registry.register(search).unwrap();
}
