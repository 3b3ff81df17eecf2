//! `notes serve --auth-issuer URL [--auth-audience URL]`: the server as an
//! OAuth resource server. Tokens are JWTs of the issuer, checked against
//! the keys its metadata publishes; each must be issued for this server
//! (its MCP URL, or `--auth-audience`); read tools need `notes:read`,
//! write tools `notes:write` (a token without it gets `403
//! insufficient_scope`, and its client asks for a wider one).

use std::net::IpAddr;

use gonk_tools::adapters::cli::clap::ArgMatches;
use gonk_tools::adapters::http::oauth::{JwtVerifier, ProtectedResource};

/// The scope the read tools need.
pub const READ_SCOPE: &str = "notes:read";
/// The scope the write tools need.
pub const WRITE_SCOPE: &str = "notes:write";

/// The resource server `--auth-issuer` asks for, if it does.
pub fn resource(matches: &ArgMatches, host: IpAddr) -> Result<Option<ProtectedResource>, String> {
    let Some(issuer) = matches.get_one::<String>("auth-issuer") else {
        return Ok(None);
    };
    let verifier = JwtVerifier::new(issuer).map_err(|error| format!("--auth-issuer: {error}"))?;
    let resource = ProtectedResource::new(verifier)
        .authorization_server(issuer)
        .scopes_supported([READ_SCOPE, WRITE_SCOPE])
        .challenge_scope(READ_SCOPE);
    let resource =
        match matches.get_one::<String>("auth-audience") {
            Some(audience) => resource
                .resource(audience)
                .map_err(|error| format!("--auth-audience: {error}"))?,
            None if !host.is_loopback() => return Err(
                "--auth-issuer on a non-loopback --host needs --auth-audience: the URL clients \
                 reach this server's /mcp at (tokens are issued for it)"
                    .to_owned(),
            ),
            None => resource,
        };
    // The tools declare their scopes (`#[tool(scopes("notes:write"))]`):
    // dispatch enforces them, and `/mcp` answers a missing one with the
    // `403` step-up.
    Ok(Some(resource))
}
