//! `notes serve --debug-runtime`: `GET /debug/runtime` answers the Tokio
//! runtime's own counts as JSON — `{"aliveTasks": N, "workers": W}`, read
//! from `tokio::runtime::Handle::metrics()` (`num_alive_tasks`,
//! `num_workers`, stable Tokio API) at the moment of the request. The soak
//! run (`scripts/soak`, `docs/soak.md`) samples it to see whether tasks
//! pile up. The request being answered is itself one alive task.
//!
//! Off by default, and loopback only: the counts say how busy the server
//! is, which is nobody else's business.

use std::net::IpAddr;

use gonk_tools::adapters::cli::clap::{Arg, ArgAction, ArgMatches};

/// The path of the endpoint.
pub const PATH: &str = "/debug/runtime";

/// `notes serve --debug-runtime`.
pub fn arg() -> Arg {
    Arg::new("debug-runtime")
        .long("debug-runtime")
        .action(ArgAction::SetTrue)
        .help(
            "Answer GET /debug/runtime with the Tokio runtime's alive tasks and workers as JSON \
             (for soak runs; loopback --host only)",
        )
}

/// The endpoint's routes when `--debug-runtime` was given (`None` without
/// it); an error when the server binds a non-loopback address.
pub fn routes(matches: &ArgMatches, host: IpAddr) -> Result<Option<axum::Router>, String> {
    if !matches.get_flag("debug-runtime") {
        return Ok(None);
    }
    if !host.is_loopback() {
        return Err(format!(
            "--debug-runtime serves {PATH} without authentication, so only on a loopback \
             --host (127.0.0.1 or ::1); drop it or bind loopback"
        ));
    }
    Ok(Some(
        axum::Router::new().route(PATH, axum::routing::get(counts)),
    ))
}

async fn counts() -> impl axum::response::IntoResponse {
    let metrics = tokio::runtime::Handle::current().metrics();
    let body = serde_json::json!({
        "aliveTasks": metrics.num_alive_tasks(),
        "workers": metrics.num_workers(),
    });
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
}
