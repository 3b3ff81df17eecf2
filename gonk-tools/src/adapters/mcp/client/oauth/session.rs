//! One connection's authorization state: the token its requests carry, and
//! what it does when the server refuses one (refresh, authorize anew, step
//! up). One authorization runs at a time; requests that arrive meanwhile
//! wait and use its token.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use reqwest::Url;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, OAuthClientConfig, WWWAuthenticateParams,
};
use serde_json::Value;

use super::scopes::{self, Attempts};
use super::store::SharedStore;
use super::{Grant, OAuthOptions};

/// What a probe sends: the request a connection starts with.
const PROBE: &str = r#"{"jsonrpc":"2.0","id":"gonk-tools-authorization-probe","method":"server/discover","params":{}}"#;

/// The authorization state of one connection to `server`.
pub(crate) struct OAuthSession {
    options: OAuthOptions,
    /// The MCP endpoint, as given.
    server: String,
    server_url: Url,
    /// The connection's HTTP client (its TLS roots): the probe and the
    /// protected resource metadata go through it.
    http: reqwest::Client,
    /// The connection trusts roots rmcp's own clients would not: rmcp's
    /// OAuth requests then go through `http` too.
    added_roots: bool,
    /// The manager of the current token (metadata and client configured),
    /// once there is one. Held while a token is fetched or renewed, so one
    /// authorization runs at a time.
    manager: tokio::sync::Mutex<Option<AuthorizationManager>>,
    /// The server asked for a token and no flow could run (no redirect for
    /// a person): someone has to log in.
    login_needed: AtomicBool,
    /// Why the last authorization failed, for the connection's error.
    last_failure: Mutex<Option<String>>,
}

impl OAuthSession {
    /// The state of a connection to `server` (the MCP endpoint URL).
    pub(crate) fn new(
        options: OAuthOptions,
        server: &str,
        http: reqwest::Client,
        added_roots: bool,
    ) -> Result<OAuthSession, String> {
        let server_url =
            Url::parse(server).map_err(|e| format!("the MCP URL {server} is not a URL: {e}"))?;
        Ok(OAuthSession {
            options,
            server: server.to_owned(),
            server_url,
            http,
            added_roots,
            manager: tokio::sync::Mutex::new(None),
            login_needed: AtomicBool::new(false),
            last_failure: Mutex::new(None),
        })
    }

    pub(super) fn max_step_ups(&self) -> u32 {
        self.options.max_step_ups
    }

    /// Whether the server asked for a token that no flow could get.
    pub(crate) fn login_needed(&self) -> bool {
        self.login_needed.load(Ordering::Acquire)
    }

    /// Why the last authorization failed, if it did.
    pub(crate) fn last_failure(&self) -> Option<String> {
        self.last_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn failed(&self, error: &AuthError) {
        *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.to_string());
    }

    /// The token the next request carries, if there is one: the current
    /// one, refreshed when it is about to expire, or the store's.
    pub(super) async fn token(&self) -> Result<Option<String>, AuthError> {
        let mut manager = self.manager.lock().await;
        self.current(&mut manager).await
    }

    /// Makes sure a first request will not be refused for want of a token:
    /// with no usable token, asks the server (a `server/discover` without
    /// one) and, on a `401`, authorizes now. The connection's protocol
    /// negotiation has a time limit a person's login could exceed.
    pub(crate) async fn prepare(
        &self,
        headers: &std::collections::HashMap<http::HeaderName, http::HeaderValue>,
    ) -> Result<(), AuthError> {
        let mut manager = self.manager.lock().await;
        if self.current(&mut manager).await?.is_some() {
            return Ok(());
        }
        let mut probe = self
            .http
            .post(&self.server)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .body(PROBE);
        for (name, value) in headers {
            probe = probe.header(name, value);
        }
        // A server that cannot be reached is the connection's to report.
        let Ok(response) = probe.send().await else {
            return Ok(());
        };
        if response.status() != reqwest::StatusCode::UNAUTHORIZED {
            return Ok(());
        }
        let Some(challenge) = response
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
        else {
            return Ok(());
        };
        self.authorize(&mut manager, &challenge, None)
            .await
            .map(|_| ())
    }

    /// After a `401` to a request that carried `sent`: the token to send
    /// it again with, or `None` to give up (the `401` stands). Another
    /// request's fresh token first; then one refresh; then one new
    /// authorization.
    pub(super) async fn on_unauthorized(
        &self,
        sent: Option<&str>,
        challenge: &str,
        attempts: &mut Attempts,
    ) -> Result<Option<String>, AuthError> {
        let mut manager = self.manager.lock().await;
        if let Some(current) = self.current(&mut manager).await? {
            if Some(current.as_str()) != sent {
                return Ok(Some(current));
            }
        }
        if sent.is_some() && !attempts.refreshed {
            attempts.refreshed = true;
            if let Some(current) = manager.as_ref() {
                // The refreshed token is saved to the store, where the
                // manager reads it.
                match current.refresh_token().await {
                    Ok(_) => {
                        let fresh = current.get_access_token().await?;
                        if Some(fresh.as_str()) != sent {
                            return Ok(Some(fresh));
                        }
                    }
                    Err(error) => tracing::debug!(
                        target: "gonk_tools::mcp::client",
                        %error,
                        "the server refused the token and it could not be refreshed; authorizing anew"
                    ),
                }
            }
        }
        if attempts.authorized {
            return Ok(None);
        }
        attempts.authorized = true;
        self.authorize(&mut manager, challenge, None).await
    }

    /// After a `403` to a request that carried `sent`: the token of a
    /// step-up to send it again with, or `None` to give up (not an
    /// `insufficient_scope` refusal, nothing new asked, or the limit
    /// reached).
    pub(super) async fn on_forbidden(
        &self,
        sent: Option<&str>,
        challenge: &str,
        attempts: &mut Attempts,
    ) -> Result<Option<String>, AuthError> {
        let params = WWWAuthenticateParams::parse(challenge, &self.server_url);
        if !params.is_insufficient_scope() {
            return Ok(None);
        }
        let mut manager = self.manager.lock().await;
        if let Some(current) = self.current(&mut manager).await? {
            if Some(current.as_str()) != sent {
                return Ok(Some(current));
            }
        }
        let granted = self.granted_scopes().await?;
        let challenged = scopes::split(params.scope.as_deref());
        let Some(wanted) = scopes::step_up(&granted, &challenged) else {
            tracing::warn!(
                target: "gonk_tools::mcp::client",
                server = %self.server,
                challenged = %challenged.join(" "),
                "the server refused the token for scopes it already has; not authorizing again"
            );
            return Ok(None);
        };
        if !attempts.may_step_up() {
            tracing::warn!(
                target: "gonk_tools::mcp::client",
                server = %self.server,
                step_ups = attempts.step_ups,
                "the server still asks for more scopes after the most step-ups one request may make"
            );
            return Ok(None);
        }
        self.authorize(&mut manager, challenge, Some(wanted)).await
    }

    /// The scopes of the stored token.
    async fn granted_scopes(&self) -> Result<Vec<String>, AuthError> {
        Ok(self
            .options
            .store
            .load()
            .await?
            .map(|stored| stored.granted_scopes)
            .unwrap_or_default())
    }

    /// The current token: the manager's (refreshed when it is about to
    /// expire), made from the store on first use.
    async fn current(
        &self,
        manager: &mut Option<AuthorizationManager>,
    ) -> Result<Option<String>, AuthError> {
        if manager.is_none() {
            *manager = self.stored_manager().await?;
        }
        let Some(current) = manager.as_ref() else {
            return Ok(None);
        };
        match current.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// A manager over the store's token, if it holds one for this server's
    /// authorization server (a token of another issuer is dropped).
    async fn stored_manager(&self) -> Result<Option<AuthorizationManager>, AuthError> {
        let Some(stored) = self.options.store.load().await? else {
            return Ok(None);
        };
        if stored.token_response.is_none() {
            return Ok(None);
        }
        let mut manager = self.new_manager().await?;
        if !manager.initialize_from_store().await? {
            return Ok(None);
        }
        // The store keeps the client id only; a confidential client's
        // secret comes from the options.
        match &self.options.grant {
            Grant::ClientCredentials { client_id, secret } if *client_id == stored.client_id => {
                manager.configure_client_credentials(&self.client_credentials(
                    client_id,
                    secret,
                    Vec::new(),
                    self.server.clone(),
                ))?;
            }
            Grant::AuthorizationCode => {
                if let (Some(id), Some(secret)) =
                    (&self.options.client_id, &self.options.client_secret)
                {
                    if *id == stored.client_id {
                        let redirect = self
                            .options
                            .redirect
                            .as_ref()
                            .map(|redirect| redirect.redirect_uri())
                            .unwrap_or_else(|| self.server.clone());
                        manager.configure_client(
                            OAuthClientConfig::new(id, redirect).with_client_secret(secret),
                        )?;
                    }
                }
            }
            Grant::ClientCredentials { .. } => {}
        }
        Ok(Some(manager))
    }

    async fn new_manager(&self) -> Result<AuthorizationManager, AuthError> {
        // rmcp builds its own reqwest clients, naming no TLS provider.
        crate::adapters::http::install_default_provider();
        let mut manager = if self.options.allow_private_addresses {
            AuthorizationManager::new_allowing_private_addresses(self.server_url.clone()).await?
        } else {
            AuthorizationManager::new(self.server_url.clone()).await?
        };
        if self.added_roots {
            // rmcp's clients trust the platform's roots only. (Its filter
            // of private addresses is for clients it builds; an issuer a
            // private CA signs is usually a private address anyway.)
            manager.with_client(self.http.clone())?;
        }
        manager.set_credential_store(SharedStore(self.options.store.clone()));
        Ok(manager)
    }

    /// Authorizes anew from `challenge` (a fresh discovery: the server may
    /// have moved to another authorization server), asking for `wanted`
    /// scopes or the first choice; the new token, or `None` when no flow
    /// can run without a person.
    async fn authorize(
        &self,
        manager: &mut Option<AuthorizationManager>,
        challenge: &str,
        wanted: Option<Vec<String>>,
    ) -> Result<Option<String>, AuthError> {
        if !self.options.can_authorize() {
            self.login_needed.store(true, Ordering::Release);
            return Ok(None);
        }
        let result = match &self.options.grant {
            Grant::ClientCredentials { client_id, secret } => {
                self.client_credentials_flow(client_id, secret, challenge, wanted)
                    .await
            }
            Grant::AuthorizationCode => self.authorization_code_flow(challenge, wanted).await,
        };
        match result {
            Ok(authorized) => {
                let token = authorized.get_access_token().await?;
                *manager = Some(authorized);
                *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = None;
                Ok(Some(token))
            }
            Err(error) => {
                tracing::warn!(
                    target: "gonk_tools::mcp::client",
                    server = %self.server,
                    %error,
                    "OAuth authorization failed"
                );
                self.failed(&error);
                Err(error)
            }
        }
    }

    /// A manager whose metadata comes from `challenge`.
    async fn discovered(&self, challenge: &str) -> Result<AuthorizationManager, AuthError> {
        let mut manager = self.new_manager().await?;
        let resolution = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await?;
        if !resolution.source.is_discovered() {
            return Err(AuthError::NoAuthorizationSupport);
        }
        manager.set_metadata(resolution.metadata);
        Ok(manager)
    }

    async fn authorization_code_flow(
        &self,
        challenge: &str,
        wanted: Option<Vec<String>>,
    ) -> Result<AuthorizationManager, AuthError> {
        let Some(redirect) = &self.options.redirect else {
            return Err(AuthError::AuthorizationRequired);
        };
        let manager = self.discovered(challenge).await?;
        let mut request = AuthorizationRequest::new(redirect.redirect_uri())
            .with_client_name(self.options.client_name.clone());
        if let Some(id) = &self.options.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &self.options.client_secret {
                request = request.with_client_secret(secret.clone());
            }
        }
        if let Some(url) = &self.options.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        let wanted = wanted.unwrap_or_else(|| self.options.scopes.clone());
        request = if wanted.is_empty() {
            request.with_initial_scope_selection()
        } else {
            request.with_scopes(wanted)
        };
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, error)| error)?;
        let redirected = redirect
            .authorize(session.get_authorization_url())
            .await
            .map_err(AuthError::AuthorizationFailed)?;
        if let Some(refusal) = refusal(&redirected) {
            return Err(AuthError::AuthorizationFailed(refusal));
        }
        let callback = AuthorizationCallback::from_redirect_url(&redirected)?;
        session
            .handle_callback_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await?;
        Ok(session.auth_manager)
    }

    async fn client_credentials_flow(
        &self,
        client_id: &str,
        secret: &str,
        challenge: &str,
        wanted: Option<Vec<String>>,
    ) -> Result<AuthorizationManager, AuthError> {
        let mut manager = self.discovered(challenge).await?;
        let (resource, supported) = self.protected_resource(challenge).await;
        let params = WWWAuthenticateParams::parse(challenge, &self.server_url);
        let wanted = wanted.unwrap_or_else(|| {
            scopes::initial(
                &self.options.scopes,
                &scopes::split(params.scope.as_deref()),
                &supported,
            )
        });
        let config = self.client_credentials(client_id, secret, wanted, resource);
        manager.validate_client_credentials_metadata(&config)?;
        manager.configure_client_credentials(&config)?;
        manager.exchange_client_credentials(&config).await?;
        Ok(manager)
    }

    fn client_credentials(
        &self,
        client_id: &str,
        secret: &str,
        scopes: Vec<String>,
        resource: String,
    ) -> ClientCredentialsConfig {
        ClientCredentialsConfig::ClientSecret {
            client_id: client_id.to_owned(),
            client_secret: secret.to_owned(),
            scopes,
            resource: Some(resource),
        }
    }

    /// The `resource` and `scopes_supported` of the protected resource
    /// metadata the challenge names (rmcp checked it during discovery but
    /// keeps it to itself); the MCP endpoint and none otherwise.
    async fn protected_resource(&self, challenge: &str) -> (String, Vec<String>) {
        let fallback = (self.server.clone(), Vec::new());
        let params = WWWAuthenticateParams::parse(challenge, &self.server_url);
        let Some(url) = params.resource_metadata_url else {
            return fallback;
        };
        let Ok(response) = self.http.get(url).send().await else {
            return fallback;
        };
        let Ok(metadata) = response.json::<Value>().await else {
            return fallback;
        };
        let resource = metadata
            .get("resource")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or(fallback.0);
        let supported = metadata
            .get("scopes_supported")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        (resource, supported)
    }
}

/// The authorization server's refusal in a redirect (`error`, and its
/// `error_description`), if it refused.
fn refusal(redirected: &str) -> Option<String> {
    let url = Url::parse(redirected).ok()?;
    let mut error = None;
    let mut description = None;
    for (key, value) in url.query_pairs() {
        match key.as_ref() {
            "error" => error = Some(value.into_owned()),
            "error_description" => description = Some(value.into_owned()),
            _ => {}
        }
    }
    let error = error?;
    Some(match description {
        Some(description) => {
            format!("the authorization server refused: {error} ({description})")
        }
        None => format!("the authorization server refused: {error}"),
    })
}

#[cfg(test)]
mod tests {
    use super::refusal;

    #[test]
    fn a_refused_authorization_says_why() {
        assert_eq!(
            refusal("http://127.0.0.1:1/callback?error=access_denied&error_description=The+user+said+no&state=x"),
            Some("the authorization server refused: access_denied (The user said no)".to_owned())
        );
        assert_eq!(refusal("http://127.0.0.1:1/callback?code=a&state=b"), None);
    }
}
