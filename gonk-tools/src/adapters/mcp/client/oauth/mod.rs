//! OAuth 2.1 for the MCP client (features `mcp` and `oauth`): [`McpClient`](super::McpClient),
//! [`McpSource`](super::super::McpSource) and the gateway's upstreams reach
//! servers that answer `401` and ask for a bearer token, as the MCP
//! authorization spec describes.
//!
//! Give a client [`OAuthOptions`] with
//! [`McpClientBuilder::oauth`](super::McpClientBuilder::oauth). On the
//! server's first `401` the client finds out where to authorize, gets a
//! token and sends the request again; later requests carry the token, an
//! expiring one is refreshed, a `403 insufficient_scope` is answered with a
//! step-up. The application never handles a token.
//!
//! # What comes from rmcp, and what is ours
//!
//! rmcp's `auth` feature ([`rmcp::transport::auth`]) does the protocol
//! steps: discovery from the `WWW-Authenticate` challenge, then the
//! path-based and root well-known locations of the protected resource
//! metadata (RFC 9728, the `resource` checked against the server); the
//! authorization server's metadata (RFC 8414 and OpenID Connect, tenant
//! paths), its `issuer` checked against the URL it came from; Client ID
//! Metadata Documents when the server advertises them, else dynamic
//! registration, else a pre-registered client; PKCE S256; the RFC 8707
//! `resource` parameter exactly as the metadata published it; the RFC 9207
//! `iss` check of the authorization response; the first scope choice
//! (challenge, then `scopes_supported`, then none, with `offline_access`
//! when offered); refresh; the client-credentials grant; the
//! [`CredentialStore`] trait and [`InMemoryCredentialStore`].
//!
//! What rmcp leaves to the application, this module does:
//!
//! * **Reacting on the wire.** A transport layer under rmcp's HTTP client
//!   answers a `401` by refreshing the token or authorizing anew (once per
//!   request) and sends the request again; a `403 insufficient_scope` by a
//!   step-up (rmcp's `AuthClient` only refreshes). Concurrent requests wait
//!   for one authorization. Before the first request, a client with no
//!   usable token probes the server and authorizes first, so a person's
//!   login is not cut short by the protocol negotiation's time limit.
//! * **Step-up.** The scopes the token had plus the challenged ones; a
//!   challenge naming nothing new fails at once, and one request steps up
//!   at most [`OAuthOptions::max_step_ups`] times.
//! * **A file store.** [`FileCredentialStore`], a `0600` file.
//! * **The person's side of the flow.** [`LoopbackRedirect`], a listener
//!   on `127.0.0.1` for the redirect and a callback that shows the URL to
//!   open; [`AuthorizationRedirect`] for other ways back.
//! * **Client credentials end to end**: the `resource` parameter read from
//!   the metadata the challenge names, the scopes chosen as above.
//!
//! # People and machines
//!
//! ```no_run
//! use gonk_tools::adapters::mcp::oauth::{FileCredentialStore, LoopbackRedirect, OAuthOptions};
//! use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // A person: the authorization-code flow in their browser, the tokens
//! // kept in a file for the next run.
//! let person = OAuthOptions::new()
//!     .client_name("notes desk")
//!     .credential_store(FileCredentialStore::new("notes-token.json"))
//!     .redirect(LoopbackRedirect::bind(0).await?);
//! let client = McpClient::builder()
//!     .oauth(person)
//!     .connect_http("https://notes.example.com/mcp", McpHttpClientOptions::new())
//!     .await?;
//!
//! // A machine: client credentials, no person involved.
//! let machine = OAuthOptions::client_credentials("indexer", "s3cret").scopes(["notes:read"]);
//! let indexer = McpClient::builder()
//!     .oauth(machine)
//!     .connect_http("https://notes.example.com/mcp", McpHttpClientOptions::new())
//!     .await?;
//! # let _ = (client, indexer);
//! # Ok(()) }
//! ```
//!
//! Without a [`redirect`](OAuthOptions::redirect), an authorization-code
//! client only uses the tokens its store already holds (a service that
//! serves requests cannot stop to ask a person): with none, connecting
//! fails with [`McpClientError::AuthorizationRequired`](super::McpClientError::AuthorizationRequired).

mod redirect;
mod scopes;
mod session;
mod store;
mod transport;

use std::sync::Arc;

pub use redirect::{AuthorizationRedirect, LoopbackRedirect, DEFAULT_LOGIN_TIMEOUT};
pub use rmcp::transport::auth::{CredentialStore, InMemoryCredentialStore, StoredCredentials};
pub(super) use session::OAuthSession;
pub use store::FileCredentialStore;
pub(super) use transport::OAuthHttp;

/// How many step-ups one request may make by default.
pub const DEFAULT_MAX_STEP_UPS: u32 = 2;

/// Who the client is to the authorization server, and how it gets tokens.
#[derive(Clone)]
enum Grant {
    /// A person authorizes in a browser (authorization code with PKCE).
    AuthorizationCode,
    /// A machine with its own credentials (client credentials).
    ClientCredentials { client_id: String, secret: String },
}

/// How an MCP client authorizes with an OAuth-protected server; give it to
/// [`McpClientBuilder::oauth`](super::McpClientBuilder::oauth) (or
/// [`McpSourceBuilder::oauth`](super::super::McpSourceBuilder::oauth)).
///
/// [`new`](Self::new) is for a person (the authorization-code flow, which
/// needs a [`redirect`](Self::redirect) to run), and
/// [`client_credentials`](Self::client_credentials) for a machine. Clones
/// share the [`credential_store`](Self::credential_store): a source that
/// reconnects keeps its token.
///
/// Which client id: a pre-registered one ([`client_id`](Self::client_id))
/// first; else the URL of the application's Client ID Metadata Document
/// ([`client_metadata_url`](Self::client_metadata_url)) when the
/// authorization server supports those; else dynamic registration under
/// [`client_name`](Self::client_name).
#[derive(Clone)]
pub struct OAuthOptions {
    grant: Grant,
    client_id: Option<String>,
    client_secret: Option<String>,
    client_metadata_url: Option<String>,
    client_name: String,
    scopes: Vec<String>,
    store: Arc<dyn CredentialStore>,
    redirect: Option<Arc<dyn AuthorizationRedirect>>,
    max_step_ups: u32,
    allow_private_addresses: bool,
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let grant = match &self.grant {
            Grant::AuthorizationCode => "authorization_code".to_owned(),
            Grant::ClientCredentials { client_id, .. } => {
                format!("client_credentials({client_id})")
            }
        };
        f.debug_struct("OAuthOptions")
            .field("grant", &grant)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_name", &self.client_name)
            .field("scopes", &self.scopes)
            .field("interactive", &self.redirect.is_some())
            .field("max_step_ups", &self.max_step_ups)
            .finish_non_exhaustive()
    }
}

impl Default for OAuthOptions {
    fn default() -> Self {
        OAuthOptions {
            grant: Grant::AuthorizationCode,
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            client_name: "gonk-tools MCP client".to_owned(),
            scopes: Vec::new(),
            store: Arc::new(InMemoryCredentialStore::new()),
            redirect: None,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            allow_private_addresses: false,
        }
    }
}

impl OAuthOptions {
    /// The authorization-code flow for a person: dynamic registration, the
    /// scopes the server asks for, tokens in memory. It runs when a
    /// [`redirect`](Self::redirect) is given; without one the client uses
    /// the tokens of its store only.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client-credentials flow for a machine (no person, no redirect):
    /// `client_id` and `secret` as the authorization server issued them,
    /// sent as it advertises (`client_secret_basic` when that is all it
    /// takes, else `client_secret_post`).
    ///
    /// ```
    /// use gonk_tools::adapters::mcp::oauth::OAuthOptions;
    ///
    /// let options = OAuthOptions::client_credentials("indexer", "s3cret").scopes(["notes:read"]);
    /// assert!(!format!("{options:?}").contains("s3cret"));
    /// ```
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        OAuthOptions {
            grant: Grant::ClientCredentials {
                client_id: client_id.into(),
                secret: secret.into(),
            },
            ..Self::default()
        }
    }

    /// A client id registered with the authorization server beforehand
    /// (no dynamic registration).
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The secret of the pre-registered [`client_id`](Self::client_id), for
    /// a confidential client.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The HTTPS URL of this application's Client ID Metadata Document,
    /// used as its client id where the authorization server supports those
    /// (`client_id_metadata_document_supported`); elsewhere the client
    /// registers dynamically.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The name a dynamic registration gives (default `gonk-tools MCP
    /// client`); the authorization server shows it on its consent page.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scopes to ask for first. By default: those of the server's
    /// challenge, else those its metadata supports, else none. A step-up
    /// adds what a `403` names either way.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Where the tokens are kept (default: in memory, shared by this
    /// value's clones): a [`FileCredentialStore`] keeps them for the next
    /// run, any [`CredentialStore`] anywhere else (a keychain, a database).
    /// One store holds the tokens of one server.
    pub fn credential_store(mut self, store: impl CredentialStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// How a person authorizes: [`LoopbackRedirect`] at this machine, or
    /// the application's own [`AuthorizationRedirect`].
    pub fn redirect(mut self, redirect: impl AuthorizationRedirect) -> Self {
        self.redirect = Some(Arc::new(redirect));
        self
    }

    /// How many times one request may step up after `403
    /// insufficient_scope` (default [`DEFAULT_MAX_STEP_UPS`]); then it fails
    /// with the server's refusal. A challenge naming only scopes the token
    /// already has fails at once.
    pub fn max_step_ups(mut self, max: u32) -> Self {
        self.max_step_ups = max;
        self
    }

    /// Lets the authorization server the metadata names be at a private
    /// address (`10.0.0.9`), not only a public one or, for a server on
    /// loopback, loopback. Off by default: a server cannot send the client
    /// to probe the local network.
    pub fn allow_private_addresses(mut self, allow: bool) -> Self {
        self.allow_private_addresses = allow;
        self
    }

    /// Whether the options can run an authorization without a stored
    /// token: client credentials, or a person with a redirect.
    pub fn can_authorize(&self) -> bool {
        matches!(self.grant, Grant::ClientCredentials { .. }) || self.redirect.is_some()
    }
}
