//! The notes tools in the Pi coding agent — the same registry the command
//! line and MCP serve:
//!
//! * `notes pi-extension` writes the Pi extension (TypeScript) that starts
//!   this binary, with the same `--db`, as `notes pi`;
//! * `notes pi` serves the tools to that extension over the JSON-lines
//!   bridge on stdin/stdout.
//!
//! ```text
//! notes --db ~/notes.db pi-extension > notes.ts
//! pi -e ./notes.ts
//! ```
//!
//! With `--approval ask` (`notes --approval ask pi-extension > notes.ts`),
//! the extension starts `notes --approval ask pi`: calls run as the local
//! user and the write tools ask in Pi (a confirm dialog) before they run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gonk_tools::adapters::cli::clap::{ArgMatches, Command};
use gonk_tools::adapters::cli::exit;
use gonk_tools::adapters::pi::{serve_pi, write_pi_extension, PiLaunch, PiOptions};
use gonk_tools::{ToolContext, ToolRegistry};

use crate::approval::{from_matches, local_user, Approval};
use crate::store::MEMORY;

fn failure(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(exit::FAILURE)
}

/// `notes pi`.
pub fn bridge_command() -> Command {
    Command::new("pi").about(
        "Serve the notes tools to the Pi coding agent on stdin/stdout (the extension `notes pi-extension` writes starts it)",
    )
}

/// Runs `notes pi` until the extension closes stdin.
pub async fn run_bridge(registry: ToolRegistry, matches: ArgMatches) -> ExitCode {
    let mut options = PiOptions::new();
    // As for MCP: the local user's calls, so the gate asks before a write.
    if from_matches(&matches) == Approval::Ask {
        let caller = local_user();
        options = options.base_context(move || ToolContext::new().with_auth(caller.clone()));
    }
    match serve_pi(registry, options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(error),
    }
}

/// `notes pi-extension`.
pub fn extension_command() -> Command {
    Command::new("pi-extension").about(
        "Write the Pi extension that adds the notes tools to Pi: `notes --db PATH pi-extension > notes.ts`, then `pi -e ./notes.ts`",
    )
}

/// The database as the extension passes it: absolute, since Pi starts the
/// bridge from its own working directory.
fn absolute(db: &Path) -> std::io::Result<PathBuf> {
    if db == Path::new(MEMORY) {
        return Ok(db.to_path_buf());
    }
    std::path::absolute(db)
}

fn launch(db: Option<&Path>, approval: Approval) -> std::io::Result<PiLaunch> {
    let mut launch = PiLaunch::current_exe()?.name("notes");
    if let Some(db) = db {
        let db = absolute(db)?;
        let db = db.to_str().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the database path {db:?} is not UTF-8"),
            )
        })?;
        launch = launch.args(["--db", db]);
    }
    if approval == Approval::Ask {
        launch = launch.args(["--approval", "ask"]);
    }
    Ok(launch.arg("pi"))
}

/// Runs `notes pi-extension`: the extension goes to stdout.
pub async fn run_extension(db: Option<PathBuf>, approval: Approval) -> ExitCode {
    let written = launch(db.as_deref(), approval)
        .and_then(|launch| write_pi_extension(std::io::stdout().lock(), &launch));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(format!("the Pi extension could not be written: {error}")),
    }
}
