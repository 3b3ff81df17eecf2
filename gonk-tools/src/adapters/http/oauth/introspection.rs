//! [`IntrospectionVerifier`]: opaque access tokens, asked of the
//! authorization server (RFC 7662).

use std::fmt;
use std::time::{Duration, UNIX_EPOCH};

use futures::future::BoxFuture;
use serde_json::Value;

use super::issuer::{checked_url, default_client, fetch_json, OAuthConfigError};
use super::jwt::now_secs;
use super::token_cache::{cache_key, TokenCache, DEFAULT_CAPACITY};
use super::verifier::{TokenRejection, TokenRejectionKind, TokenVerifier, VerifiedToken};

/// Asks the authorization server's introspection endpoint about each
/// token: one request per HTTP request, unless
/// [`cache_ttl`](Self::cache_ttl) lets an active answer stand for a short
/// while (off by default: a revoked token is refused at once). A token passes
/// when the answer is `"active": true`, names a subject, its `iss` (when
/// given) is the configured issuer, its `aud` names this resource server
/// (required unless [`allow_missing_audience`](Self::allow_missing_audience))
/// and its `exp`/`nbf` (when given) hold, with a 30 s leeway. An endpoint
/// that cannot be reached refuses the token.
///
/// ```
/// use gonk_tools::adapters::http::oauth::IntrospectionVerifier;
///
/// let verifier = IntrospectionVerifier::new(
///     "https://idp.example",
///     "https://idp.example/oauth/introspect",
/// )
/// .unwrap()
/// .client_credentials("notes-server", "s3cret");
/// # let _ = verifier;
/// ```
pub struct IntrospectionVerifier {
    issuer: String,
    endpoint: String,
    client: reqwest::Client,
    credentials: Option<(String, String)>,
    require_audience: bool,
    leeway: u64,
    timeout: Duration,
    /// How long an active answer stands (0: not at all).
    cache_ttl: Duration,
    verified: TokenCache<VerifiedToken>,
}

impl fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("issuer", &self.issuer)
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.credentials.as_ref().map(|(id, _)| id))
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Introspection of `issuer`'s tokens at `endpoint`. Both must be
    /// `https://` (or `http://` on a loopback host).
    pub fn new(
        issuer: impl AsRef<str>,
        endpoint: impl AsRef<str>,
    ) -> Result<Self, OAuthConfigError> {
        Ok(IntrospectionVerifier {
            issuer: checked_url(issuer.as_ref())?,
            endpoint: checked_url(endpoint.as_ref())?,
            client: default_client()?,
            credentials: None,
            require_audience: true,
            leeway: 30,
            timeout: Duration::from_secs(5),
            cache_ttl: Duration::ZERO,
            verified: TokenCache::new(DEFAULT_CAPACITY),
        })
    }

    /// Authenticates to the endpoint with HTTP Basic (`client_secret_basic`).
    pub fn client_credentials(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.credentials = Some((client_id.into(), client_secret.into()));
        self
    }

    /// Accepts an answer without `aud` (some servers omit it). Off by
    /// default: a token for another resource must not pass.
    pub fn allow_missing_audience(mut self, allow: bool) -> Self {
        self.require_audience = !allow;
        self
    }

    /// Sends with `client` instead of the default one (which trusts the
    /// platform's roots): e.g. one from
    /// [`OutboundHttp`](crate::adapters::http::OutboundHttp) that also
    /// trusts a private CA.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }

    /// Lets an active answer stand for `ttl` (and never past the token's
    /// `exp`), so a client's repeated token costs one introspection per
    /// `ttl`: the price is that a token revoked meanwhile still passes
    /// until then. Keep it short (seconds to a minute). Off (zero) by
    /// default. Kept under a SHA-256 of the token and the audience, never
    /// the token; a refused token is never kept.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// How many answers the cache keeps at most (default 10 000).
    pub fn cache_capacity(mut self, capacity: usize) -> Self {
        self.verified = TokenCache::new(capacity);
        self
    }

    /// How many verifications were answered from the cache so far.
    pub fn cache_hits(&self) -> u64 {
        self.verified.hits()
    }

    /// The time limit of one introspection request (default 5 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn verify_cached(
        &self,
        token: &str,
        audience: &str,
    ) -> Result<VerifiedToken, TokenRejection> {
        if self.cache_ttl.is_zero() {
            return self
                .check(token, audience)
                .await
                .map(|(verified, _)| verified);
        }
        let key = cache_key(token, audience);
        let now = now_secs();
        if let Some(verified) = self.verified.get(&key, now, |_| true) {
            return Ok(verified);
        }
        let (verified, exp) = self.check(token, audience).await?;
        let until = now.saturating_add(self.cache_ttl.as_secs().max(1));
        let until = exp.map_or(until, |exp| until.min(exp));
        self.verified.insert(key, verified.clone(), until, now);
        Ok(verified)
    }

    /// The endpoint's answer checked; the token's `exp`, when given.
    async fn check(
        &self,
        token: &str,
        audience: &str,
    ) -> Result<(VerifiedToken, Option<u64>), TokenRejection> {
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let mut request = self
            .client
            .post(&self.endpoint)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        if let Some((id, secret)) = &self.credentials {
            request = request.basic_auth(id, Some(secret));
        }
        let answer = fetch_json(request, &self.endpoint, self.timeout)
            .await
            .map_err(|problem| {
                tracing::warn!(target: "gonk_tools::adapters::http::oauth", %problem, "token introspection failed");
                TokenRejection::new(
                    TokenRejectionKind::Unavailable,
                    "the authorization server could not be asked about the token; try again later",
                )
            })?;
        let inactive = |message: &str| TokenRejection::new(TokenRejectionKind::Inactive, message);
        if answer.get("active").and_then(Value::as_bool) != Some(true) {
            return Err(inactive("the token is not active"));
        }
        if let Some(iss) = answer.get("iss") {
            if iss.as_str() != Some(self.issuer.as_str()) {
                return Err(TokenRejection::new(
                    TokenRejectionKind::WrongIssuer,
                    "the token is from another issuer",
                ));
            }
        }
        let audience_ok = match answer.get("aud") {
            Some(Value::String(aud)) => aud == audience,
            Some(Value::Array(auds)) => auds.iter().any(|aud| aud.as_str() == Some(audience)),
            None => !self.require_audience,
            Some(_) => false,
        };
        if !audience_ok {
            return Err(TokenRejection::new(
                TokenRejectionKind::WrongAudience,
                "the token was issued for another resource",
            ));
        }
        let now = now_secs();
        let exp = answer.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp + self.leeway < now) {
            return Err(TokenRejection::new(
                TokenRejectionKind::Expired,
                "the token has expired",
            ));
        }
        if answer
            .get("nbf")
            .and_then(Value::as_u64)
            .is_some_and(|nbf| nbf > now + self.leeway)
        {
            return Err(TokenRejection::new(
                TokenRejectionKind::NotYetValid,
                "the token is not valid yet",
            ));
        }
        let subject = answer
            .get("sub")
            .and_then(Value::as_str)
            .filter(|sub| !sub.trim().is_empty())
            .ok_or_else(|| {
                TokenRejection::new(
                    TokenRejectionKind::Malformed,
                    "the introspection answer names no subject",
                )
            })?;
        let mut verified = VerifiedToken::new(&self.issuer, subject).with_scopes(
            answer
                .get("scope")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .split_whitespace(),
        );
        if let Some(client_id) = answer.get("client_id").and_then(Value::as_str) {
            verified = verified.with_client_id(client_id);
        }
        if let Some(exp) = exp {
            verified =
                verified.with_expires_at(UNIX_EPOCH + Duration::from_secs(exp + self.leeway));
        }
        Ok((verified, exp))
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        audience: &'a str,
    ) -> BoxFuture<'a, Result<VerifiedToken, TokenRejection>> {
        Box::pin(self.verify_cached(token, audience))
    }
}
