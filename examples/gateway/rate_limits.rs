//! `--rate-limit N/PERIOD` and `--shared redis://HOST:PORT`, as in
//! `notes` (its parsing is shared: `notes::limits`): the calls one
//! principal (the operator, or a configured caller) may make through the
//! gateway, counted in this process or on Redis for every gateway using
//! it. A call past the budget is `RATE_LIMITED` with when to retry.

use std::ffi::OsString;

use gonk_tools::adapters::cli::clap::{value_parser, Arg};
use gonk_tools::rate_limit::{Rate, RateLimits};

/// The environment variable naming the key prefix on the shared store.
const PREFIX_ENV: &str = "GONK_GATEWAY_SHARED_PREFIX";

/// The global options taking a value, for the early argv scan.
pub const VALUED: [&str; 2] = ["--rate-limit", "--shared"];

/// The global `--rate-limit` and `--shared` options.
pub fn args() -> [Arg; 2] {
    [
        Arg::new(notes::limits::RATE_LIMIT)
            .long(notes::limits::RATE_LIMIT)
            .value_name("N/PERIOD")
            .value_parser(value_parser!(Rate))
            .help("Each principal may make N tool calls per PERIOD (e.g. 5/1m, 100/s); past it a call is refused with RATE_LIMITED and when to retry [default: no limit]"),
        Arg::new(notes::limits::SHARED)
            .long(notes::limits::SHARED)
            .value_name("URL")
            .help("Keep the rate-limit counts on Redis (redis://HOST:PORT), shared by every gateway using it; keys under $GONK_GATEWAY_SHARED_PREFIX [default: gonk-gateway]"),
    ]
}

/// The limits `argv` asks for (`None` without `--rate-limit`); a bad
/// rate or store URL is an error saying what to write.
pub fn from_argv(argv: &[OsString]) -> Result<Option<RateLimits>, String> {
    // notes' parser takes nats:// for its jobs; the gateway runs no
    // detached jobs, so a NATS URL would be silently unused.
    if let Some(url) = notes::limits::Shared::from_argv(argv)?.nats {
        return Err(format!(
            "--shared {url}: the gateway keeps nothing on NATS (it runs no background \
             jobs); share rate limits with --shared redis://HOST:PORT"
        ));
    }
    let prefix = std::env::var(PREFIX_ENV)
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "gonk-gateway".to_owned());
    notes::limits::from_argv_under(argv, prefix)
}
