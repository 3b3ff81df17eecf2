//! `notes`: a small notes app whose tools are defined once (`tools.rs`) and
//! served as a command line (this file) — every tool a subcommand — and
//! over MCP (`mcp.rs`: `notes mcp`, `notes serve`, `notes demo`).
//!
//! ```text
//! notes notes.create "Release checklist" --body "- tag v1" --tags release
//! notes notes.search release --limit 5
//! notes --db /tmp/notes.db list
//! notes mcp                      # MCP over stdio
//! notes serve --port 8808        # MCP over HTTP at http://127.0.0.1:8808/mcp
//! notes demo                     # server + MCP client, end to end
//! ```

mod diagnostics;
mod mcp;
mod store;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use gonk_tools::adapters::cli::clap::{value_parser, Arg};
use gonk_tools::adapters::cli::{exit, Cli};

use crate::store::Store;

/// The id of the global `--db` option.
const DB: &str = "db";

fn main() -> ExitCode {
    let store = Arc::new(Store::new(store::default_path()));
    let registry = match tools::registry(Arc::clone(&store)) {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("Error: the notes tools could not be registered: {error}");
            return ExitCode::from(exit::FAILURE);
        }
    };
    if diagnostics::enabled() {
        if let Err(error) = registry.register_all(diagnostics::definitions()) {
            eprintln!("Error: the diagnostic tools could not be registered: {error}");
            return ExitCode::from(exit::FAILURE);
        }
    }
    let served = registry.clone();
    let demo_store = Arc::clone(&store);
    Cli::new(registry.clone())
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
                     ~/.local/share/gonk-notes/notes.db]; ':memory:' for a throwaway one",
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
        .command(mcp::demo_command(), move |matches| {
            let db_given = matches.get_one::<PathBuf>(DB).is_some();
            mcp::run_demo(served.clone(), Arc::clone(&demo_store), db_given)
        })
        .on_parsed(move |matches| {
            if let Some(path) = matches.get_one::<PathBuf>(DB) {
                store.set_location(path.clone());
            }
            Ok(())
        })
        .run_from_env()
}
