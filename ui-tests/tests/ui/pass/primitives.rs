//! `#[resource]` and `#[prompt]` in every parameter and return form, with
//! absolute paths only: nothing of gonk_tools is imported here.

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Args {
    /// A field.
    pub a: String,
}

pub struct Db(u32);

/// Fixed URI, no parameters.
#[gonk_tools::resource("app://version")]
pub async fn version() -> String {
    "1".into()
}

/// One variable, state and context, a Result.
#[gonk_tools::resource("app://items/{id}", complete(id = ids))]
pub async fn item(
    db: gonk_tools::State<Db>,
    id: u64,
    ctx: gonk_tools::ToolContext,
) -> Result<Vec<u8>, gonk_tools::ToolError> {
    let _ = ctx;
    Ok(vec![db.0 .0 as u8, id as u8])
}

/// Several variables and a raw identifier: `ItemFieldParams`.
#[gonk_tools::resource("app://items/{id}/{type}{#section}", type_name = ItemField)]
pub async fn item_field(id: u64, r#type: String, section: String) -> gonk_tools::resource::ResourceContents {
    gonk_tools::resource::ResourceContents::text(format!("{id}{type}{section}", type = r#type))
}

/// JSON.
#[gonk_tools::resource("app://all", mime_type = "application/json")]
pub async fn all() -> gonk_tools::resource::Json<Vec<u32>> {
    gonk_tools::resource::Json(vec![1])
}

/// Completes ids.
pub async fn ids(
    request: gonk_tools::completion::CompletionRequest,
    ctx: gonk_tools::ToolContext,
) -> Result<gonk_tools::completion::Completion, gonk_tools::ToolError> {
    let _ = ctx;
    Ok(vec![request.value].into())
}

/// A prompt with arguments, state and a completion.
#[gonk_tools::prompt(title = "P", complete(a = ids), timeout = "5s")]
pub async fn with_args(args: Args, db: gonk_tools::State<Db>) -> Vec<gonk_tools::prompt::PromptMessage> {
    vec![gonk_tools::prompt::PromptMessage::user(format!("{}{}", args.a, db.0 .0))]
}

/// A prompt without arguments, by reference context.
#[gonk_tools::prompt(name = "bare")]
pub async fn bare(ctx: &gonk_tools::ToolContext) -> Result<gonk_tools::prompt::PromptResult, std::convert::Infallible> {
    let _ = ctx;
    Ok(gonk_tools::prompt::PromptResult { description: None, messages: Vec::new() })
}

fn main() {
    use gonk_tools::prompt::Prompt;
    use gonk_tools::resource::Resource;

    let registry = gonk_tools::ToolRegistry::builder().state(Db(3)).build();
    registry.register_resource(Version::definition()).unwrap();
    registry.register_resource(Item::definition()).unwrap();
    registry.register_resource(ItemField::definition()).unwrap();
    registry.register_resource(All::definition()).unwrap();
    registry.register_prompt(WithArgs::definition()).unwrap();
    registry.register_prompt(Bare::definition()).unwrap();
    let params = ItemFieldParams { id: 1, r#type: "t".into(), section: "s".into() };
    assert_eq!(ItemField::uri(&params), "app://items/1/t#s");
    assert_eq!(Item::uri(&5), "app://items/5");
    assert_eq!(Version::uri(&()), "app://version");
    assert_eq!(<Bare as Prompt>::NAME, "bare");
    let _: fn() -> gonk_tools::prompt::PromptDefinition = <WithArgs as Prompt>::definition;
}
