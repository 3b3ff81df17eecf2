//! The issuer: its URL rule (`https://`, or `http://` on a loopback host
//! only) and its metadata, discovered as RFC 8414 and OpenID Connect
//! Discovery say — tenant paths included.

use std::time::Duration;

use serde_json::Value;

/// Why an issuer (or an endpoint it names) cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthConfigError {
    /// Not an absolute `http(s)://` URL without query or fragment.
    #[error("`{url}` is not an absolute http(s) URL without query or fragment")]
    NotAUrl {
        /// The URL as given.
        url: String,
    },
    /// `http://` on a host that is not loopback: tokens and keys would
    /// travel in clear.
    #[error("`{url}` uses http:// on a host that is not loopback (localhost, 127.0.0.1, ::1); use https://")]
    InsecureUrl {
        /// The URL as given.
        url: String,
    },
    /// HMAC (`HS*`) asked for: a resource server never shares the
    /// issuer's signing secret, and accepting HMAC lets anyone who has the
    /// public key sign tokens.
    #[error("{0} is an HMAC algorithm; a resource server accepts only public-key algorithms (RS*, PS*, ES*, EdDSA)")]
    HmacAlgorithm(String),
    /// The allow-list is empty.
    #[error(
        "the algorithm allow-list is empty; allow at least one of RS256, PS256, ES256, EdDSA, …"
    )]
    NoAlgorithm,
    /// The HTTP client that fetches from the issuer could not be built
    /// (see [`OutboundHttpError`](crate::adapters::http::OutboundHttpError)).
    #[error("{0}")]
    HttpClient(String),
}

/// The default client of a verifier: the platform's roots.
pub(crate) fn default_client() -> Result<reqwest::Client, OAuthConfigError> {
    crate::adapters::http::OutboundHttp::new()
        .client()
        .map_err(|error| OAuthConfigError::HttpClient(error.to_string()))
}

/// Checks `url` is `https://`, or `http://` on a loopback host, with no
/// query or fragment; returns it as given.
pub(crate) fn checked_url(url: &str) -> Result<String, OAuthConfigError> {
    let not_a_url = || OAuthConfigError::NotAUrl {
        url: url.to_owned(),
    };
    let uri: http::Uri = url.parse().map_err(|_| not_a_url())?;
    let host = uri.host().ok_or_else(not_a_url)?;
    if uri.query().is_some() || url.contains('#') {
        return Err(not_a_url());
    }
    match uri.scheme_str() {
        Some("https") => Ok(url.to_owned()),
        Some("http") if is_loopback(host) => Ok(url.to_owned()),
        Some("http") => Err(OAuthConfigError::InsecureUrl {
            url: url.to_owned(),
        }),
        _ => Err(not_a_url()),
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The metadata documents to try for `issuer`, in order: RFC 8414 (the
/// well-known segment before the issuer's path), then OpenID Connect
/// Discovery (after the path, as OIDC says, and before it, as some
/// servers serve it).
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let issuer = issuer.trim_end_matches('/');
    let (origin, path) = match issuer.find("://").map(|at| at + 3) {
        Some(start) => match issuer[start..].find('/') {
            Some(slash) => issuer.split_at(start + slash),
            None => (issuer, ""),
        },
        None => (issuer, ""),
    };
    let mut urls = vec![format!(
        "{origin}/.well-known/oauth-authorization-server{path}"
    )];
    urls.push(format!("{issuer}/.well-known/openid-configuration"));
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
    }
    urls
}

/// Largest metadata, key set or introspection answer read.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 512 * 1024;

/// Fetches `url` as JSON (bounded in size and time).
pub(crate) async fn fetch_json(
    request: reqwest::RequestBuilder,
    url: &str,
    timeout: Duration,
) -> Result<Value, String> {
    let response = request
        .timeout(timeout)
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|error| format!("{url}: {}", crate::adapters::http::error_chain(&error)))?;
    if !response.status().is_success() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    if response
        .content_length()
        .is_some_and(|length| length > MAX_DOCUMENT_BYTES as u64)
    {
        return Err(format!("{url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|error| format!("{url}: {error}"))?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(format!("{url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
    }
    serde_json::from_slice(&bytes).map_err(|error| format!("{url}: not JSON: {error}"))
}

/// The issuer's metadata: the first document of [`metadata_urls`] whose
/// `issuer` is exactly `issuer` (RFC 8414 §3.3: a document naming another
/// issuer is ignored).
pub(crate) async fn discover(
    client: &reqwest::Client,
    issuer: &str,
    timeout: Duration,
) -> Result<Value, String> {
    let mut problems = Vec::new();
    for url in metadata_urls(issuer) {
        match fetch_json(client.get(&url), &url, timeout).await {
            Ok(document) if document.get("issuer").and_then(Value::as_str) == Some(issuer) => {
                return Ok(document)
            }
            Ok(_) => problems.push(format!("{url}: names another issuer")),
            Err(problem) => problems.push(problem),
        }
    }
    Err(format!(
        "no metadata for issuer {issuer}: {}",
        problems.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_only_on_loopback() {
        for ok in [
            "https://idp.example",
            "https://idp.example/tenant",
            "http://localhost:8080",
            "http://127.0.0.1:9000/realms/x",
            "http://[::1]:9000",
        ] {
            assert_eq!(checked_url(ok).as_deref(), Ok(ok), "{ok}");
        }
        assert!(matches!(
            checked_url("http://idp.example"),
            Err(OAuthConfigError::InsecureUrl { .. })
        ));
        assert!(matches!(
            checked_url("http://localhost.evil.example"),
            Err(OAuthConfigError::InsecureUrl { .. })
        ));
        for bad in [
            "idp.example",
            "ftp://idp.example",
            "https://idp.example?x=1",
        ] {
            assert!(
                matches!(checked_url(bad), Err(OAuthConfigError::NotAUrl { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn tenant_paths_put_the_well_known_segment_where_each_spec_says() {
        assert_eq!(
            metadata_urls("https://idp.example"),
            [
                "https://idp.example/.well-known/oauth-authorization-server",
                "https://idp.example/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("https://idp.example/tenant/v2"),
            [
                "https://idp.example/.well-known/oauth-authorization-server/tenant/v2",
                "https://idp.example/tenant/v2/.well-known/openid-configuration",
                "https://idp.example/.well-known/openid-configuration/tenant/v2",
            ]
        );
    }
}
