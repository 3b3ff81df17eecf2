//! `--rate-limit N/PERIOD` and `--shared redis://HOST:PORT`: the calls
//! one principal may make (every tool, every surface), counted in this
//! process or — with `--shared` — on Redis, so every `notes` process
//! pointing at it (replicas behind a balancer, or one-shot commands) draws
//! on one budget. Calls without auth share the principal `anonymous`;
//! with `--approval ask` they run as the local user. A call over budget
//! ends with `RATE_LIMITED` and when to retry (`docs/rate-limits.md`).
//!
//! While Redis cannot be reached each process counts on its own (and says
//! so once on stderr), so calls keep working and stay limited. `--shared`
//! also keeps the MCP server's used `requestState`s on Redis, so a state
//! opens once across replicas (a retry is refused while Redis is down),
//! and shares change notifications between the replicas (best effort:
//! while Redis is down each replica hears only its own).

use std::ffi::OsString;
use std::sync::Arc;

use gonk_tools::adapters::cli::clap::{value_parser, Arg, ArgMatches};
use gonk_tools::adapters::mcp::{RedisSingleUseStore, SingleUseStore};
use gonk_tools::rate_limit::{
    LocalRateLimiter, Rate, RateLimitBackend, RateLimits, RedisRateLimiter,
};

/// The id (and long name) of the global `--rate-limit` option.
pub const RATE_LIMIT: &str = "rate-limit";
/// The id (and long name) of the global `--shared` option.
pub const SHARED: &str = "shared";
/// The environment variable naming the key prefix on the shared store.
pub const PREFIX_ENV: &str = "NOTES_SHARED_PREFIX";
/// The key prefix without [`PREFIX_ENV`].
const DEFAULT_PREFIX: &str = "notes";

/// The global `--rate-limit` and `--shared` options.
pub fn args() -> [Arg; 2] {
    [
        Arg::new(RATE_LIMIT)
            .long(RATE_LIMIT)
            .value_name("N/PERIOD")
            .value_parser(value_parser!(Rate))
            .help(
                "Each principal may make N tool calls per PERIOD (e.g. 5/1m, 100/s); past it a call \
                 is refused with RATE_LIMITED and when to retry (exit 75) [default: no limit]",
            ),
        Arg::new(SHARED)
            .long(SHARED)
            .value_name("URL")
            .help(
                "Keep the rate-limit counts, the MCP server's used requestStates and its change \
                 notifications on Redis (redis://HOST:PORT), shared by every notes process using \
                 it; keys and channel under $NOTES_SHARED_PREFIX [default: notes]",
            ),
    ]
}

/// The value of `--NAME VALUE` or `--NAME=VALUE` in `argv` (the last one).
/// The registry is built before the command line is parsed, so the caller
/// looks for the options first; clap checks them again.
fn option(argv: &[OsString], name: &str) -> Option<String> {
    let flag = format!("--{name}");
    let inline = format!("--{name}=");
    let mut found = None;
    let mut args = argv.iter().filter_map(|a| a.to_str());
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if arg == flag {
            found = args.next().map(str::to_owned);
        } else if let Some(value) = arg.strip_prefix(&inline) {
            found = Some(value.to_owned());
        }
    }
    found
}

/// The rate limits `argv` asks for: `None` without `--rate-limit`. A
/// `--shared` URL is checked either way (the MCP server keeps used
/// `requestState`s there too).
pub fn from_argv(argv: &[OsString]) -> Result<Option<RateLimits>, String> {
    from_argv_under(argv, prefix())
}

/// [`from_argv`] with the shared keys under `prefix` (for another binary
/// taking the same options: the gateway).
pub fn from_argv_under(argv: &[OsString], prefix: String) -> Result<Option<RateLimits>, String> {
    let shared = match option(argv, SHARED) {
        None => None,
        Some(url) if url.starts_with("redis://") => {
            Some(RedisRateLimiter::new(&url, prefix).map_err(|e| format!("--shared {url}: {e}"))?)
        }
        Some(url) => {
            return Err(format!(
                "--shared {url}: the shared store is Redis; give redis://HOST:PORT"
            ))
        }
    };
    let Some(rate) = option(argv, RATE_LIMIT) else {
        return Ok(None);
    };
    let rate: Rate = rate.parse().map_err(|e| format!("--rate-limit: {e}"))?;
    let backend: Arc<dyn RateLimitBackend> = match shared {
        None => Arc::new(LocalRateLimiter::new()),
        Some(limiter) => Arc::new(limiter),
    };
    Ok(Some(RateLimits::new(backend).per_principal(rate)))
}

/// The key prefix on the shared store.
fn prefix() -> String {
    std::env::var(PREFIX_ENV).unwrap_or_else(|_| DEFAULT_PREFIX.to_owned())
}

/// With `--shared redis://…`, this process's change notifications (a
/// note's resource updated, list changes) go to the other replicas on that
/// Redis and theirs come here, so a `subscriptions/listen` stream or a
/// 2025 session held by this replica hears writes another one ran. Keep
/// the attachment alive while serving.
pub fn share_changes(
    registry: &gonk_tools::ToolRegistry,
    matches: &ArgMatches,
) -> Result<Option<gonk_tools::changes::SharedChanges>, String> {
    let Some(url) = matches.try_get_one::<String>(SHARED).ok().flatten() else {
        return Ok(None);
    };
    let bus = gonk_tools::changes::RedisChangeBus::new(url, &prefix())
        .map_err(|e| format!("--shared {url}: {e}"))?;
    registry
        .share_changes(Arc::new(bus))
        .map(Some)
        .map_err(|e| e.to_string())
}

/// With `--shared redis://…`, where the MCP server remembers used
/// `requestState`s, so a retry's state opens once across replicas (an
/// unusable URL was refused before the command ran).
pub fn request_state_store(matches: &ArgMatches) -> Option<Arc<dyn SingleUseStore>> {
    let url = matches.try_get_one::<String>(SHARED).ok().flatten()?;
    let store = RedisSingleUseStore::new(url, prefix()).ok()?;
    Some(Arc::new(store))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn options_are_found_in_both_spellings_and_checked() {
        let limits = from_argv(&argv(&["notes", "--rate-limit", "5/1m", "list"]))
            .unwrap()
            .unwrap();
        assert_eq!(limits.principal_rate(), Some("5/1m".parse().unwrap()));
        assert!(from_argv(&argv(&["notes", "--rate-limit=2/s", "list"]))
            .unwrap()
            .is_some());
        assert!(from_argv(&argv(&["notes", "list"])).unwrap().is_none());
        assert!(from_argv(&argv(&["notes", "--", "--rate-limit", "5/1m"]))
            .unwrap()
            .is_none());
        let bad = from_argv(&argv(&["notes", "--rate-limit", "lots"])).unwrap_err();
        assert!(bad.contains("write N/PERIOD"), "{bad}");
        let nats = from_argv(&argv(&[
            "notes",
            "--rate-limit",
            "5/1m",
            "--shared",
            "nats://127.0.0.1:4222",
        ]))
        .unwrap_err();
        assert!(nats.contains("give redis://HOST:PORT"), "{nats}");
        let alone = from_argv(&argv(&["notes", "--shared", "http://x"])).unwrap_err();
        assert!(alone.contains("give redis://HOST:PORT"), "{alone}");
    }
}
