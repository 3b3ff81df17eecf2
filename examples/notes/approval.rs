//! `--approval ask`: the write tools (create, rename, archive, export_file,
//! reindex) ask whoever called them before they run — an MCP client
//! through elicitation, a terminal through a prompt — and every decision is
//! an audit receipt on stderr (`notes: audit {…}`), consent included.
//!
//! It works through authenticated dispatch: the calls run as the local
//! user, every tool is allowed, and the approval provider answers "ask the
//! caller" for the write and exec tiers. Without the flag nothing is
//! authenticated and nothing asks, as before.

use gonk_tools::adapters::cli::clap::{Arg, ArgMatches};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    provider_fn, AllowAll, ApprovalDecision, ApprovalRequest, AuditReceipt, AuditSink, AuthContext,
    AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind, SecurityError,
    SecurityOptions,
};

/// The `--approval` flag of `notes serve` and `notes mcp`.
pub fn approval_arg() -> Arg {
    Arg::new("approval")
        .long("approval")
        .value_name("MODE")
        .value_parser(["ask"])
        .help(
            "`ask`: the write tools ask the caller for approval before they run (MCP \
             elicitation); a caller that cannot be asked gets APPROVAL_REQUIRED",
        )
}

/// The `--ask-timeout` flag: how long a 2025 session waits for the
/// client's answer.
pub fn ask_timeout_arg() -> Arg {
    Arg::new("ask-timeout")
        .long("ask-timeout")
        .value_name("SECS")
        .value_parser(gonk_tools::adapters::cli::clap::value_parser!(u64))
        .default_value(
            gonk_tools::adapters::mcp::DEFAULT_ASK_TIMEOUT
                .as_secs()
                .to_string(),
        )
        .help(
            "How long a 2025 MCP session waits for the client to answer a question; then the \
             call goes on without it (an approval question: APPROVAL_REQUIRED)",
        )
}

/// The `--ask-timeout` given.
pub fn ask_timeout(matches: &ArgMatches) -> Option<std::time::Duration> {
    matches
        .try_get_one::<u64>("ask-timeout")
        .ok()
        .flatten()
        .map(|secs| std::time::Duration::from_secs(*secs))
}

/// Whether `--approval ask` was given.
pub fn asks(matches: &ArgMatches) -> bool {
    matches
        .try_get_one::<String>("approval")
        .ok()
        .flatten()
        .is_some_and(|mode| mode == "ask")
}

/// The registry's security: read calls pass; write and exec calls ask the
/// caller; receipts go to stderr. Applies only to authenticated calls.
pub fn security_options() -> SecurityOptions {
    SecurityOptions::new()
        .approval_provider(provider_fn(|request: ApprovalRequest<'_>| {
            Ok(match request.tier() {
                ApprovalTier::Read => ApprovalDecision::approved(),
                _ => ApprovalDecision::ask_caller(format!("{} changes your notes", request.tool)),
            })
        }))
        .audit_sink(StderrAudit)
}

/// The caller of `--approval ask`: the local user, allowed every tool.
pub fn local_user() -> AuthContext {
    let identity = PrincipalIdentity::new("notes", whoami(), AuthMethod::Local);
    AuthContext::new(
        AuthenticatedPrincipal::new(whoami(), PrincipalKind::Local, identity),
        AllowAll,
    )
}

fn whoami() -> String {
    std::env::var("USER")
        .ok()
        .filter(|user| !user.is_empty())
        .unwrap_or_else(|| "local".to_owned())
}

/// Writes each receipt as one JSON line on stderr, after `notes: audit `.
struct StderrAudit;

impl AuditSink for StderrAudit {
    fn record(
        &self,
        receipt: AuditReceipt,
    ) -> futures::future::BoxFuture<'_, Result<(), SecurityError>> {
        let written = serde_json::to_string(&receipt)
            .map(|json| eprintln!("notes: audit {json}"))
            .map_err(SecurityError::new);
        Box::pin(std::future::ready(written))
    }
}
