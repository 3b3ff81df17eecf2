//! The resources, prompts and completions the suite's `resources-*`,
//! `prompts-*`, `completion-complete` and
//! `input-required-result-non-tool-request` scenarios read.

use gonk_tools::ask::InputRequest;
use gonk_tools::completion::CompletionRequest;
use gonk_tools::prelude::*;
use gonk_tools::prompt::{PromptDefinition, PromptMessage, PromptResult};
use gonk_tools::resource::{Json, ResourceContents, ResourceDefinition};
use gonk_tools::RegistryError;

use super::{one_field, RED_PIXEL_PNG};

#[derive(Deserialize, JsonSchema)]
struct TemplateVars {
    /// The id in the URI.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct TwoArguments {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct EmbedArguments {
    /// URI of the resource to embed
    resource_uri: String,
}

fn png() -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(RED_PIXEL_PNG)
        .unwrap_or_default()
}

/// Completes `arg1` of `test_prompt_with_arguments` from a fixed list.
async fn city_names(
    request: CompletionRequest,
    _ctx: ToolContext,
) -> Result<Vec<String>, ToolError> {
    Ok(["paris", "park", "party", "prague", "porto"]
        .into_iter()
        .filter(|name| name.starts_with(&request.value))
        .map(str::to_owned)
        .collect())
}

/// The prompt `test_trigger_prompt_change` adds and removes.
pub fn dynamic_prompt() -> PromptDefinition {
    PromptDefinition::builder("test_dynamic_prompt")
        .description("A prompt that comes and goes.")
        .handler(|_: NoInput, _| async { Ok::<_, ToolError>("dynamic".to_owned()) })
        .build()
}

pub fn register(registry: &ToolRegistry) -> Result<(), RegistryError> {
    // The skills extension's scenarios (SEP-2640): a skill with a
    // sub-folder, so directory reads have somewhere to descend.
    registry.register_skills(gonk_tools::embed_skills!("conformance/skills"))?;
    registry.register_resource(
        ResourceDefinition::builder("test://static-text")
            .name("static-text")
            .description("A static text resource.")
            .mime_type("text/plain")
            .handler(|_: NoInput, _| async {
                Ok::<_, ToolError>("This is the content of the static text resource.")
            })
            .build(),
    )?;
    registry.register_resource(
        ResourceDefinition::builder("test://static-binary")
            .name("static-binary")
            .description("A static binary resource (a PNG image).")
            .mime_type("image/png")
            .handler(|_: NoInput, _| async { Ok::<_, ToolError>(png()) })
            .build(),
    )?;
    registry.register_resource(
        ResourceDefinition::builder("test://watched-resource")
            .name("watched-resource")
            .description("A resource clients subscribe to.")
            .mime_type("text/plain")
            .handler(|_: NoInput, _| async { Ok::<_, ToolError>("Watched resource content.") })
            .build(),
    )?;
    registry.register_resource(
        ResourceDefinition::builder("test://template/{id}/data")
            .name("template-data")
            .description("Data for an id, from a URI template.")
            .mime_type("application/json")
            .handler(|vars: TemplateVars, _| async move {
                Ok::<_, ToolError>(Json(serde_json::json!({
                    "id": vars.id,
                    "templateTest": true,
                    "data": format!("Data for ID: {}", vars.id),
                })))
            })
            .build(),
    )?;

    registry.register_prompt(
        PromptDefinition::builder("test_simple_prompt")
            .description("A simple prompt without arguments.")
            .handler(|_: NoInput, _| async {
                Ok::<_, ToolError>("This is a simple prompt for testing.".to_owned())
            })
            .build(),
    )?;
    registry.register_prompt(
        PromptDefinition::builder("test_prompt_with_arguments")
            .description("A prompt with two arguments.")
            .handler(|args: TwoArguments, _| async move {
                Ok::<_, ToolError>(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args.arg1, args.arg2
                ))
            })
            .complete("arg1", city_names)
            .build(),
    )?;
    registry.register_prompt(
        PromptDefinition::builder("test_prompt_with_embedded_resource")
            .description("A prompt that embeds a resource.")
            .handler(|args: EmbedArguments, _| async move {
                Ok::<_, ToolError>(vec![
                    PromptMessage::user_resource(
                        ResourceContents::text("Embedded resource content for testing.")
                            .with_uri(args.resource_uri)
                            .with_mime_type("text/plain"),
                    ),
                    PromptMessage::user("Please process the embedded resource above."),
                ])
            })
            .build(),
    )?;
    registry.register_prompt(
        PromptDefinition::builder("test_prompt_with_image")
            .description("A prompt with an image.")
            .handler(|_: NoInput, _| async {
                Ok::<_, ToolError>(vec![
                    PromptMessage::user_image(png(), "image/png"),
                    PromptMessage::user("Please analyze the image above."),
                ])
            })
            .build(),
    )?;
    registry.register_prompt(
        PromptDefinition::builder("test_input_required_result_prompt")
            .description("A prompt that asks the user for context first.")
            .handler(|_: NoInput, ctx: ToolContext| async move {
                let question = InputRequest::elicit(
                    "What context should the prompt use?",
                    one_field("context", "string"),
                );
                let answer = ctx.ask(vec![("user_context".to_owned(), question)]).await?;
                let context = answer[0]["content"]["context"].as_str().unwrap_or("none");
                Ok::<_, ToolError>(PromptResult {
                    description: Some("A prompt built from the user's context.".to_owned()),
                    messages: vec![PromptMessage::user(format!("Use this context: {context}"))],
                })
            })
            .build(),
    )?;
    Ok(())
}
