//! The notes command line: every tool a subcommand (the `Cli` adapter),
//! plus `mcp`, `serve` and `demo` (`mcp.rs`), `pi` and `pi-extension`
//! (`pi.rs`), `surface`, and the global `--db`, `--approval`
//! (`approval.rs`), `--rate-limit` and `--shared` (`limits.rs`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use gonk_tools::adapters::cli::clap::{value_parser, Arg, ArgAction, Command};
use gonk_tools::adapters::cli::{exit, Cli};
use gonk_tools::{ToolDefinition, ToolRegistry};

use crate::approval::{self, Approval};
use crate::store::{self, Store};
use crate::{limits, mcp, otel, pi, saved, tools};

/// The id of the global `--db` option.
const DB: &str = "db";

/// `notes surface`: the advertised surface, as the CI snapshot pins it.
fn surface_command() -> Command {
    Command::new("surface").about(
        "Print the tools' advertised surface (names, descriptions, schemas, approval, hints) as stable JSON; \
         examples/notes/surface.json pins it",
    )
}

/// Prints the surface of `registry` on stdout.
fn run_surface(registry: &ToolRegistry) -> ExitCode {
    use std::io::Write;
    let surface = gonk_tools::surface::surface(registry);
    let text = serde_json::to_string_pretty(&surface).unwrap_or_else(|e| e.to_string());
    // A closed pipe (`notes surface | head`) is not an error worth a panic.
    let _ = writeln!(std::io::stdout().lock(), "{text}");
    ExitCode::SUCCESS
}

fn failure(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(exit::FAILURE)
}

/// Runs `notes` on this process's argv: the notes tools, the saved
/// searches of `NOTES_SAVED_SEARCHES`, and `extra` tools (none in the
/// `notes` binary; the test fixture adds its diagnostic tools).
pub fn run(extra: Vec<ToolDefinition>) -> ExitCode {
    // `args_os`: a non-UTF-8 argument is the command line's to refuse, not a panic here.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let flagged = argv.iter().any(|arg| arg == "--otel");
    let limits = match limits::from_argv(&argv) {
        Ok(limits) => limits,
        Err(error) => {
            eprintln!("Error: {error}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let nats = match limits::jobs_on_nats(&argv) {
        Ok(nats) => nats,
        Err(error) => {
            eprintln!("Error: {error}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let telemetry = otel::start(flagged);
    let metrics = telemetry.as_ref().map(|(_, metrics)| Arc::clone(metrics));
    let code = run_with(extra, metrics, limits, nats);
    if let Some((pipeline, _)) = telemetry {
        otel::stop(pipeline);
    }
    code
}

fn run_with(
    extra: Vec<ToolDefinition>,
    metrics: Option<Arc<dyn gonk_tools::metrics::MetricsSink>>,
    limits: Option<gonk_tools::rate_limit::RateLimits>,
    nats: Option<(String, gonk_tools::jobs::NatsJobConfig)>,
) -> ExitCode {
    let store = Arc::new(Store::new(store::default_path()));
    // The provider only acts on authenticated calls: `--approval ask`.
    let registry = match tools::registry_with_limits(
        Arc::clone(&store),
        approval::security(),
        metrics,
        limits,
        nats,
    ) {
        Ok(registry) => registry,
        Err(error) => return failure(format!("the notes tools could not be registered: {error}")),
    };
    let saved = match saved::from_env() {
        Ok(saved) => saved,
        Err(error) => return failure(error),
    };
    if let Err(error) = registry.register_all(saved) {
        return failure(format!(
            "the saved searches could not be registered: {error}"
        ));
    }
    if let Err(error) = registry.register_all(extra) {
        return failure(format!("the extra tools could not be registered: {error}"));
    }
    let [rate_limit, shared] = limits::args();
    let served = registry.clone();
    let demo_store = Arc::clone(&store);
    Cli::new(registry)
        // SQLite's longer work runs on blocking threads (`pool.rs`), so a
        // second worker mostly wakes, finds nothing to take and sleeps
        // again, on every request: one worker costs less CPU per call and
        // serves as many calls a second (docs/benchmarks.md, "the fourth
        // cut"). `TOKIO_WORKER_THREADS` still says otherwise.
        .worker_threads(1)
        .name("notes")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Notes in a local SQLite database; every tool is a subcommand.")
        .global_arg(
            Arg::new(DB)
                .long("db")
                .value_name("PATH")
                .value_parser(value_parser!(PathBuf))
                .help(
                    "The SQLite database [default: $XDG_DATA_HOME/gonk-notes/notes.db or \
                     ~/.local/share/gonk-notes/notes.db]; ':memory:' for a throwaway one; \
                     postgres://HOST/DB for PostgreSQL",
                ),
        )
        .global_arg(approval::arg())
        .global_arg(rate_limit)
        .global_arg(shared)
        .context_from_args(|matches, context| {
            Ok(match approval::from_matches(matches) {
                Approval::Off => context,
                Approval::Ask => context.with_auth(approval::local_user()),
            })
        })
        .global_arg(
            Arg::new(otel::FLAG)
                .long(otel::FLAG)
                .action(ArgAction::SetTrue)
                .help(
                    "Export traces and metrics over OTLP (also on when OTEL_EXPORTER_OTLP_ENDPOINT is set; \
                     the standard OTEL_* variables configure it)",
                ),
        )
        .command(mcp::stdio_command(), {
            let registry = served.clone();
            move |matches| mcp::run_stdio(registry.clone(), matches)
        })
        .command(mcp::serve_command(), {
            let registry = served.clone();
            move |matches| mcp::run_serve(registry.clone(), matches)
        })
        .command(pi::bridge_command(), {
            let registry = served.clone();
            move |matches| pi::run_bridge(registry.clone(), matches)
        })
        .command(pi::extension_command(), |matches| {
            pi::run_extension(
                matches.get_one::<PathBuf>(DB).cloned(),
                approval::from_matches(&matches),
            )
        })
        .command(surface_command(), {
            let registry = served.clone();
            move |_| {
                let code = run_surface(&registry);
                async move { code }
            }
        })
        .command(mcp::demo_command(), move |matches| {
            let db_given = matches.get_one::<PathBuf>(DB).is_some();
            mcp::run_demo(served.clone(), Arc::clone(&demo_store), db_given)
        })
        .on_parsed(move |matches| {
            if let Some(path) = matches.get_one::<PathBuf>(DB) {
                store.set_database(store::database_from_arg(path.clone()));
            }
            Ok(())
        })
        .run_from_env()
}
