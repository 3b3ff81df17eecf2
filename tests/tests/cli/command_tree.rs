//! The CLI adapter's command tree, built from a registry whose names clash
//! in every way a real registry can: the tree still builds (clap's own
//! consistency checks pass), and each clash resolves as documented.

use std::process::ExitCode;

use gonk_tools::adapters::cli::clap::{Arg, Command};
use gonk_tools::adapters::cli::Cli;
use gonk_tools::definition::{Capabilities, CliHints};
use gonk_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    /// A value.
    x: Option<i64>,
    /// Clashes with the global `--verbose` option below.
    verbose: Option<bool>,
}

fn tool(name: &str, hints: CliHints, duplex: bool) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(format!("The {name} tool."))
        .cli(hints)
        .capabilities(Capabilities {
            duplex,
            ..Capabilities::default()
        })
        .handler(|input: Input, _ctx| async move {
            Ok::<_, ToolError>(input.x.unwrap_or(0) + i64::from(input.verbose.unwrap_or(false)))
        })
        .build()
}

fn hints(command: Option<&str>, aliases: &[&str]) -> CliHints {
    CliHints {
        command: command.map(Into::into),
        aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
        ..CliHints::default()
    }
}

fn cli() -> Cli {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            // The command hint renames it; `list` (built in) and the repeated `a` are dropped.
            tool("alpha", hints(Some("a"), &["al", "list", "a"]), false),
            // Its command is the built-in `list`: it falls back to its name.
            tool("beta", hints(Some("list"), &[]), false),
            // Duplex: never a subcommand.
            tool("gamma", hints(None, &["g"]), true),
            // An unusable command hint: the tool name is used.
            tool("delta", hints(Some("bad name"), &[]), false),
            // An application command of the same name wins.
            tool("serve", hints(None, &[]), false),
            // Its alias is taken by alpha.
            tool("epsilon", hints(None, &["al"]), false),
        ])
        .expect("valid tools");
    Cli::new(registry)
        .name("tools")
        .version("1.2.3")
        .global_arg(
            Arg::new("verbose")
                .long("verbose")
                .action(gonk_tools::adapters::cli::clap::ArgAction::SetTrue),
        )
        .command(
            Command::new("serve").about("Serve the tools."),
            |_matches| async { ExitCode::from(42) },
        )
}

#[test]
fn clashing_names_resolve_and_the_tree_passes_clap_checks() {
    let tree = cli().command_tree();
    tree.clone().debug_assert();
    let names: Vec<&str> = tree.get_subcommands().map(|c| c.get_name()).collect();
    assert_eq!(names, ["list", "serve", "a", "beta", "delta", "epsilon"]);
    let alpha = tree.find_subcommand("a").expect("alpha as `a`");
    assert_eq!(alpha.get_visible_aliases().collect::<Vec<_>>(), ["al"]);
    let epsilon = tree.find_subcommand("epsilon").expect("epsilon");
    assert_eq!(epsilon.get_visible_aliases().count(), 0);
    // The `verbose` property cannot take the global option's name.
    let longs: Vec<&str> = alpha.get_arguments().filter_map(|a| a.get_long()).collect();
    assert_eq!(longs, ["x", "input"]);
    let help = alpha.clone().render_help().to_string();
    assert!(
        help.contains("Only settable through --input: verbose"),
        "{help}"
    );
}

#[test]
fn application_commands_and_tools_run_with_their_exit_codes() {
    let cli = cli();
    assert_eq!(cli.run(["tools", "serve"]), ExitCode::from(42));
    assert_eq!(cli.run(["tools", "a", "--x", "5"]), ExitCode::from(0));
    assert_eq!(cli.run(["tools", "al", "--x", "five"]), ExitCode::from(2));
    assert_eq!(cli.run(["tools", "gamma"]), ExitCode::from(3));
    assert_eq!(cli.run(["tools", "g"]), ExitCode::from(3));
    assert_eq!(cli.run(["tools", "beta"]), ExitCode::from(0));
    assert_eq!(
        cli.run(["tools", "alpha"]),
        ExitCode::from(2),
        "renamed to `a`"
    );
    assert_eq!(cli.run(["tools", "--version"]), ExitCode::from(0));
}

#[tokio::test]
async fn run_inside_a_runtime_does_not_block_it() {
    let cli = cli();
    // `run` from async code moves to a thread of its own instead of
    // panicking on a nested runtime; `run_async` uses the current one.
    assert_eq!(cli.run(["tools", "a", "--x", "1"]), ExitCode::from(0));
    assert_eq!(
        cli.run_async(["tools", "a", "--x", "1"]).await,
        ExitCode::from(0)
    );
}

/// `run`'s runtime has the workers asked for: two unless told, one with
/// `worker_threads(1)`. (`TOKIO_WORKER_THREADS`, which overrides both, is
/// the whole test process's to set, so this test only runs without it.)
#[test]
fn run_starts_the_workers_asked_for() {
    if std::env::var_os("TOKIO_WORKER_THREADS").is_some() {
        return;
    }
    let workers = |cli: Cli| {
        cli.command(Command::new("workers"), |_matches| async {
            let workers = tokio::runtime::Handle::current().metrics().num_workers();
            ExitCode::from(u8::try_from(workers).unwrap_or(u8::MAX))
        })
        .run(["tools", "workers"])
    };
    assert_eq!(workers(cli()), ExitCode::from(2));
    assert_eq!(gonk_tools::adapters::cli::DEFAULT_WORKER_THREADS, 2);
    assert_eq!(workers(cli().worker_threads(1)), ExitCode::from(1));
    assert_eq!(
        workers(cli().worker_threads(0)),
        ExitCode::from(1),
        "at least one"
    );
}
