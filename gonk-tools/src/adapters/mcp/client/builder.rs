//! [`McpClientBuilder`]: a connection with hooks that answer the server's
//! questions, and the bound on how many times one call answers them.

use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess, Transport};
use rmcp::RoleClient;
use serde_json::Value;

use super::answers::{Answers, ElicitationRequest, UrlElicitationRequest};
use super::http::WatchedHttp;
use super::{
    lifecycle, ClientState, McpClient, McpClientError, McpEra, McpHttpClientOptions, Shared,
};
use crate::ask::{Elicited, Root, SamplingMessage, SamplingRequest};
use crate::event::LogLevel;

/// Builds an [`McpClient`] whose hooks answer the server's questions: a
/// form for the human ([`on_elicitation`](Self::on_elicitation)), a URL
/// for the human to open ([`on_url_elicitation`](Self::on_url_elicitation)),
/// a completion from the application's model
/// ([`on_sampling`](Self::on_sampling)), the application's roots
/// ([`on_roots`](Self::on_roots)); and, with the `oauth` feature, that
/// reaches OAuth-protected servers (`oauth`).
///
/// The hooks answer in both eras: a 2025-revision server asks on the
/// session (`elicitation/create`, `sampling/createMessage`, `roots/list`);
/// a `2026-07-28` server ends the call with `input_required`, and the
/// client answers its `inputRequests` and retries the call with the
/// answers and the server's `requestState`, at most
/// [`max_input_rounds`](Self::max_input_rounds) times. The client declares
/// only the capabilities it has a hook for. Without a hook it declines an
/// elicitation and answers sampling and roots with JSON-RPC "method not
/// found" (2025), or ends the call with `INPUT_UNAVAILABLE` (2026) — it
/// never waits.
///
/// A typed client built over the connection (`XClient::new(client)`) goes
/// through the same hooks.
///
/// ```no_run
/// use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
/// use gonk_tools::ask::Elicited;
/// use serde_json::json;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = McpClient::builder()
///     .on_elicitation(|request| async move {
///         println!("{}", request.message);
///         Elicited::Accepted(json!({"approve": true}))
///     })
///     .connect_http("http://127.0.0.1:8080/mcp", McpHttpClientOptions::new())
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpClientBuilder {
    answers: Answers,
    max_input_rounds: usize,
    era: Option<McpEra>,
    #[cfg(feature = "oauth")]
    oauth: Option<super::oauth::OAuthOptions>,
}

impl Default for McpClientBuilder {
    fn default() -> Self {
        McpClientBuilder {
            answers: Answers::default(),
            max_input_rounds: DEFAULT_MRTR_MAX_ROUNDS,
            era: None,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }
}

impl std::fmt::Debug for McpClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClientBuilder")
            .field("capabilities", &self.answers.capabilities())
            .field("max_input_rounds", &self.max_input_rounds)
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
}

impl McpClientBuilder {
    /// A client without hooks: it answers no questions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers elicitations (`elicitation/create`): `hook` gets the
    /// message and the form's JSON Schema, and returns the human's answer:
    /// `Accepted` with the form's content (a JSON object), `Declined` or
    /// `Cancelled`. Fields the content leaves out that the form gives a
    /// `default` for are sent with that default. Declares the
    /// `elicitation` capability in form mode (URL mode has its own hook,
    /// [`on_url_elicitation`](Self::on_url_elicitation)).
    ///
    /// ```no_run
    /// use gonk_tools::adapters::mcp::McpClient;
    /// use gonk_tools::ask::Elicited;
    /// use serde_json::json;
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = McpClient::builder()
    ///     .on_elicitation(|request| async move {
    ///         if request.message.contains("delete") {
    ///             return Elicited::Declined;
    ///         }
    ///         // Every field at the default the server gave it.
    ///         Elicited::Accepted(json!({}))
    ///     })
    ///     .connect_stdio(tokio::process::Command::new("notes"))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn on_elicitation<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Elicited<Value>> + Send + 'static,
    {
        self.answers.on_elicitation(hook);
        self
    }

    /// Answers URL-mode elicitations: the server asks the human to open a
    /// URL — a downstream service's sign-in or consent page — and to come
    /// back when done. `hook` shows the URL (or opens it once the human
    /// agrees), waits until they are done, and returns
    /// `Accepted(())`, `Declined` or `Cancelled`; the server then goes on.
    /// Nothing the human enters there passes through the client. Declares
    /// the `elicitation.url` capability; without this hook a URL-mode
    /// elicitation is declined.
    ///
    /// ```no_run
    /// use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
    /// use gonk_tools::ask::Elicited;
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = McpClient::builder()
    ///     .on_url_elicitation(|request| async move {
    ///         println!("{}\nOpen {} and press Enter when done.", request.message, request.url);
    ///         let mut line = String::new();
    ///         let _ = std::io::stdin().read_line(&mut line);
    ///         Elicited::Accepted(())
    ///     })
    ///     .connect_http("http://127.0.0.1:8080/mcp", McpHttpClientOptions::new())
    ///     .await?;
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    pub fn on_url_elicitation<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(UrlElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Elicited<()>> + Send + 'static,
    {
        self.answers.on_url_elicitation(hook);
        self
    }

    /// Answers sampling requests (`sampling/createMessage`): `hook` gets
    /// the conversation and returns the sampled message (a `model` it
    /// leaves out is sent as `unknown`). Declares the `sampling`
    /// capability.
    ///
    /// ```no_run
    /// use gonk_tools::adapters::mcp::McpClient;
    /// use gonk_tools::ask::{SamplingMessage, SamplingRequest};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = McpClient::builder()
    ///     .on_sampling(|request: SamplingRequest| async move {
    ///         let mut reply = SamplingMessage::text("assistant", "It is Paris.");
    ///         reply.model = Some("my-model".to_owned());
    ///         reply
    ///     })
    ///     .connect_stdio(tokio::process::Command::new("notes"))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn on_sampling<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = SamplingMessage> + Send + 'static,
    {
        self.answers.on_sampling(hook);
        self
    }

    /// Answers `roots/list`: `hook` returns the application's roots.
    /// Declares the `roots` capability.
    ///
    /// ```no_run
    /// use gonk_tools::adapters::mcp::McpClient;
    /// use gonk_tools::ask::Root;
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = McpClient::builder()
    ///     .on_roots(|| async {
    ///         vec![Root { uri: "file:///home/me/notes".into(), name: Some("notes".into()) }]
    ///     })
    ///     .connect_stdio(tokio::process::Command::new("notes"))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn on_roots<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Root>> + Send + 'static,
    {
        self.answers.on_roots(hook);
        self
    }

    /// How many `tools/call` requests one call sends at most while a
    /// `2026-07-28` server keeps answering `input_required` (at least 1;
    /// the default is rmcp's, 10). The call then fails with `INTERNAL`.
    ///
    /// ```
    /// use gonk_tools::adapters::mcp::McpClient;
    ///
    /// let builder = McpClient::builder().max_input_rounds(3);
    /// # let _ = builder;
    /// ```
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds.max(1);
        self
    }

    /// Speaks only `era`'s lifecycle: [`McpEra::Session`] opens with the
    /// `initialize` handshake at once (no `server/discover` first), as a
    /// 2025-revision client would; [`McpEra::Stateless`] requires a server
    /// that speaks `2026-07-28`. By default the client asks
    /// `server/discover` first and falls back to the handshake.
    ///
    /// ```
    /// use gonk_tools::adapters::mcp::{McpClient, McpEra};
    ///
    /// let builder = McpClient::builder().era(McpEra::Session);
    /// # let _ = builder;
    /// ```
    pub fn era(mut self, era: McpEra) -> Self {
        self.era = Some(era);
        self
    }

    /// Starts `command` (e.g. `notes mcp`) and connects to it over its
    /// stdin/stdout. Its stderr is inherited. The process is killed when
    /// the client is dropped.
    pub async fn connect_stdio(
        self,
        command: tokio::process::Command,
    ) -> Result<McpClient, McpClientError> {
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .map_err(McpClientError::Spawn)?;
        self.connect(transport, |same| same).await
    }

    /// Connects over a pair of byte streams (e.g. a `tokio::io::duplex`
    /// pipe to an in-process [`serve_io`](super::super::serve_io)).
    pub async fn connect_io<R, W>(self, read: R, write: W) -> Result<McpClient, McpClientError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        self.connect((read, write).into_transport(), |same| same)
            .await
    }

    /// Authorizes with OAuth 2.1 when the server asks for a token (feature
    /// `oauth`; HTTP connections only): the server's `401` starts the flow
    /// `options` describe, and every request then carries the token, which
    /// is refreshed, renewed and stepped up as the server's refusals call
    /// for. A token replaces the [`api_key`](McpHttpClientOptions::api_key)
    /// of the connection. See [`oauth`](super::oauth).
    ///
    /// ```no_run
    /// use gonk_tools::adapters::mcp::oauth::{LoopbackRedirect, OAuthOptions};
    /// use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = McpClient::builder()
    ///     .oauth(OAuthOptions::new().redirect(LoopbackRedirect::bind(0).await?))
    ///     .connect_http("https://notes.example.com/mcp", McpHttpClientOptions::new())
    ///     .await?;
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, options: super::oauth::OAuthOptions) -> Self {
        self.oauth = Some(options);
        self
    }

    /// Connects to a streamable-HTTP endpoint (`http://127.0.0.1:8080/mcp`).
    pub async fn connect_http(
        self,
        url: &str,
        options: McpHttpClientOptions,
    ) -> Result<McpClient, McpClientError> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(key) = options.api_key {
            config = config.auth_header(key);
        }
        if !options.headers.is_empty() {
            config = config.custom_headers(options.headers.clone());
        }
        config = config.reinit_on_expired_session(options.renew_expired_sessions);
        let reqwest = options
            .outbound
            .client()
            .map_err(|error| McpClientError::Connect(error.to_string()))?;
        let http = WatchedHttp::new(reqwest.clone());
        #[cfg(feature = "oauth")]
        if let Some(oauth) = self.oauth.clone() {
            let session = Arc::new(
                super::oauth::OAuthSession::new(oauth, url, reqwest, options.outbound.adds_roots())
                    .map_err(McpClientError::Connect)?,
            );
            let authorized = super::oauth::OAuthHttp::new(http.clone(), Arc::clone(&session));
            let prepared = session.prepare(&options.headers).await;
            let connected = match prepared {
                Ok(()) => self.connect_over(http, authorized, config).await,
                Err(error) => Err(McpClientError::Connect(error.to_string())),
            };
            return connected.map_err(|error| oauth_error(&session, url, error));
        }
        self.connect_over(http.clone(), http, config).await
    }

    /// Connects over `client` (the watched HTTP client itself, or a layer
    /// over it), watching the connection through `http`.
    async fn connect_over<C>(
        self,
        http: WatchedHttp,
        client: C,
        config: StreamableHttpClientTransportConfig,
    ) -> Result<McpClient, McpClientError>
    where
        C: rmcp::transport::streamable_http_client::StreamableHttpClient,
    {
        let transport = StreamableHttpClientTransport::with_client(client.clone(), config.clone());
        // A handshake after discovery starts on a fresh transport: HTTP
        // keeps no state between requests that a new one would lose.
        let again = move |_| StreamableHttpClientTransport::with_client(client, config);
        let mut client = self.connect(transport, again).await.map_err(|error| {
            match (error, http.last_cause()) {
                (McpClientError::Connect(message), Some(cause)) if !message.contains(&cause) => {
                    McpClientError::Connect(format!("{message} ({cause})"))
                }
                (error, _) => error,
            }
        })?;
        // A session's server may ask on its standalone stream at once.
        if client.era() == McpEra::Session {
            http.until_listening().await;
        }
        client.http = Some(http);
        Ok(client)
    }

    /// Starts a connection over `transport`; `again` gives the transport
    /// for an `initialize` after a `server/discover` that found no common
    /// stateless version.
    async fn connect<T>(
        self,
        transport: T,
        again: impl FnOnce(T) -> T + Send,
    ) -> Result<McpClient, McpClientError>
    where
        T: Transport<RoleClient> + 'static,
    {
        let answers = Arc::new(self.answers);
        let state = ClientState::new(Arc::clone(&answers));
        let started = lifecycle::start(state, transport, again, self.era).await?;
        let version = started
            .service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.clone())
            .ok_or_else(|| {
                McpClientError::Connect("the server negotiated no protocol version".into())
            })?;
        Ok(McpClient {
            shared: Arc::new(Shared {
                era: McpEra::of(&version),
                wrapped: Mutex::default(),
                // The level a 2025-era server of ours starts a session at.
                log_level: Mutex::new(LogLevel::Info),
                answers,
                max_input_rounds: self.max_input_rounds,
            }),
            service: started.service,
            inbox: started.inbox,
            version,
            http: None,
        })
    }
}

/// The error of a connection whose authorization failed, said as such:
/// someone must log in (the server wants a token no flow of `session` could
/// get), or the flow failed and why; other errors as they are.
#[cfg(feature = "oauth")]
fn oauth_error(
    session: &super::oauth::OAuthSession,
    url: &str,
    error: McpClientError,
) -> McpClientError {
    if session.login_needed() {
        return McpClientError::AuthorizationRequired(format!(
            "the MCP server at {url} asks for an OAuth token, and the credential store holds none \
             that works; log in first (an authorization-code client runs the flow only with \
             OAuthOptions::redirect)"
        ));
    }
    match session.last_failure() {
        Some(reason) => McpClientError::Authorization(format!(
            "authorizing with the MCP server at {url} failed: {reason}"
        )),
        None => error,
    }
}
