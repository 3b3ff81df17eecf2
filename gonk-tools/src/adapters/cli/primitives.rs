//! The `resource` and `prompt` subcommands: a registry's resources and
//! prompts on the command line. Each is there only when the registry has
//! at least one resource (or prompt), so a tools-only command line keeps
//! its help and its free names.
//!
//! * `resource list` — the resources and templates (URI, name, first line
//!   of the description).
//! * `resource read URI [--raw]` — text contents to stdout as they are;
//!   binary contents as base64 (one line), or their bytes with `--raw`
//!   (for `> file`; base64 by default so a terminal never gets raw bytes).
//! * `prompt list` — the prompts and their arguments.
//! * `prompt get NAME [--ARG value]..` — the rendered messages; each
//!   argument of the prompt is a flag, required when the argument is.
//!
//! `--json` prints the MCP result instead (`{"contents": [..]}`, a
//! `prompts/get` result, or the listing). A URI nothing matches, or a
//! prompt that does not exist, is `RESOURCE_NOT_FOUND` /
//! `PROMPT_NOT_FOUND` on stderr with exit code 127, as an unknown tool.

use std::collections::BTreeSet;
use std::io::Write as _;

use base64::Engine as _;
use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{json, Map, Value};

use super::{exit, render, terminal};
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::prompt::{PromptContent, PromptDefinition};
use crate::registry::ToolRegistry;
use crate::resource::{ResourceBody, ResourceContents};

/// The name of the resources subcommand.
pub(crate) const RESOURCE: &str = "resource";
/// The name of the prompts subcommand.
pub(crate) const PROMPT: &str = "prompt";

const URI_ID: &str = "uri";
const RAW_ID: &str = "raw";

/// The `resource` subcommand.
pub(crate) fn resource_command() -> Command {
    Command::new(RESOURCE)
        .about("List and read the resources")
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(Command::new("list").about("List the resources and resource templates"))
        .subcommand(
            Command::new("read")
                .about("Read the resource at a URI")
                .arg(
                    Arg::new(URI_ID)
                        .value_name("URI")
                        .required(true)
                        .help("The URI to read (a fixed URI, or one a template matches)"),
                )
                .arg(
                    Arg::new(RAW_ID)
                        .long("raw")
                        .action(ArgAction::SetTrue)
                        .help("Write binary contents as raw bytes instead of base64"),
                ),
        )
}

/// The `prompt` subcommand, with one `get` subcommand per prompt (its
/// arguments as flags). Arguments whose flag a global option already
/// takes are left out, with a warning.
pub(crate) fn prompt_command(
    prompts: &[PromptDefinition],
    reserved_longs: &BTreeSet<String>,
    warnings: &mut Vec<String>,
) -> Command {
    let mut get = Command::new("get")
        .about("Render a prompt with its arguments")
        .subcommand_required(true)
        .arg_required_else_help(true)
        // An unknown name reaches the registry, which says PROMPT_NOT_FOUND.
        .allow_external_subcommands(true);
    for prompt in prompts {
        let mut command = Command::new(prompt.name().to_owned());
        if let Some(description) = prompt.description() {
            command = command.about(description.to_owned());
        }
        for argument in prompt.arguments() {
            let long = argument.name.replace('_', "-");
            if reserved_longs.contains(&long) || matches!(long.as_str(), "help" | "json") {
                warnings.push(format!(
                    "prompt {}: argument `{}` is not available as a flag: `--{long}` is taken",
                    prompt.name(),
                    argument.name
                ));
                continue;
            }
            let mut arg = Arg::new(argument.name.clone())
                .long(long.clone())
                .value_name("VALUE")
                .required(argument.required);
            if long != argument.name {
                arg = arg.alias(argument.name.clone());
            }
            if let Some(description) = &argument.description {
                arg = arg.help(description.clone());
            }
            command = command.arg(arg);
        }
        get = get.subcommand(command);
    }
    Command::new(PROMPT)
        .about("List and render the prompts")
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(Command::new("list").about("List the prompts and their arguments"))
        .subcommand(get)
}

fn fail(error: &ToolError) -> u8 {
    terminal::stderr(&render::render_error(
        &error.code,
        &error.message,
        error.details.as_ref(),
    ));
    exit::for_error(&error.code)
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// Runs `resource …`; returns the exit code.
pub(crate) async fn run_resource(
    registry: &ToolRegistry,
    ctx: ToolContext,
    matches: &ArgMatches,
    json: bool,
) -> u8 {
    match matches.subcommand() {
        Some(("list", _)) => {
            let resources = registry.list_resources_for(&ctx).await;
            if json {
                let entries: Vec<Value> = resources
                    .iter()
                    .map(|r| {
                        json!({
                            "uri": r.uri(),
                            "name": r.name(),
                            "title": r.title(),
                            "description": r.description(),
                            "mimeType": r.mime_type(),
                            "template": r.is_template(),
                        })
                    })
                    .collect();
                terminal::stdout_json(&(Value::Array(entries).to_string() + "\n"));
                return exit::OK;
            }
            if resources.is_empty() {
                terminal::stdout("No resources.\n");
                return exit::OK;
            }
            let width = resources
                .iter()
                .map(|r| r.uri().chars().count())
                .max()
                .unwrap_or(0);
            let mut out = String::new();
            for r in &resources {
                let about = r.description().map(first_line).unwrap_or("");
                let mime = r.mime_type().map(|m| format!(" ({m})")).unwrap_or_default();
                let line = format!("{:<width$}  {}{mime}", r.uri(), r.name());
                let line = if about.is_empty() {
                    line
                } else {
                    format!("{line} — {about}")
                };
                out.push_str(line.trim_end());
                out.push('\n');
            }
            terminal::stdout(&out);
            exit::OK
        }
        Some(("read", sub)) => {
            let Some(uri) = sub.get_one::<String>(URI_ID) else {
                terminal::stderr("Error: resource read needs a URI\n");
                return exit::USAGE;
            };
            let contents = match registry.read_resource(uri, ctx).await {
                Ok(contents) => contents,
                Err(error) => return fail(&error),
            };
            if json {
                let result = json!({ "contents": contents });
                terminal::stdout_json(&(result.to_string() + "\n"));
            } else {
                write_contents(&contents, sub.get_flag(RAW_ID));
            }
            exit::OK
        }
        _ => {
            terminal::stderr("Error: use `resource list` or `resource read URI`\n");
            exit::USAGE
        }
    }
}

/// Text as it is (newline-terminated); bytes as base64, or raw.
fn write_contents(contents: &[ResourceContents], raw: bool) {
    for item in contents {
        match &item.body {
            ResourceBody::Text(text) => {
                let mut text = text.clone();
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                terminal::stdout(&text);
            }
            ResourceBody::Blob(bytes) if raw => {
                let mut out = std::io::stdout().lock();
                // A closed pipe (`| head`) is not an error worth a panic.
                let _ = out.write_all(bytes).and_then(|()| out.flush());
            }
            ResourceBody::Blob(bytes) => {
                let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
                terminal::stdout(&(encoded + "\n"));
            }
        }
    }
}

/// Runs `prompt …`; returns the exit code.
pub(crate) async fn run_prompt(
    registry: &ToolRegistry,
    ctx: ToolContext,
    matches: &ArgMatches,
    json: bool,
) -> u8 {
    match matches.subcommand() {
        Some(("list", _)) => {
            let prompts = registry.list_prompts_for(&ctx).await;
            if json {
                let entries: Vec<Value> = prompts
                    .iter()
                    .map(|p| {
                        json!({
                            "name": p.name(),
                            "title": p.title(),
                            "description": p.description(),
                            "arguments": p.arguments(),
                        })
                    })
                    .collect();
                terminal::stdout_json(&(Value::Array(entries).to_string() + "\n"));
                return exit::OK;
            }
            if prompts.is_empty() {
                terminal::stdout("No prompts.\n");
                return exit::OK;
            }
            let mut out = String::new();
            for p in &prompts {
                let about = p.description().map(first_line).unwrap_or("");
                out.push_str(format!("{}  {about}", p.name()).trim_end());
                out.push('\n');
                for a in p.arguments() {
                    let need = if a.required { "required" } else { "optional" };
                    let about = a.description.as_deref().map(first_line).unwrap_or("");
                    let line = format!("  --{} ({need}) {about}", a.name.replace('_', "-"));
                    out.push_str(line.trim_end());
                    out.push('\n');
                }
            }
            terminal::stdout(&out);
            exit::OK
        }
        Some(("get", sub)) => {
            let Some((name, args)) = sub.subcommand() else {
                terminal::stderr("Error: prompt get needs a prompt name\n");
                return exit::USAGE;
            };
            let mut arguments = Map::new();
            if let Some(prompt) = registry.get_prompt_definition(name) {
                for argument in prompt.arguments() {
                    // Flags left out of the parser (a taken name) are absent.
                    if let Ok(Some(value)) = args.try_get_one::<String>(&argument.name) {
                        arguments.insert(argument.name.clone(), Value::String(value.clone()));
                    }
                }
            }
            let result = match registry.get_prompt(name, arguments, ctx).await {
                Ok(result) => result,
                Err(error) => return fail(&error),
            };
            if json {
                let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                terminal::stdout_json(&(value.to_string() + "\n"));
                return exit::OK;
            }
            let mut out = String::new();
            if let Some(description) = &result.description {
                out.push_str(description);
                out.push_str("\n\n");
            }
            for message in &result.messages {
                let role = serde_json::to_value(message.role)
                    .ok()
                    .and_then(|r| r.as_str().map(str::to_owned))
                    .unwrap_or_default();
                out.push_str(&format!("[{role}] {}\n", content_text(&message.content)));
            }
            terminal::stdout(&out);
            exit::OK
        }
        _ => {
            terminal::stderr("Error: use `prompt list` or `prompt get NAME`\n");
            exit::USAGE
        }
    }
}

/// A message's content as terminal text.
fn content_text(content: &PromptContent) -> String {
    match content {
        PromptContent::Text { text } => text.clone(),
        PromptContent::Image { data, mime_type } => {
            format!("[image {mime_type}, {} bytes]", data.len())
        }
        PromptContent::Audio { data, mime_type } => {
            format!("[audio {mime_type}, {} bytes]", data.len())
        }
        PromptContent::Resource(resource) => {
            let mime = resource
                .mime_type
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            match &resource.body {
                ResourceBody::Text(text) => format!("[resource {}{mime}]\n{text}", resource.uri),
                ResourceBody::Blob(bytes) => {
                    format!("[resource {}{mime}, {} bytes]", resource.uri, bytes.len())
                }
            }
        }
        PromptContent::ResourceLink { uri, name, .. } => format!("[link {name}: {uri}]"),
    }
}
