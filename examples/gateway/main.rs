//! `gonk-gateway`: one MCP server in front of many. Reads the usual
//! `mcpServers` config, imports every server's tools as an
//! [`McpSource`](gonk_tools::adapters::mcp::McpSource) (names
//! `<serverId>.<remoteName>`, remote text untrusted unless `--trust ID`),
//! imports the HTTP APIs of `openapiServers` from their OpenAPI documents
//! as [`OpenApiSource`](gonk_tools::adapters::openapi::OpenApiSource)s,
//! applies the config's `transforms`, and serves the union with the
//! registry's adapters:
//!
//! * `gonk-gateway --config FILE mcp` — MCP on stdin/stdout;
//! * `gonk-gateway --config FILE serve --port N [--api-key K]` — MCP
//!   streamable HTTP at `/mcp` (both eras) and WebSocket at `/ws`;
//! * `gonk-gateway --config FILE list` — the imported tools;
//! * `gonk-gateway --config FILE call TOOL [--flags]` — one call, every
//!   imported tool a subcommand (`call` may be left out);
//! * `gonk-gateway --config FILE login SERVER` — log in to an upstream
//!   behind OAuth (`"auth": {"oauth": {…}}` in its entry) once: the token
//!   is kept in its `tokenStore` and used and refreshed by every run.
//!
//! `--audit FILE` appends an audit receipt per call (JSON lines).
//! `--approval ask` asks before the operator's `write`/`exec` calls (an
//! imported `DELETE`, a `POST`) as before a configured caller's. While
//! serving, a dead upstream — a command that exited, an HTTP server that
//! refuses connections or was restarted and forgot the session — is
//! reconnected every `--health-interval` seconds (its tools fail with
//! `REMOTE_TRANSPORT_ERROR` meanwhile, the others keep working); one that
//! cannot be reached at start keeps its namespace (its calls answer
//! `REMOTE_UNAVAILABLE`, `list` marks it) and is retried with backoff until
//! its tools can be imported (an `openapiServers` API whose document
//! cannot be read at start likewise, until it can be); and
//! SIGHUP or a change of the file reloads the config. What a call costs
//! through the gateway: `gateway-bench`, figures in `docs/benchmarks.md`.

mod callers;
mod config;
mod config_watch;
mod dev_router;
mod login;
mod rate_limits;
mod serving;
mod tool_search;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use gonk_tools::adapters::cli::clap::{value_parser, Arg, ArgAction};
use gonk_tools::adapters::cli::Cli;

use callers::CallerApproval;
use serving::Gateway;

/// The options read before the command line is built (the tools it offers
/// come from the config).
#[derive(Debug, Default)]
struct Early {
    config: Option<PathBuf>,
    trust: Vec<String>,
    audit: Option<PathBuf>,
    approval: Option<String>,
    search: bool,
}

/// The global options that take a value, for [`early`] and [`drop_call`].
const VALUED: [&str; 5] = [
    "--config",
    "--trust",
    "--audit",
    "--health-interval",
    "--approval",
];

/// Reads `--config`, `--trust` and `--audit` from argv.
fn early(args: &[OsString]) -> Early {
    let mut found = Early::default();
    let mut words = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    while let Some(word) = words.next() {
        if word == "--search" {
            found.search = true;
            continue;
        }
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (word.clone(), None),
        };
        if !VALUED.contains(&name.as_str()) && !rate_limits::VALUED.contains(&name.as_str()) {
            continue;
        }
        let Some(value) = inline.or_else(|| words.next()) else {
            break;
        };
        match name.as_str() {
            "--config" => found.config = Some(PathBuf::from(value)),
            "--trust" => found.trust.push(value),
            "--audit" => found.audit = Some(PathBuf::from(value)),
            "--approval" => found.approval = Some(value),
            _ => {}
        }
    }
    found
}

/// Where the first word of argv that is not an option nor an option's
/// value (the command) is, if any.
fn command_index(args: &[OsString]) -> Option<usize> {
    let mut i = 1;
    while i < args.len() {
        let word = args[i].to_string_lossy();
        if VALUED.contains(&word.as_ref()) || rate_limits::VALUED.contains(&word.as_ref()) {
            i += 2;
        } else if word.starts_with('-') {
            i += 1;
        } else {
            return Some(i);
        }
    }
    None
}

/// The command word of argv, if any.
fn command_word(args: &[OsString]) -> Option<String> {
    command_index(args).map(|i| args[i].to_string_lossy().into_owned())
}

/// `gonk-gateway … call TOOL …` is `gonk-gateway … TOOL …`: the command
/// word is dropped when it is `call`.
fn drop_call(mut args: Vec<OsString>) -> Vec<OsString> {
    if let Some(i) = command_index(&args).filter(|&i| args[i] == "call") {
        args.remove(i);
    }
    args
}

fn global_args() -> [Arg; 5] {
    [
        Arg::new("config")
            .long("config")
            .value_name("FILE")
            .value_parser(value_parser!(PathBuf))
            .help("The mcpServers JSON config: {\"mcpServers\": {\"id\": {\"command\", \"args\", \"env\"} | {\"url\", \"headers\"}}}"),
        Arg::new("trust")
            .long("trust")
            .value_name("SERVER")
            .action(ArgAction::Append)
            .help("Trust this server's tool descriptions and annotations (repeatable); by default they are replaced"),
        Arg::new("audit")
            .long("audit")
            .value_name("FILE")
            .value_parser(value_parser!(PathBuf))
            .help("Append an audit receipt for every call to FILE, one JSON object a line; a call whose receipt cannot be written fails"),
        Arg::new("health-interval")
            .long("health-interval")
            .value_name("SECS")
            .value_parser(value_parser!(u64).range(1..))
            .default_value("2")
            .help("While serving, how often a dead upstream is looked for and reconnected"),
        Arg::new("approval")
            .long("approval")
            .value_name("MODE")
            .value_parser(["ask", "granted"])
            .default_value("granted")
            .help("How the operator's write and exec calls (the --api-key, stdio, the command line, HTTP without keys) are approved: `ask` asks the client first (an MCP elicitation), `granted` runs them"),
    ]
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let early = early(&args);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Error: could not start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(args, early));
    runtime.shutdown_background();
    code
}

async fn run(args: Vec<OsString>, early: Early) -> ExitCode {
    let wants_help = args.iter().skip(1).any(|a| {
        let a = a.to_string_lossy();
        a == "--help" || a == "-h" || a == "--version" || a == "-V"
    });
    let approval = match early.approval.as_deref() {
        None | Some("granted") => CallerApproval::Granted,
        Some("ask") => CallerApproval::Ask,
        Some(other) => {
            eprintln!("Error: --approval {other:?}: use `ask` or `granted`");
            return ExitCode::from(gonk_tools::adapters::cli::exit::USAGE);
        }
    };
    let limits = match rate_limits::from_argv(&args) {
        Ok(limits) => limits,
        Err(error) => {
            eprintln!("Error: {error}");
            return ExitCode::from(gonk_tools::adapters::cli::exit::USAGE);
        }
    };
    // `dev status|use` reads and writes the file, `login` connects its one
    // upstream itself: neither connects the others.
    let word = command_word(&args);
    let dev_command = dev_router::command::is_dev_command(word.as_deref())
        || login::is_login_command(word.as_deref());
    let gateway = match &early.config {
        Some(_) if dev_command => Gateway::empty(),
        Some(path) => {
            let started = Gateway::start(
                path.clone(),
                early.trust,
                early.audit.as_deref(),
                limits,
                approval,
            );
            match started.await {
                Ok(gateway) if early.search => match gateway.with_search() {
                    Ok(gateway) => gateway,
                    Err(error) => {
                        eprintln!("Error: {error}");
                        return ExitCode::from(gonk_tools::adapters::cli::exit::FAILURE);
                    }
                },
                Ok(gateway) => gateway,
                Err(error) => {
                    eprintln!("Error: {error}");
                    return ExitCode::from(gonk_tools::adapters::cli::exit::FAILURE);
                }
            }
        }
        None if wants_help => Gateway::empty(),
        None => {
            eprintln!("Error: --config FILE is required (an mcpServers JSON file)");
            return ExitCode::from(gonk_tools::adapters::cli::exit::USAGE);
        }
    };
    let mut cli = Cli::new(gateway.served_registry())
        .name("gonk-gateway")
        .version(env!("CARGO_PKG_VERSION"))
        .about("One MCP server in front of many: every upstream's tools, namespaced <server>.<tool>; every tool is also a subcommand (`call TOOL` or `TOOL`).")
        .context(gateway.base_context());
    for arg in global_args() {
        cli = cli.global_arg(arg);
    }
    cli = cli.global_arg(tool_search::search_arg());
    for arg in rate_limits::args() {
        cli = cli.global_arg(arg);
    }
    let code = cli
        .command(serving::stdio_command(), {
            let gateway = gateway.clone();
            move |matches| serving::run_stdio(gateway.clone(), matches)
        })
        .command(serving::serve_command(), {
            let gateway = gateway.clone();
            move |matches| serving::run_serve(gateway.clone(), matches)
        })
        .command(dev_router::command::command(), {
            let config = early.config.clone();
            move |matches| dev_router::command::run(config.clone(), matches)
        })
        .command(login::command(), {
            let config = early.config.clone();
            move |matches| login::run(config.clone(), matches)
        })
        .command(tool_search::provider_tools_command(), {
            let gateway = gateway.clone();
            move |matches| tool_search::run_provider_tools(gateway.clone(), matches)
        })
        .run_async(drop_call(args))
        .await;
    if word.as_deref() == Some("list") {
        // The servers whose tools could not be listed, marked as such.
        for (id, error) in gateway.unreachable().await {
            println!("{id}.*  UNREACHABLE — {error} (calls answer REMOTE_UNAVAILABLE; retried while serving)");
        }
    }
    gateway.close().await;
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn call_is_dropped_only_as_the_command_word() {
        assert_eq!(
            drop_call(argv(&[
                "gw", "--config", "call", "call", "a.b", "--x", "call"
            ])),
            argv(&["gw", "--config", "call", "a.b", "--x", "call"])
        );
        assert_eq!(drop_call(argv(&["gw", "list"])), argv(&["gw", "list"]));
    }

    #[test]
    fn early_options_are_read_in_both_spellings() {
        let found = early(&argv(&[
            "gw",
            "--config=c.json",
            "--trust",
            "a",
            "--trust=b",
            "--audit",
            "x.log",
            "--approval=ask",
            "--search",
            "list",
        ]));
        assert!(found.search);
        assert_eq!(found.config, Some(PathBuf::from("c.json")));
        assert_eq!(found.trust, ["a", "b"]);
        assert_eq!(found.audit, Some(PathBuf::from("x.log")));
        assert_eq!(found.approval.as_deref(), Some("ask"));
    }
}
