//! `gonk-gateway --config FILE dev status | use ENV`: the dev router's
//! environments, and choosing the active one by rewriting `active` in the
//! file (a running gateway follows the file, so new sessions go there;
//! open sessions stay where they are).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gonk_tools::adapters::cli::clap::{Arg, ArgMatches, Command};
use gonk_tools::adapters::cli::exit;
use serde_json::Value;

use crate::config;

/// `gonk-gateway dev`.
pub fn command() -> Command {
    Command::new("dev")
        .about("The dev router (a devRouter config): show its environments, or choose the one new sessions go to")
        .subcommand_required(true)
        .subcommand(Command::new("status").about("List the environments, the active one marked *"))
        .subcommand(
            Command::new("use")
                .about("Make ENV the active environment (rewrites devRouter.active in the config file; a running gateway picks it up)")
                .arg(Arg::new("environment").value_name("ENV").required(true)),
        )
}

/// Whether argv's command is `dev` (it needs no upstream connected).
pub fn is_dev_command(command_word: Option<&str>) -> bool {
    command_word == Some("dev")
}

/// Runs `gonk-gateway dev …` on the config at `path`.
pub async fn run(path: Option<PathBuf>, matches: ArgMatches) -> ExitCode {
    let Some(path) = path else {
        eprintln!("Error: --config FILE is required (a config with a devRouter section)");
        return ExitCode::from(exit::USAGE);
    };
    let done = match matches.subcommand() {
        Some(("use", sub)) => {
            let wanted = sub
                .get_one::<String>("environment")
                .cloned()
                .unwrap_or_default();
            choose(&path, &wanted).map(|()| println!("new sessions go to {wanted}"))
        }
        _ => status(&path),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error}");
            ExitCode::from(exit::FAILURE)
        }
    }
}

fn status(path: &Path) -> Result<(), String> {
    let loaded = config::load(path)?;
    let dev = loaded.dev_router.ok_or_else(|| no_section(path))?;
    for (name, env) in &dev.environments {
        let mark = if *name == dev.active { "*" } else { " " };
        let target = super::marking::Target::of(name, env);
        let upstream = env
            .upstream
            .url
            .clone()
            .or_else(|| env.upstream.command.clone())
            .unwrap_or_default();
        let disabled = if env.upstream.disabled {
            " [disabled]"
        } else {
            ""
        };
        println!(
            "{mark} {}  {upstream}{disabled}",
            target.marker().trim_start_matches("DEV TARGET: ")
        );
    }
    Ok(())
}

fn no_section(path: &Path) -> String {
    format!(
        "the config {} has no devRouter section (see the gateway's dev router docs)",
        path.display()
    )
}

/// Sets `devRouter.active` to `wanted`; the file is replaced only by a
/// config that loads.
fn choose(path: &Path, wanted: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the config {}: {e}", path.display()))?;
    let mut value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("the config {} is not JSON: {e}", path.display()))?;
    let Some(dev) = value.get_mut("devRouter").and_then(Value::as_object_mut) else {
        return Err(no_section(path));
    };
    dev.insert("active".to_owned(), Value::String(wanted.to_owned()));
    let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
    // Written beside the file and renamed over it: a reader (the running
    // gateway) sees the old file or the new one, never half of one.
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, format!("{text}\n"))
        .map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
    if let Err(error) = config::load(&partial) {
        let _ = std::fs::remove_file(&partial);
        return Err(error.replace(&partial.display().to_string(), &path.display().to_string()));
    }
    std::fs::rename(&partial, path)
        .map_err(|e| format!("cannot replace the config {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_rewrites_the_active_environment_and_refuses_an_unknown_one() {
        let dir = std::env::temp_dir().join(format!("gw-dev-use-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gw.json");
        let body = serde_json::json!({"devRouter": {"active": "alpha", "environments": {
            "alpha": {"command": "a"}, "beta": {"command": "b"}
        }}});
        std::fs::write(&path, body.to_string()).unwrap();
        choose(&path, "beta").unwrap();
        assert_eq!(
            config::load(&path).unwrap().dev_router.unwrap().active,
            "beta"
        );
        let error = choose(&path, "gamma").unwrap_err();
        assert!(
            error.contains("\"gamma\", which is not an environment"),
            "{error}"
        );
        assert_eq!(
            config::load(&path).unwrap().dev_router.unwrap().active,
            "beta"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
