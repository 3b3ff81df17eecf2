//! `gonk-gateway --config F login SERVER`: a person logs the gateway in to
//! an upstream behind OAuth, once. The gateway prints the URL to open,
//! waits for the browser on a loopback port, and keeps the token in the
//! server's `tokenStore`; every later run uses it and refreshes it there.
//! The token is replaced only when the new login succeeds.

use std::path::PathBuf;
use std::process::ExitCode;

use gonk_tools::adapters::cli::clap::{value_parser, Arg, ArgMatches, Command};
use gonk_tools::adapters::cli::exit;
use gonk_tools::adapters::mcp::oauth::{
    CredentialStore, FileCredentialStore, InMemoryCredentialStore, LoopbackRedirect,
};
use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};

use crate::config::{self, expand, OAuthGrant};

/// The `login` command.
pub fn command() -> Command {
    Command::new("login")
        .about("Log in to an upstream that uses OAuth: print the URL to open, wait for the browser on a loopback port, keep the token in the server's tokenStore")
        .arg(
            Arg::new("server")
                .value_name("SERVER")
                .required(true)
                .help("The server of the config to log in to (its entry has \"auth\": {\"oauth\": {…}})"),
        )
        .arg(
            Arg::new("port")
                .long("port")
                .value_name("PORT")
                .value_parser(value_parser!(u16))
                .default_value("0")
                .help("The loopback port the browser is sent back to (http://127.0.0.1:PORT/callback); 0 picks a free one"),
        )
}

/// Whether argv's command word is `login` (it needs no upstream connected).
pub fn is_login_command(word: Option<&str>) -> bool {
    word == Some("login")
}

fn failed(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("Error: {message}");
    ExitCode::from(exit::FAILURE)
}

/// Runs `login` for the config at `config`.
pub async fn run(config: Option<PathBuf>, matches: ArgMatches) -> ExitCode {
    let Some(path) = config else {
        eprintln!("Error: --config FILE is required (an mcpServers JSON file)");
        return ExitCode::from(exit::USAGE);
    };
    let loaded = match config::load(&path) {
        Ok(loaded) => loaded,
        Err(error) => return failed(error),
    };
    let id = matches
        .get_one::<String>("server")
        .cloned()
        .unwrap_or_default();
    let Some(server) = loaded.servers.get(&id) else {
        return failed(format!(
            "the config has no server {id:?} (it has: {})",
            loaded
                .servers
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let (Some(url), Some(oauth)) = (&server.url, server.oauth()) else {
        return failed(format!(
            "server {id:?} has no \"auth\": {{\"oauth\": {{…}}}} entry: there is nothing to log in to"
        ));
    };
    if oauth.grant == OAuthGrant::ClientCredentials {
        return failed(format!(
            "server {id:?} uses the gateway's client credentials: it needs no login"
        ));
    }
    let port = matches.get_one::<u16>("port").copied().unwrap_or(0);
    let redirect = match LoopbackRedirect::bind(port).await {
        Ok(redirect) => redirect.on_url({
            let id = id.clone();
            move |url| {
                eprintln!("Open this URL in a browser to log the gateway in to {id}:\n  {url}")
            }
        }),
        Err(error) => {
            return failed(format!(
                "cannot listen on 127.0.0.1:{port} for the browser's return: {error}"
            ))
        }
    };
    // The login's token is kept aside until it has worked.
    let fresh = InMemoryCredentialStore::new();
    let options = oauth
        .options()
        .credential_store(fresh.clone())
        .redirect(redirect);
    let mut http = McpHttpClientOptions::new();
    for (name, value) in &server.headers {
        http = match http.header(name, &expand(value)) {
            Ok(http) => http,
            Err(error) => return failed(format!("server {id:?}: {error}")),
        };
    }
    let client = match McpClient::builder()
        .oauth(options)
        .connect_http(url, http)
        .await
    {
        Ok(client) => client,
        Err(error) => return failed(format!("logging in to {id} failed: {error}")),
    };
    let tools = client.list_tools().await;
    let _ = client.close().await;
    let tools = match tools {
        Ok(tools) => tools,
        Err(error) => return failed(format!("{id} refused tools/list after the login: {error}")),
    };
    let credentials = match fresh.load().await {
        Ok(Some(credentials)) => credentials,
        Ok(None) => {
            return failed(format!(
                "{id} did not ask for a token: there is nothing to keep (remove its \"auth\" entry)"
            ))
        }
        Err(error) => return failed(error),
    };
    let store = FileCredentialStore::new(oauth.token_file());
    if let Err(error) = store.save(credentials).await {
        return failed(error);
    }
    println!(
        "Logged in to {id} ({} tools); the token is kept in {}",
        tools.len(),
        store.path().display()
    );
    ExitCode::SUCCESS
}
