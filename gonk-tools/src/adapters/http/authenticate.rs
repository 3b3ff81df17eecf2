//! [`HttpAuthenticator`]: the host's authentication hook, the one source of
//! a request's [`AuthContext`] on every HTTP surface, and
//! [`HttpAuthRejection`], its refusal.

use std::fmt;
use std::future::Future;

use futures::future::BoxFuture;
use http::StatusCode;

use crate::security::AuthContext;

/// The head of an HTTP request, as the [`HttpAuthenticator`] sees it.
pub type HttpRequestParts = http::request::Parts;

/// Why the authentication hook refused a request: the HTTP answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpAuthRejection {
    status: StatusCode,
    message: String,
    challenge: Option<String>,
}

impl HttpAuthRejection {
    /// `401 Unauthorized` with `WWW-Authenticate: Bearer error="invalid_token"`:
    /// the credentials are missing, malformed, expired or unknown.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        HttpAuthRejection {
            status: StatusCode::UNAUTHORIZED,
            message: message.into(),
            challenge: None,
        }
    }

    /// `403 Forbidden`: the credentials are valid but may not use this
    /// server at all.
    pub fn forbidden(message: impl Into<String>) -> Self {
        HttpAuthRejection {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
            challenge: None,
        }
    }

    /// Answers with this `WWW-Authenticate` value instead of the
    /// surface's default (`Bearer realm="…", error="invalid_token"` on a
    /// `401`, none on a `403`): e.g. an OAuth resource server's challenge
    /// naming its metadata and the scope to ask for.
    pub fn with_challenge(mut self, challenge: impl Into<String>) -> Self {
        self.challenge = Some(challenge.into());
        self
    }

    /// The `WWW-Authenticate` value set by
    /// [`with_challenge`](Self::with_challenge).
    pub fn challenge(&self) -> Option<&str> {
        self.challenge.as_deref()
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The message sent in the body.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for HttpAuthRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for HttpAuthRejection {}

/// The host's authentication hook: turns the verified credentials of an
/// HTTP request (a bearer token, a client certificate forwarded by a
/// proxy, …) into the [`AuthContext`] the request runs with. Set once on
/// the [`HttpServerOptions`](super::HttpServerOptions) every HTTP surface
/// takes ([`authenticate`](super::HttpServerOptions::authenticate)).
///
/// Any `Fn(&HttpRequestParts) -> impl Future<Output = Result<AuthContext,
/// HttpAuthRejection>>` is one.
pub trait HttpAuthenticator: Send + Sync + 'static {
    /// Authenticates one request.
    fn authenticate(
        &self,
        request: &HttpRequestParts,
    ) -> BoxFuture<'static, Result<AuthContext, HttpAuthRejection>>;
}

impl<F, Fut> HttpAuthenticator for F
where
    F: Fn(&HttpRequestParts) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AuthContext, HttpAuthRejection>> + Send + 'static,
{
    fn authenticate(
        &self,
        request: &HttpRequestParts,
    ) -> BoxFuture<'static, Result<AuthContext, HttpAuthRejection>> {
        Box::pin(self(request))
    }
}
