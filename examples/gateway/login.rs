//! `gonk-gateway --config F login SERVER`: a person logs the gateway in to
//! an upstream behind OAuth, once. The gateway prints the URL to open,
//! waits for the browser on a loopback port, and keeps the token in the
//! server's `tokenStore`; every later run uses it and refreshes it there.
//! The token is replaced only when the new login succeeds.
//!
//! While it serves, the gateway also offers the login to its callers:
//! `gateway.login {"server": ID}` asks the caller to open the upstream's
//! authorization page (URL-mode elicitation), waits for the browser on a
//! loopback port of the gateway's machine, keeps the token and connects
//! the upstream, whose tools are then served. The token never passes
//! through the caller or the elicitation.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gonk_tools::adapters::cli::clap::{value_parser, Arg, ArgMatches, Command};
use gonk_tools::adapters::cli::exit;
use gonk_tools::adapters::mcp::oauth::{
    AuthorizationRedirect, CredentialStore, FileCredentialStore, InMemoryCredentialStore,
    LoopbackRedirect,
};
use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::ask::InputRequest;
use gonk_tools::prelude::*;
use serde_json::Value;
use tokio::sync::watch;

use crate::config::{self, expand, GatewayConfig, OAuthConfig, OAuthGrant, ServerConfig};
use crate::serving::Gateway;

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

/// The upstream `id` of `loaded` that a person can log in to: its URL and
/// its OAuth entry, or why there is nothing to log in to.
fn login_target<'a>(
    loaded: &'a GatewayConfig,
    id: &str,
) -> Result<(&'a ServerConfig, &'a str, &'a OAuthConfig), String> {
    let Some(server) = loaded.servers.get(id) else {
        return Err(format!(
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
        return Err(format!(
            "server {id:?} has no \"auth\": {{\"oauth\": {{…}}}} entry: there is nothing to log in to"
        ));
    };
    if oauth.grant == OAuthGrant::ClientCredentials {
        return Err(format!(
            "server {id:?} uses the gateway's client credentials: it needs no login"
        ));
    }
    Ok((server, url.as_str(), oauth))
}

/// Logs in to upstream `id` with `redirect` (the person's way to the
/// authorization page and back) and keeps the token in its `tokenStore`
/// once it has worked: the number of tools the upstream then listed, and
/// the file.
async fn log_in(
    id: &str,
    server: &ServerConfig,
    url: &str,
    oauth: &OAuthConfig,
    redirect: impl AuthorizationRedirect,
) -> Result<(usize, PathBuf), String> {
    // The login's token is kept aside until it has worked.
    let fresh = InMemoryCredentialStore::new();
    let options = oauth
        .options()
        .credential_store(fresh.clone())
        .redirect(redirect);
    let mut http = McpHttpClientOptions::new();
    for (name, value) in &server.headers {
        http = http
            .header(name, &expand(value))
            .map_err(|error| format!("server {id:?}: {error}"))?;
    }
    let client = McpClient::builder()
        .oauth(options)
        .connect_http(url, http)
        .await
        .map_err(|error| format!("logging in to {id} failed: {error}"))?;
    let tools = client.list_tools().await;
    let _ = client.close().await;
    let tools =
        tools.map_err(|error| format!("{id} refused tools/list after the login: {error}"))?;
    let credentials = match fresh.load().await {
        Ok(Some(credentials)) => credentials,
        Ok(None) => {
            return Err(format!(
                "{id} did not ask for a token: there is nothing to keep (remove its \"auth\" entry)"
            ))
        }
        Err(error) => return Err(error.to_string()),
    };
    let store = FileCredentialStore::new(oauth.token_file());
    store.save(credentials).await.map_err(|e| e.to_string())?;
    Ok((tools.len(), store.path().to_path_buf()))
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
    let (server, url, oauth) = match login_target(&loaded, &id) {
        Ok(target) => target,
        Err(error) => return failed(error),
    };
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
    match log_in(&id, server, url, oauth, redirect).await {
        Ok((tools, file)) => {
            println!(
                "Logged in to {id} ({tools} tools); the token is kept in {}",
                file.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => failed(error),
    }
}

/// The tool that logs the gateway in through its caller.
pub const LOGIN_TOOL: &str = "gateway.login";

/// How long a login started for a caller waits for the browser to come
/// back before it gives up (and frees its port).
const CALLER_LOGIN_TIMEOUT: Duration = Duration::from_secs(600);

/// `gateway.login`'s input.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LoginInput {
    /// The upstream to log in to: a server of the config whose entry has
    /// "auth": {"oauth": {…}}.
    server: String,
}

/// The outcome of a login, once it has one: the number of tools, or why
/// it failed.
type Outcome = Option<Result<usize, String>>;

/// A login started for a caller: the URL they were asked to open, and its
/// outcome. Kept until it ends, so that the caller's answer — which over
/// MCP `2026-07-28` comes with a new request that runs the tool again —
/// finds the same login and the same URL.
#[derive(Clone)]
struct PendingLogin {
    url: String,
    outcome: watch::Receiver<Outcome>,
}

/// The logins under way, by upstream; one starts at a time.
#[derive(Clone, Default)]
struct PendingLogins {
    pending: Arc<Mutex<HashMap<String, PendingLogin>>>,
    starting: Arc<tokio::sync::Mutex<()>>,
}

impl PendingLogins {
    /// The login under way for `id`; one that has ended is forgotten.
    fn get(&self, id: &str) -> Option<PendingLogin> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        match pending.get(id) {
            Some(login) if login.outcome.borrow().is_none() => Some(login.clone()),
            Some(_) => {
                pending.remove(id);
                None
            }
            None => None,
        }
    }

    /// The login under way for `id`, or a new one: a loopback listener for
    /// the browser's return, and the flow run in the background until the
    /// browser comes back (or [`CALLER_LOGIN_TIMEOUT`]).
    async fn start_or_join(&self, gateway: &Gateway, id: &str) -> Result<PendingLogin, String> {
        let _starting = self.starting.lock().await;
        if let Some(pending) = self.get(id) {
            return Ok(pending);
        }
        let path = gateway
            .config_path()
            .ok_or("the gateway has no config file to log in with")?;
        let loaded = config::load(path)?;
        let (server, url, oauth) = login_target(&loaded, id)?;
        let (server, url, oauth) = (server.clone(), url.to_owned(), oauth.clone());
        let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
        let url_tx = Mutex::new(Some(url_tx));
        let redirect = LoopbackRedirect::bind(0)
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the browser's return: {e}"))?
            .timeout(CALLER_LOGIN_TIMEOUT)
            .on_url(move |url| {
                if let Some(tx) = url_tx.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    let _ = tx.send(url.to_owned());
                }
            });
        let (outcome_tx, outcome) = watch::channel::<Outcome>(None);
        let owned_id = id.to_owned();
        let gateway = gateway.clone();
        tokio::spawn(async move {
            let result = log_in(&owned_id, &server, &url, &oauth, redirect).await;
            if result.is_ok() {
                // Connects the upstream now that its token is there.
                gateway.connect_missing().await;
            }
            let _ = outcome_tx.send(Some(result.map(|(tools, _)| tools)));
        });
        let mut early = outcome.clone();
        let url = tokio::select! {
            url = url_rx => url.ok(),
            _ = ended(&mut early) => None,
        };
        // Without a URL the flow ended without asking a person: say why.
        let Some(url) = url else {
            return Err(match ended(&mut outcome.clone()).await {
                Some(Err(error)) => error,
                _ => format!("{id} needed no login"),
            });
        };
        let pending = PendingLogin { url, outcome };
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_owned(), pending.clone());
        Ok(pending)
    }
}

/// Waits until a login has an outcome.
async fn ended(outcome: &mut watch::Receiver<Outcome>) -> Outcome {
    outcome
        .wait_for(Option::is_some)
        .await
        .map(|outcome| outcome.clone())
        .unwrap_or(None)
}

fn login_error(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::Internal, message.into())
}

/// What `gateway.login` answers once upstream `id` is served.
fn served(gateway: &Gateway, id: &str) -> Value {
    let prefix = format!("{id}.");
    let tools: Vec<String> = gateway
        .registry()
        .list()
        .iter()
        .filter(|def| def.name.starts_with(&prefix))
        .map(|def| def.name.clone())
        .collect();
    json!({"server": id, "loggedIn": true, "tools": tools})
}

/// Registers `gateway.login` when some upstream of `servers` is one a
/// person logs in to.
pub fn install(gateway: &Gateway, servers: &BTreeMap<String, ServerConfig>) -> Result<(), String> {
    let mut servers: Vec<String> = servers
        .iter()
        .filter(|(_, server)| {
            server.url.is_some()
                && server
                    .oauth()
                    .is_some_and(|oauth| oauth.grant == OAuthGrant::AuthorizationCode)
        })
        .map(|(id, _)| id.clone())
        .collect();
    if servers.is_empty() {
        return Ok(());
    }
    servers.sort();
    let logins = PendingLogins::default();
    let gateway_for_tool = gateway.clone();
    let definition = ToolDefinition::builder(LOGIN_TOOL)
        .description(format!(
            "Log the gateway in to an upstream behind OAuth ({}) whose token is missing or no longer \
             works: you are asked to open its authorization page in a browser on the gateway's \
             machine; once you are done there, its tools are served.",
            servers.join(", ")
        ))
        .approval(ApprovalTier::Write)
        .handler(move |input: LoginInput, ctx: ToolContext| {
            let gateway = gateway_for_tool.clone();
            let logins = logins.clone();
            async move {
                let id = input.server;
                if gateway.is_connected(&id).await && logins.get(&id).is_none() {
                    return Ok::<_, ToolError>(served(&gateway, &id));
                }
                let pending = logins
                    .start_or_join(&gateway, &id)
                    .await
                    .map_err(login_error)?;
                let question = InputRequest::elicit_url(
                    format!("Sign in to {id} so that the gateway can reach it"),
                    pending.url.clone(),
                );
                let answer = ctx
                    .ask(vec![(format!("login-{id}"), question)])
                    .await?
                    .pop()
                    .unwrap_or_default();
                if answer["action"] != "accept" {
                    return Err(login_error(format!(
                        "the login to {id} was not completed (the caller answered {})",
                        answer["action"]
                    )));
                }
                let mut outcome = pending.outcome;
                let result = tokio::time::timeout(CALLER_LOGIN_TIMEOUT, ended(&mut outcome))
                    .await
                    .map_err(|_| login_error(format!("the browser never came back from {id}")))?;
                match result {
                    Some(Ok(_)) if gateway.is_connected(&id).await => Ok(served(&gateway, &id)),
                    Some(Ok(_)) => Err(login_error(format!(
                        "logged in to {id}, but it could not be connected (see the gateway's log)"
                    ))),
                    Some(Err(error)) => Err(login_error(error)),
                    None => Err(login_error(format!("the login to {id} stopped"))),
                }
            }
        })
        .build();
    gateway
        .registry()
        .register(definition)
        .map_err(|e| format!("cannot register {LOGIN_TOOL}: {e}"))
}
