//! `--approval ask`: the write tools (create, rename, archive, export_file)
//! ask the caller for approval before they run — on the terminal for the
//! command line, through the client wherever the surface can ask.
//!
//! The pieces every surface of `notes` shares: the global `--approval`
//! flag, the registry's security options (an approval provider that asks
//! the caller for write and exec tiers, and a resolver for the `note`
//! resource `notes.rename` declares), and the local user's
//! [`AuthContext`] that puts a call through those gates. Without the flag
//! no call carries auth, so no gate runs and nothing changes: the provider
//! is only ever consulted for authenticated calls. Every decision is an
//! audit receipt on stderr (`notes: audit {…}`), consent included.

use gonk_tools::adapters::cli::clap::builder::PossibleValuesParser;
use gonk_tools::adapters::cli::clap::{Arg, ArgMatches};
use gonk_tools::definition::ApprovalTier;
use gonk_tools::security::{
    provider_fn, resolver_fn, AllowAll, ApprovalDecision, ApprovalRequest, AuditReceipt, AuditSink,
    AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind, ResourceRef,
    ResourceResolutionRequest, SecurityError, SecurityOptions,
};

/// The id of the global `--approval` option.
pub const APPROVAL: &str = "approval";

/// Why the caller is asked (shown in the question).
const REASON: &str = "It changes your notes or writes a file";

/// What `--approval` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// As without the flag: calls carry no auth and no gate runs.
    Off,
    /// Calls run as the local user, and write tools ask the caller first.
    Ask,
}

/// The global `--approval MODE` option.
pub fn arg() -> Arg {
    Arg::new(APPROVAL)
        .long("approval")
        .value_name("MODE")
        .value_parser(PossibleValuesParser::new(["off", "ask"]))
        .help(
            "`ask`: the write tools (create, rename, archive, export_file) ask for approval \
             before they run, on the terminal for a tool command [default: off]",
        )
}

/// The mode the parsed argv asks for (global, so any subcommand's matches
/// carry it).
pub fn from_matches(matches: &ArgMatches) -> Approval {
    match matches
        .try_get_one::<String>(APPROVAL)
        .ok()
        .flatten()
        .map(String::as_str)
    {
        Some("ask") => Approval::Ask,
        _ => Approval::Off,
    }
}

/// The registry's security options: reads are approved, and so are writes
/// by an OAuth token granted `notes:write`; otherwise write and exec tiers
/// ask the caller; `note` resources resolve from the input's `id`;
/// receipts go to stderr, one JSON line each after `notes: audit `.
pub fn security() -> SecurityOptions {
    SecurityOptions::new()
        .approval_provider(provider_fn(|request: ApprovalRequest<'_>| {
            Ok(match request.tier() {
                ApprovalTier::Read => ApprovalDecision::approved(),
                // `notes serve --auth-issuer`: the user granted
                // `notes:write` on the authorization server's consent page.
                ApprovalTier::Write
                    if request.principal.identity.method == AuthMethod::Oauth
                        && request.principal.has_scope(crate::oauth::WRITE_SCOPE) =>
                {
                    ApprovalDecision::approved()
                }
                ApprovalTier::Write | ApprovalTier::Exec => ApprovalDecision::ask_caller(REASON),
            })
        }))
        .resource_resolver(resolver_fn(|request: ResourceResolutionRequest<'_>| {
            Ok(request
                .input
                .get("id")
                .and_then(serde_json::Value::as_i64)
                .map(|id| {
                    ResourceRef::new(request.declared.kind.clone()).with_target(id.to_string())
                }))
        }))
        .audit_sink(StderrAudit)
}

/// The local OS user (`$USER`), allowed everything: what a command run on
/// this machine's terminal is authenticated as.
pub fn local_user() -> AuthContext {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .filter(|user| !user.is_empty())
        .unwrap_or_else(|| "local".to_owned());
    let principal = AuthenticatedPrincipal::new(
        format!("local:{user}"),
        PrincipalKind::Local,
        PrincipalIdentity::new("local", user, AuthMethod::Local),
    );
    AuthContext::new(principal, AllowAll)
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

/// The `--ask-timeout` option of `notes serve` and `notes mcp`: how long a
/// 2025 session waits for the client to answer.
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
