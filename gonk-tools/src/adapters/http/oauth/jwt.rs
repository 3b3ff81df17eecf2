//! [`JwtVerifier`]: JWT access tokens (RFC 9068) verified against the keys
//! their issuer publishes.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use serde_json::Value;

use super::issuer::{checked_url, default_client, OAuthConfigError};
use super::jwks::{Key, KeyCache};
use super::token_cache::{cache_key, TokenCache, DEFAULT_CAPACITY};
use super::verifier::{TokenRejection, TokenRejectionKind, TokenVerifier, VerifiedToken};

/// The algorithms allowed unless [`JwtVerifier::algorithms`] says
/// otherwise: every public-key one `jsonwebtoken` verifies. `none` cannot
/// be named at all, and HMAC never passes.
pub const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens of one issuer:
///
/// * **signature** with a key the issuer publishes in its JWKS (found
///   through its RFC 8414 or OpenID Connect metadata, tenant paths
///   included, or given with [`jwks_uri`](Self::jwks_uri)), by an
///   algorithm on the allow-list ([`DEFAULT_ALGORITHMS`]; never `none`,
///   never HMAC — which would let anyone holding the public key sign), and
///   the key's own algorithm when it names one;
/// * **`iss`** exactly the configured issuer, which must be `https://` (or
///   `http://` on a loopback host);
/// * **`exp`** (required) and **`nbf`** with a small leeway (30 s);
/// * **`aud`** (required) naming the resource server's canonical URI.
///
/// Keys are cached: fetched on first use, refetched once when a token names
/// an unknown `kid` (at most once per [`refetch_floor`](Self::refetch_floor),
/// 30 s, however many such tokens come), refreshed after
/// [`max_key_age`](Self::max_key_age) (1 h); while the JWKS endpoint is
/// down the last keys fetched keep verifying, and an unknown key is
/// refused.
///
/// Verified tokens are cached too (10 000 of them unless
/// [`cache_capacity`](Self::cache_capacity) says otherwise), under a
/// SHA-256 of the token and the audience — never the token: a client that
/// sends the same token with each request costs one signature check. An
/// entry ends at the token's `exp` (the leeway is not added), and as soon
/// as the key that verified it leaves the issuer's set (seen at a refetch,
/// at the latest after [`max_key_age`](Self::max_key_age)). A refused
/// token is never cached.
///
/// ```
/// use gonk_tools::adapters::http::oauth::JwtVerifier;
///
/// let verifier = JwtVerifier::new("https://idp.example/tenant-1").unwrap();
/// assert_eq!(verifier.issuer(), "https://idp.example/tenant-1");
/// assert!(JwtVerifier::new("http://idp.example").is_err(), "http only on loopback");
/// ```
pub struct JwtVerifier {
    issuer: String,
    keys: KeyCache,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    verified: TokenCache<(VerifiedToken, Arc<Key>)>,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("algorithms", &self.algorithms)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

/// The claims read from an access token.
#[derive(Deserialize)]
struct Claims {
    sub: String,
    exp: u64,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Value>,
}

fn scopes_of(scope: Option<String>, scp: Option<Value>) -> Vec<String> {
    if let Some(scope) = scope {
        return scope.split_whitespace().map(str::to_owned).collect();
    }
    match scp {
        Some(Value::String(scope)) => scope.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(items)) => items
            .into_iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn is_hmac(alg: Algorithm) -> bool {
    matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

impl JwtVerifier {
    /// A verifier of `issuer`'s tokens; its keys are found through its
    /// metadata on first use (so the server starts while the issuer is
    /// down). Refuses an issuer that is not `https://`, or `http://` on a
    /// loopback host.
    pub fn new(issuer: impl AsRef<str>) -> Result<Self, OAuthConfigError> {
        let issuer = checked_url(issuer.as_ref())?;
        Ok(JwtVerifier {
            keys: KeyCache::new(issuer.clone(), None, default_client()?),
            issuer,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(30),
            verified: TokenCache::new(DEFAULT_CAPACITY),
        })
    }

    /// Takes the keys from `uri` instead of the issuer's metadata.
    pub fn jwks_uri(mut self, uri: impl AsRef<str>) -> Result<Self, OAuthConfigError> {
        self.keys.set_jwks_uri(checked_url(uri.as_ref())?);
        Ok(self)
    }

    /// Fetches with `client` instead of the default one (which trusts the
    /// platform's roots): e.g. one from
    /// [`OutboundHttp`](crate::adapters::http::OutboundHttp) that also
    /// trusts a private CA, or one through a proxy.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.keys.set_client(client);
        self
    }

    /// The algorithms allowed; HMAC ones are refused, and so is an empty
    /// list.
    pub fn algorithms(
        mut self,
        algorithms: impl IntoIterator<Item = Algorithm>,
    ) -> Result<Self, OAuthConfigError> {
        let algorithms: Vec<Algorithm> = algorithms.into_iter().collect();
        if let Some(hmac) = algorithms.iter().find(|alg| is_hmac(**alg)) {
            return Err(OAuthConfigError::HmacAlgorithm(format!("{hmac:?}")));
        }
        if algorithms.is_empty() {
            return Err(OAuthConfigError::NoAlgorithm);
        }
        self.algorithms = algorithms;
        Ok(self)
    }

    /// The clock skew tolerated on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The least time between two refetches for an unknown `kid`
    /// (default 30 s): a flood of tokens naming made-up keys costs the
    /// issuer one request per floor.
    pub fn refetch_floor(mut self, floor: Duration) -> Self {
        self.keys.floor = floor;
        self
    }

    /// How long fetched keys are used before they are fetched again
    /// (default 1 h; on failure the old ones stay).
    pub fn max_key_age(mut self, age: Duration) -> Self {
        self.keys.max_age = age;
        self
    }

    /// The time limit of one metadata or JWKS request (default 5 s).
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.keys.timeout = timeout;
        self
    }

    /// How many verified tokens are kept at most (default 10 000; 0 keeps
    /// none: every request checks its signature).
    pub fn cache_capacity(mut self, capacity: usize) -> Self {
        self.verified = TokenCache::new(capacity);
        self
    }

    /// How many verifications were answered from the token cache so far.
    pub fn cache_hits(&self) -> u64 {
        self.verified.hits()
    }

    /// How many verified tokens the cache holds now.
    pub fn cached_tokens(&self) -> usize {
        self.verified.len()
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// How many times the key set was fetched so far (each attempt counts,
    /// failed or not): what a test or a dashboard watches.
    pub fn key_fetches(&self) -> u64 {
        self.keys.fetches()
    }

    async fn verify_cached(
        &self,
        token: &str,
        audience: &str,
    ) -> Result<VerifiedToken, TokenRejection> {
        let key = cache_key(token, audience);
        let now = now_secs();
        if let Some((verified, _)) = self
            .verified
            .get(&key, now, |(_, signer)| self.keys.holds_fresh(signer))
        {
            return Ok(verified);
        }
        let (verified, signer, exp) = self.check(token, audience).await?;
        self.verified
            .insert(key, (verified.clone(), signer), exp, now);
        Ok(verified)
    }

    /// The token checked afresh; the key that verified it and its `exp`.
    async fn check(
        &self,
        token: &str,
        audience: &str,
    ) -> Result<(VerifiedToken, Arc<Key>, u64), TokenRejection> {
        let malformed = |why: &str| {
            TokenRejection::new(
                TokenRejectionKind::Malformed,
                format!("not a valid JWT: {why}"),
            )
        };
        // `alg: none` (and any name jsonwebtoken does not know) fails here.
        let header = jsonwebtoken::decode_header(token).map_err(|error| match error.kind() {
            ErrorKind::Json(_) | ErrorKind::InvalidAlgorithmName => TokenRejection::new(
                TokenRejectionKind::AlgorithmNotAllowed,
                "the token's algorithm is not allowed (or its header is not JSON)",
            ),
            _ => malformed("the header does not decode"),
        })?;
        if is_hmac(header.alg) || !self.algorithms.contains(&header.alg) {
            return Err(TokenRejection::new(
                TokenRejectionKind::AlgorithmNotAllowed,
                format!("the algorithm {:?} is not allowed", header.alg),
            ));
        }
        let key = self.keys.key_for(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.validate_exp = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[audience]);
        validation.required_spec_claims =
            HashSet::from(["exp", "iss", "aud", "sub"].map(str::to_owned));
        let data =
            jsonwebtoken::decode::<Claims>(token, &key.key, &validation).map_err(|error| {
                let (kind, message) = match error.kind() {
                    ErrorKind::ExpiredSignature => {
                        (TokenRejectionKind::Expired, "the token has expired")
                    }
                    ErrorKind::ImmatureSignature => (
                        TokenRejectionKind::NotYetValid,
                        "the token is not valid yet",
                    ),
                    ErrorKind::InvalidIssuer => (
                        TokenRejectionKind::WrongIssuer,
                        "the token is from another issuer",
                    ),
                    ErrorKind::InvalidAudience => (
                        TokenRejectionKind::WrongAudience,
                        "the token was issued for another resource",
                    ),
                    ErrorKind::InvalidSignature => (
                        TokenRejectionKind::BadSignature,
                        "the token's signature does not verify",
                    ),
                    ErrorKind::InvalidAlgorithm => (
                        TokenRejectionKind::AlgorithmNotAllowed,
                        "the token's algorithm does not fit its key",
                    ),
                    ErrorKind::MissingRequiredClaim(_) => (
                        TokenRejectionKind::Malformed,
                        "the token lacks a required claim (exp, iss, aud, sub)",
                    ),
                    _ => (TokenRejectionKind::Malformed, "the token does not decode"),
                };
                TokenRejection::new(kind, message)
            })?;
        let claims = data.claims;
        if claims.sub.trim().is_empty() {
            return Err(malformed("the subject is empty"));
        }
        let verified = VerifiedToken::new(&self.issuer, claims.sub)
            .with_scopes(scopes_of(claims.scope, claims.scp))
            // The principal lives as long as the check let the token live.
            .with_expires_at(UNIX_EPOCH + Duration::from_secs(claims.exp) + self.leeway)
            .with_client_id_opt(claims.client_id.or(claims.azp));
        Ok((verified, key, claims.exp))
    }
}

impl VerifiedToken {
    fn with_client_id_opt(self, client_id: Option<String>) -> Self {
        match client_id {
            Some(client_id) => self.with_client_id(client_id),
            None => self,
        }
    }
}

/// Seconds since the epoch, for claims.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        audience: &'a str,
    ) -> BoxFuture<'a, Result<VerifiedToken, TokenRejection>> {
        Box::pin(self.verify_cached(token, audience))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_and_empty_allow_lists_are_refused() {
        let verifier = || JwtVerifier::new("https://idp.example").unwrap();
        assert!(matches!(
            verifier().algorithms([Algorithm::RS256, Algorithm::HS256]),
            Err(OAuthConfigError::HmacAlgorithm(_))
        ));
        assert!(matches!(
            verifier().algorithms([]),
            Err(OAuthConfigError::NoAlgorithm)
        ));
        assert!(verifier().algorithms([Algorithm::ES256]).is_ok());
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        assert_eq!(scopes_of(Some("a b".into()), None), ["a", "b"]);
        assert_eq!(
            scopes_of(None, Some(serde_json::json!(["a", "b"]))),
            ["a", "b"]
        );
        assert_eq!(scopes_of(None, Some(serde_json::json!("a"))), ["a"]);
        assert!(scopes_of(None, None).is_empty());
    }
}
