//! `--search`: the gateway lists only `tools.search` and `tools.call`
//! (an unchanging `tools/list`, whatever the upstreams import), and the
//! `provider-tools` command prints the Anthropic / OpenAI / Gemini tool
//! lists of the union, every imported tool `defer_loading` under
//! `--search`.

use std::process::ExitCode;

use gonk_tools::adapters::cli::clap::{Arg, ArgMatches, Command};
use gonk_tools::adapters::cli::exit;
use gonk_tools::adapters::providers::{Anthropic, Gemini, OpenAi, Provider, ProviderTools};
use gonk_tools::search::{self, SearchOptions};
use gonk_tools::ToolRegistry;

use crate::serving::Gateway;

/// Registers the two meta-tools; the imported tools are on-demand, so
/// with them MCP lists just these two.
pub fn install(registry: &ToolRegistry) -> Result<(), String> {
    search::install(registry, SearchOptions::default())
        .map_err(|e| format!("--search: cannot register the search tools: {e}"))
}

/// The global `--search` flag.
pub fn search_arg() -> Arg {
    Arg::new("search")
        .long("search")
        .action(gonk_tools::adapters::cli::clap::ArgAction::SetTrue)
        .help("List only tools.search and tools.call (BM25 over the imported tools; call any tool by name through tools.call); provider-tools marks the rest defer_loading")
}

/// `gonk-gateway provider-tools`.
pub fn provider_tools_command() -> Command {
    Command::new("provider-tools")
        .about(
            "Print the tools as a model provider's request `tools` (JSON), deferred under --search",
        )
        .arg(
            Arg::new("provider")
                .long("provider")
                .value_name("P")
                .value_parser(["anthropic", "openai", "openai-responses", "gemini"])
                .default_value("anthropic")
                .help("The provider whose tool list to print"),
        )
}

fn entries<P: Provider>(
    registry: &ToolRegistry,
    provider: P,
    defer: bool,
) -> Result<String, String> {
    let tools = ProviderTools::new(registry.clone(), provider)
        .defer_loading(defer)
        .tools()
        .map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&*tools).map_err(|e| e.to_string())
}

/// Prints the provider list of the gateway's registry.
pub async fn run_provider_tools(gateway: Gateway, matches: ArgMatches) -> ExitCode {
    let registry = gateway.registry();
    let defer = gateway.searching();
    let printed = match matches.get_one::<String>("provider").map(String::as_str) {
        Some("openai") => entries(registry, OpenAi::chat_completions(), defer),
        Some("openai-responses") => entries(registry, OpenAi::responses(), defer),
        Some("gemini") => entries(registry, Gemini, defer),
        _ => entries(registry, Anthropic, defer),
    };
    match printed {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("Error: the tools have no provider projection: {error}");
            ExitCode::from(exit::FAILURE)
        }
    }
}
