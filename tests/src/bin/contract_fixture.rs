//! A test fixture served as real processes by the tests in `tests/tests`:
//!
//! * `contract_fixture mcp` — an MCP server over stdio whose only source of
//!   auth is `McpServerOptions::base_context` (as a local host that knows
//!   its user would do); its policy hides `secret.echo`.
//! * `contract_fixture <tool> …` — the tools as a command line (no auth).
//!
//! Tools: `public.echo` and `secret.echo` (`{text}` → `{echo}`), and
//! `notes.titled` (`{title}`, at most 200 characters).

use std::process::ExitCode;

use gonk_tools::adapters::cli::clap::Command;
use gonk_tools::adapters::cli::Cli;
use gonk_tools::adapters::mcp::{serve_stdio, McpServerOptions};
use gonk_tools::prelude::*;
use gonk_tools::security::{
    policy_fn, AuthContext, AuthMethod, AuthenticatedPrincipal, AuthorizationAction,
    AuthorizationDecision, PrincipalIdentity, PrincipalKind,
};

#[derive(Deserialize, JsonSchema)]
struct Echo {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Titled {
    #[schemars(length(max = 200))]
    title: String,
}

fn echo(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Echoes its text.")
        .approval(ApprovalTier::Read)
        .handler(|input: Echo, _| async move { Ok::<_, ToolError>(json!({"echo": input.text})) })
        .build()
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            echo("public.echo"),
            echo("secret.echo"),
            ToolDefinition::builder("notes.titled")
                .description("Takes a title of at most 200 characters.")
                .approval(ApprovalTier::Read)
                .handler(|input: Titled, _| async move {
                    Ok::<_, ToolError>(json!({"length": input.title.len()}))
                })
                .build(),
        ])
        .expect("the fixture's tools register");
    registry
}

/// Alice, whose policy hides `secret.echo`.
fn auth() -> AuthContext {
    let principal = AuthenticatedPrincipal::new(
        "user-1",
        PrincipalKind::Human,
        PrincipalIdentity::new("local", "alice", AuthMethod::Local),
    );
    let policy = policy_fn(|request| {
        let secret = request.resource.target.as_deref() == Some("secret.echo");
        Ok(match request.action {
            AuthorizationAction::Discover if secret => AuthorizationDecision::deny("hidden"),
            _ => AuthorizationDecision::allow(),
        })
    });
    AuthContext::new(principal, policy)
}

async fn mcp(registry: ToolRegistry) -> ExitCode {
    let auth = auth();
    let options = McpServerOptions::new("contract-fixture", "0.0.0")
        .base_context(move || ToolContext::new().with_auth(auth.clone()));
    match serve_stdio(registry, options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let registry = registry();
    let served = registry.clone();
    Cli::new(registry)
        .name("contract_fixture")
        .command(
            Command::new("mcp").about("Serve MCP over stdio, as alice"),
            move |_| mcp(served.clone()),
        )
        .run_from_env()
}
