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
use gonk_tools::jobs::NatsJobConfig;
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
            .action(gonk_tools::adapters::cli::clap::ArgAction::Append)
            .help(
                "Share state with the other notes processes (replicas): redis://HOST:PORT keeps \
                 the rate-limit counts, used requestStates and change notifications on Redis; \
                 nats://HOST:PORT puts background jobs on NATS JetStream (every serve/mcp \
                 process runs a share). Give it once per URL; names under $NOTES_SHARED_PREFIX \
                 [default: notes]",
            ),
    ]
}

/// The values of `--NAME VALUE` and `--NAME=VALUE` in `argv`, in order.
/// The registry is built before the command line is parsed, so the caller
/// looks for the options first; clap checks them again.
fn options(argv: &[OsString], name: &str) -> Vec<String> {
    let flag = format!("--{name}");
    let inline = format!("--{name}=");
    let mut found = Vec::new();
    let mut args = argv.iter().filter_map(|a| a.to_str());
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if arg == flag {
            found.extend(args.next().map(str::to_owned));
        } else if let Some(value) = arg.strip_prefix(&inline) {
            found.push(value.to_owned());
        }
    }
    found
}

/// The last value of `--NAME` in `argv`.
fn option(argv: &[OsString], name: &str) -> Option<String> {
    options(argv, name).pop()
}

/// What the `--shared` URLs put where: Redis (rate limits, requestStates,
/// change notifications) and NATS (jobs). Any other scheme is refused.
#[derive(Debug, Default, PartialEq)]
pub struct Shared {
    /// The `redis://` URL.
    pub redis: Option<String>,
    /// The `nats://` URL.
    pub nats: Option<String>,
}

impl Shared {
    /// Sorts `urls` by scheme (the last of each wins).
    pub fn from_urls(urls: impl IntoIterator<Item = String>) -> Result<Shared, String> {
        let mut shared = Shared::default();
        for url in urls {
            if url.starts_with("redis://") {
                shared.redis = Some(url);
            } else if url.starts_with("nats://") {
                shared.nats = Some(url);
            } else {
                return Err(format!(
                    "--shared {url}: give redis://HOST:PORT (rate limits, requestStates, \
                     notifications) or nats://HOST:PORT (jobs)"
                ));
            }
        }
        Ok(shared)
    }

    /// The `--shared` options of `argv`.
    pub fn from_argv(argv: &[OsString]) -> Result<Shared, String> {
        Shared::from_urls(options(argv, SHARED))
    }

    /// The `--shared` options of parsed `matches`.
    fn from_matches(matches: &ArgMatches) -> Shared {
        let urls = matches
            .try_get_many::<String>(SHARED)
            .ok()
            .flatten()
            .into_iter()
            .flatten()
            .cloned();
        // The URLs were checked before the command ran.
        Shared::from_urls(urls).unwrap_or_default()
    }
}

/// With `--shared nats://…`: the NATS URL and the jobs' configuration
/// there (named under the prefix, `$NOTES_JOBS_ACK_WAIT`'s ack wait).
pub fn jobs_on_nats(argv: &[OsString]) -> Result<Option<(String, NatsJobConfig)>, String> {
    let Some(url) = Shared::from_argv(argv)?.nats else {
        return Ok(None);
    };
    Ok(Some((url, crate::jobs::nats_config(&prefix())?)))
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
    let shared = match Shared::from_argv(argv)?.redis {
        None => None,
        Some(url) => {
            Some(RedisRateLimiter::new(&url, prefix).map_err(|e| format!("--shared {url}: {e}"))?)
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
    let Some(url) = Shared::from_matches(matches).redis else {
        return Ok(None);
    };
    let bus = gonk_tools::changes::RedisChangeBus::new(&url, &prefix())
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
    let url = Shared::from_matches(matches).redis?;
    let store = RedisSingleUseStore::new(&url, prefix()).ok()?;
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
        let alone = from_argv(&argv(&["notes", "--shared", "http://x"])).unwrap_err();
        assert!(alone.contains("give redis://HOST:PORT"), "{alone}");
    }

    #[test]
    fn shared_urls_are_sorted_by_scheme_and_nats_carries_only_jobs() {
        let both = argv(&[
            "notes",
            "--shared",
            "redis://127.0.0.1:6379",
            "--shared=nats://127.0.0.1:4222",
            "serve",
        ]);
        assert_eq!(
            Shared::from_argv(&both).unwrap(),
            Shared {
                redis: Some("redis://127.0.0.1:6379".into()),
                nats: Some("nats://127.0.0.1:4222".into()),
            }
        );
        let nats_only = argv(&["notes", "--rate-limit", "5/1m", "--shared", "nats://h:4222"]);
        assert_eq!(
            jobs_on_nats(&nats_only)
                .unwrap()
                .map(|(url, _)| url)
                .as_deref(),
            Some("nats://h:4222")
        );
        // The rate limits have no Redis then: they count in this process.
        let limits = from_argv(&nats_only).unwrap().unwrap();
        assert_eq!(limits.principal_rate(), Some("5/1m".parse().unwrap()));
        assert!(jobs_on_nats(&argv(&["notes", "list"])).unwrap().is_none());
    }
}
