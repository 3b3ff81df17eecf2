//! How a person's authorization comes back to the client: the authorization
//! server sends the browser to the client's redirect URI with the code.
//! [`LoopbackRedirect`] listens for that on `127.0.0.1` (RFC 8252's
//! loopback redirect for native apps) and shows the URL to open; a host
//! with its own way (a web app's callback route, a test that follows the
//! redirects itself) implements [`AuthorizationRedirect`].

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Where the authorization server sends the person's browser back, and how
/// the client learns the URL it was sent to.
///
/// The client asks for [`redirect_uri`](Self::redirect_uri) before it
/// registers (dynamic registration names it) and builds the authorization
/// URL, then calls [`authorize`](Self::authorize) with that URL and waits:
/// the answer is the full URL the browser was redirected to (with `code`,
/// `state` and `iss` in its query), which the client checks and exchanges.
///
/// ```
/// use futures::future::BoxFuture;
/// use gonk_tools::adapters::mcp::oauth::AuthorizationRedirect;
///
/// /// A web app's callback route: it hands each redirect it receives to the
/// /// waiting client through a channel.
/// struct WebCallback {
///     redirected: tokio::sync::Mutex<tokio::sync::mpsc::Receiver<String>>,
/// }
///
/// impl AuthorizationRedirect for WebCallback {
///     fn redirect_uri(&self) -> String {
///         "https://app.example.com/oauth/callback".to_owned()
///     }
///
///     fn authorize<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<String, String>> {
///         Box::pin(async move {
///             println!("send the user to {url}");
///             let mut redirected = self.redirected.lock().await;
///             redirected.recv().await.ok_or_else(|| "the callback route closed".to_owned())
///         })
///     }
/// }
/// ```
pub trait AuthorizationRedirect: Send + Sync + 'static {
    /// The redirect URI to register and to send with the authorization
    /// request.
    fn redirect_uri(&self) -> String;

    /// Has the person open `authorization_url` and waits until the browser
    /// comes back: the URL it was redirected to, or why it did not come
    /// back.
    fn authorize<'a>(&'a self, authorization_url: &'a str)
        -> BoxFuture<'a, Result<String, String>>;
}

/// How long [`LoopbackRedirect`] waits for the browser by default.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(600);

/// The most bytes of a request head the loopback listener reads.
const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// How long one connection to the listener may take to send its request.
const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(10);

type ShowUrl = dyn Fn(&str) + Send + Sync;

/// The authorization-code flow for a person at this machine: a listener on
/// `http://127.0.0.1:PORT/callback` (the redirect URI), and a callback that
/// shows the URL to open (by default it prints it on stderr).
///
/// ```no_run
/// use gonk_tools::adapters::mcp::oauth::{LoopbackRedirect, OAuthOptions};
/// use gonk_tools::adapters::mcp::McpClient;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // Port 0: any free port (the authorization server must accept any
/// // loopback port, as RFC 8252 asks); pick a fixed one for servers that
/// // register an exact redirect URI.
/// let redirect = LoopbackRedirect::bind(0)
///     .await?
///     .on_url(|url| eprintln!("Open this URL in your browser to sign in:\n  {url}"));
/// let client = McpClient::builder()
///     .oauth(OAuthOptions::new().redirect(redirect))
///     .connect_http("https://mcp.example.com/mcp", Default::default())
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct LoopbackRedirect {
    listener: Arc<tokio::sync::Mutex<TcpListener>>,
    uri: String,
    show: Arc<ShowUrl>,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("redirect_uri", &self.uri)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Listens on `127.0.0.1:port` (`0` for any free port); the redirect URI
    /// is `http://127.0.0.1:<port>/callback`.
    pub async fn bind(port: u16) -> std::io::Result<LoopbackRedirect> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        Ok(LoopbackRedirect {
            listener: Arc::new(tokio::sync::Mutex::new(listener)),
            uri: format!("http://127.0.0.1:{port}/callback"),
            show: Arc::new(|url| {
                eprintln!("Open this URL in a browser to authorize the MCP client:\n  {url}")
            }),
            timeout: DEFAULT_LOGIN_TIMEOUT,
        })
    }

    /// Shows the authorization URL with `show` instead of printing it on
    /// stderr (a desktop app opens the browser; a chat host posts a link).
    pub fn on_url(mut self, show: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.show = Arc::new(show);
        self
    }

    /// How long to wait for the browser to come back (default 10 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Waits for a request to `/callback` and answers it; other paths (a
    /// browser's `favicon.ico`) get `404` and the wait goes on.
    async fn wait(&self) -> Result<String, String> {
        let listener = self.listener.lock().await;
        loop {
            let (stream, _) = listener
                .accept()
                .await
                .map_err(|e| format!("the loopback redirect listener failed: {e}"))?;
            match tokio::time::timeout(REQUEST_HEAD_TIMEOUT, callback_target(stream)).await {
                Ok(Ok(Some(target))) => {
                    let origin = self.uri.trim_end_matches("/callback");
                    return Ok(format!("{origin}{target}"));
                }
                Ok(Ok(None)) | Ok(Err(_)) | Err(_) => continue,
            }
        }
    }
}

impl AuthorizationRedirect for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        self.uri.clone()
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            (self.show)(authorization_url);
            tokio::time::timeout(self.timeout, self.wait())
                .await
                .map_err(|_| {
                    format!(
                        "nobody completed the authorization within {:?}; run the login again",
                        self.timeout
                    )
                })?
        })
    }
}

/// Reads one request head from `stream`; the target (`/callback?…`) of a
/// `GET /callback`, answered with a page telling the person to go back;
/// `None` (answered `404`) for anything else.
async fn callback_target(mut stream: TcpStream) -> std::io::Result<Option<String>> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await?;
        if read == 0 || head.len() + read > MAX_REQUEST_HEAD {
            return Ok(None);
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut words = line.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (words.next(), words.next().unwrap_or_default());
    let path = target.split('?').next().unwrap_or_default();
    if method != Some("GET") || path != "/callback" {
        stream
            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await?;
        return Ok(None);
    }
    let refused = target.contains("error=");
    let page: &[u8] = if refused {
        b"<!doctype html><title>Authorization refused</title><p>The authorization was refused. You can close this window; the program that asked says why."
    } else {
        b"<!doctype html><title>Authorized</title><p>Authorization complete. You can close this window and go back to the program."
    };
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        page.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.write_all(page).await?;
    let _ = stream.shutdown().await;
    Ok(Some(target.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_listener_hands_back_the_callback_and_ignores_other_paths() {
        let shown = Arc::new(std::sync::Mutex::new(String::new()));
        let seen = Arc::clone(&shown);
        let redirect = LoopbackRedirect::bind(0)
            .await
            .expect("binds")
            .on_url(move |url| *seen.lock().unwrap() = url.to_owned());
        let uri = redirect.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let waiting = tokio::spawn({
            let redirect = redirect.clone();
            async move { redirect.authorize("https://as.example/authorize?x=1").await }
        });
        let origin = uri.trim_end_matches("/callback").to_owned();
        let client = crate::adapters::http::OutboundHttp::new()
            .client()
            .expect("a client");
        let favicon = client
            .get(format!("{origin}/favicon.ico"))
            .send()
            .await
            .expect("answered");
        assert_eq!(favicon.status(), 404);
        let page = client
            .get(format!(
                "{uri}?code=abc&state=xyz&iss=https%3A%2F%2Fas.example"
            ))
            .send()
            .await
            .expect("answered");
        assert_eq!(page.status(), 200);
        assert!(page
            .text()
            .await
            .unwrap()
            .contains("Authorization complete"));
        let redirected = waiting.await.expect("joins").expect("came back");
        assert_eq!(
            redirected,
            format!("{uri}?code=abc&state=xyz&iss=https%3A%2F%2Fas.example")
        );
        assert_eq!(*shown.lock().unwrap(), "https://as.example/authorize?x=1");
    }

    #[tokio::test]
    async fn a_browser_that_never_comes_back_times_out_with_what_to_do() {
        let redirect = LoopbackRedirect::bind(0)
            .await
            .expect("binds")
            .on_url(|_| {})
            .timeout(Duration::from_millis(50));
        let error = redirect
            .authorize("https://as.example/a")
            .await
            .unwrap_err();
        assert!(error.contains("run the login again"), "{error}");
    }
}
