//! [`ProtectedResource`]: this server as an OAuth resource server — the
//! authentication hook every HTTP surface runs (bearer token → verifier →
//! principal), its `WWW-Authenticate` challenges, and its protected
//! resource metadata (RFC 9728).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
use http::{header, HeaderValue, StatusCode};
use serde_json::{json, Value};

use super::issuer::{checked_url, OAuthConfigError};
use super::verifier::{TokenRejectionKind, TokenVerifier};
use crate::adapters::http::{HttpAuthRejection, HttpAuthenticator, HttpRequestParts};
use crate::security::{
    AllowAll, AuthContext, AuthenticatedPrincipal, AuthorizationAction, AuthorizationDecision,
    AuthorizationPolicy, AuthorizationRequest, PolicyError,
};

const LOG_TARGET: &str = "gonk_tools::adapters::http::oauth";

/// The well-known path of protected resource metadata (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The default longest token accepted: 16 KiB.
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 16 * 1024;

/// This server as an OAuth 2.1 resource server, for every HTTP surface at
/// once: give it to [`HttpServerOptions::protected_resource`](crate::adapters::http::HttpServerOptions::protected_resource).
///
/// * Each request's `Authorization: Bearer` token goes to the
///   [`TokenVerifier`], with this server's canonical resource URI as the
///   audience; what it verifies becomes the [`AuthContext`]'s principal —
///   issuer + subject, scopes, expiry, the client as delegated actor — so
///   policies, approval tiers and receipts work unchanged. Receipts carry
///   issuer, subject and client id; the token itself is never kept, logged
///   or passed on.
/// * A missing token gets `401` with
///   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`; a bad one
///   `401` with `error="invalid_token"`. A token in the query string
///   (`?access_token=`) is refused, and so is a token longer than
///   [`max_token_bytes`](Self::max_token_bytes), before it is parsed.
/// * The metadata is served at `/.well-known/oauth-protected-resource` and
///   at its path-suffixed form for the resource's path (for
///   `https://host/mcp`: `/.well-known/oauth-protected-resource/mcp`).
///
/// The resource URI is the one given to [`resource`](Self::resource); when
/// none is, a standalone server (`serve_http`, `serve_ws`) takes its own
/// URL once bound (`http://127.0.0.1:PORT/mcp`). A server reached under
/// another name (a proxy, TLS in front) must name it.
///
/// ```
/// use gonk_tools::adapters::http::HttpServerOptions;
/// use gonk_tools::adapters::http::oauth::{JwtVerifier, ProtectedResource};
///
/// let issuer = "https://idp.example";
/// let resource = ProtectedResource::new(JwtVerifier::new(issuer).unwrap())
///     .resource("https://notes.example/mcp").unwrap()
///     .authorization_server(issuer)
///     .scopes_supported(["notes:read", "notes:write"]);
/// assert_eq!(
///     resource.metadata_url().unwrap(),
///     "https://notes.example/.well-known/oauth-protected-resource/mcp"
/// );
/// let http = HttpServerOptions::new().protected_resource(resource);
/// # let _ = http;
/// ```
#[derive(Clone)]
pub struct ProtectedResource {
    resource: Arc<OnceLock<String>>,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    challenge_scope: Option<String>,
    verifier: Arc<dyn TokenVerifier>,
    policy: Arc<dyn AuthorizationPolicy>,
    /// Tool name → the scopes calling it needs.
    tool_scopes: Arc<HashMap<String, Vec<String>>>,
    max_token_bytes: usize,
}

impl fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.resource.get())
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("max_token_bytes", &self.max_token_bytes)
            .finish_non_exhaustive()
    }
}

/// `text` as a quoted-string value of a challenge parameter.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '\''
            } else {
                c
            }
        })
        .collect()
}

impl ProtectedResource {
    /// A resource server whose tokens `verifier` checks; every verified
    /// principal is authorized by [`AllowAll`] until [`policy`](Self::policy)
    /// sets another (the approval tiers still apply).
    pub fn new(verifier: impl TokenVerifier) -> Self {
        ProtectedResource {
            resource: Arc::new(OnceLock::new()),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            challenge_scope: None,
            verifier: Arc::new(verifier),
            policy: Arc::new(AllowAll),
            tool_scopes: Arc::new(HashMap::new()),
            max_token_bytes: DEFAULT_MAX_TOKEN_BYTES,
        }
    }

    /// Calling `tool` needs every one of `scopes`. The tool stays listed
    /// to a token without them; over MCP its `tools/call` answers `403`
    /// with `error="insufficient_scope"` naming them (the client asks its
    /// user for a wider token and retries), and on any surface dispatch
    /// denies the call (`AUTHORIZATION_DENIED`, receipt written): nothing
    /// runs.
    pub fn require_scopes<S: Into<String>>(
        mut self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        Arc::make_mut(&mut self.tool_scopes)
            .insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The scopes calling `tool` needs that `principal` lacks (`None`
    /// when it lacks none).
    pub fn missing_scopes(
        &self,
        principal: &AuthenticatedPrincipal,
        tool: &str,
    ) -> Option<Vec<String>> {
        missing(&self.tool_scopes, principal, tool)
    }

    /// This server's canonical resource URI (RFC 8707): the audience every
    /// token must name, and the metadata's `resource`. `https://`, or
    /// `http://` on a loopback host; no query or fragment.
    pub fn resource(self, uri: impl AsRef<str>) -> Result<Self, OAuthConfigError> {
        let uri = checked_url(uri.as_ref())?;
        let resource = Arc::new(OnceLock::new());
        let _ = resource.set(uri);
        Ok(ProtectedResource { resource, ..self })
    }

    /// An authorization server whose tokens this server accepts (its
    /// issuer URL), listed in the metadata's `authorization_servers`.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes listed in the metadata's `scopes_supported`; also the
    /// `scope` of the `401` challenge unless
    /// [`challenge_scope`](Self::challenge_scope) names another.
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The `scope` a missing-token `401` asks for (space-separated).
    pub fn challenge_scope(mut self, scope: impl Into<String>) -> Self {
        self.challenge_scope = Some(scope.into());
        self
    }

    /// The policy that authorizes verified principals (default
    /// [`AllowAll`]).
    pub fn policy(mut self, policy: impl AuthorizationPolicy + 'static) -> Self {
        self.policy = Arc::new(policy);
        self
    }

    /// The longest token accepted (default [`DEFAULT_MAX_TOKEN_BYTES`]);
    /// a longer `Authorization` header is refused before it is read.
    pub fn max_token_bytes(mut self, bytes: usize) -> Self {
        self.max_token_bytes = bytes;
        self
    }

    /// The canonical resource URI, once known.
    pub fn resource_uri(&self) -> Option<&str> {
        self.resource.get().map(String::as_str)
    }

    /// The resource URI a standalone server found for itself, when none
    /// was given.
    pub(crate) fn settle(&self, uri: String) {
        if self.resource.set(uri).is_err() {
            return;
        }
        tracing::info!(target: LOG_TARGET, resource = self.resource_uri(), "the resource URI (the audience tokens must name) is the server's own URL");
    }

    /// The path-suffixed metadata URL of the resource
    /// (`https://host/.well-known/oauth-protected-resource/mcp`), once the
    /// resource URI is known.
    pub fn metadata_url(&self) -> Option<String> {
        let resource = self.resource_uri()?;
        let (origin, path) = split_origin(resource);
        Some(format!(
            "{origin}{METADATA_PATH}{}",
            path.trim_end_matches('/')
        ))
    }

    /// The metadata document (RFC 9728 §2), once the resource URI is known.
    pub fn metadata(&self) -> Option<Value> {
        let mut document = json!({
            "resource": self.resource_uri()?,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            document["scopes_supported"] = json!(self.scopes_supported);
        }
        Some(document)
    }

    /// The routes serving [`metadata`](Self::metadata): the root well-known
    /// path, and the path-suffixed one for `endpoint_path` (the surface's
    /// path) and for the resource URI's own path when it is another.
    /// Public: no token needed.
    pub fn metadata_router(&self, endpoint_path: &str) -> axum::Router {
        let mut paths = vec![METADATA_PATH.to_owned()];
        let mut suffix = |path: &str| {
            let path = path.trim_end_matches('/');
            if !path.is_empty() {
                let route = format!("{METADATA_PATH}{path}");
                if !paths.contains(&route) {
                    paths.push(route);
                }
            }
        };
        suffix(endpoint_path);
        if let Some(resource) = self.resource_uri() {
            suffix(split_origin(resource).1);
        }
        let mut router = axum::Router::new();
        for path in paths {
            let this = self.clone();
            router = router.route(
                &path,
                axum::routing::get(move || {
                    let this = this.clone();
                    async move { this.metadata_response() }
                }),
            );
        }
        router
    }

    fn metadata_response(&self) -> axum::response::Response {
        let (status, body) = match self.metadata() {
            Some(document) => (StatusCode::OK, document.to_string()),
            None => (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"error": "the server's resource URI is not configured"}).to_string(),
            ),
        };
        let mut response = axum::response::Response::new(axum::body::Body::from(body));
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=300"),
        );
        response
    }

    fn metadata_parameter(&self) -> String {
        self.metadata_url()
            .map(|url| format!("resource_metadata=\"{}\"", quoted(&url)))
            .unwrap_or_default()
    }

    /// The challenge of a `401` without a usable token:
    /// `Bearer resource_metadata="…", scope="…"`.
    pub fn missing_token_challenge(&self) -> String {
        let mut parts = vec![self.metadata_parameter()];
        let scope = self.challenge_scope.clone().or_else(|| {
            (!self.scopes_supported.is_empty()).then(|| self.scopes_supported.join(" "))
        });
        if let Some(scope) = scope {
            parts.push(format!("scope=\"{}\"", quoted(&scope)));
        }
        format!("Bearer {}", join(parts))
    }

    /// The challenge of a `401` for a token that was refused:
    /// `Bearer error="invalid_token", error_description="…", resource_metadata="…"`.
    pub fn invalid_token_challenge(&self, error: &str, description: &str) -> String {
        format!(
            "Bearer {}",
            join(vec![
                format!("error=\"{}\"", quoted(error)),
                format!("error_description=\"{}\"", quoted(description)),
                self.metadata_parameter(),
            ])
        )
    }

    /// The challenge of a `403` step-up (MCP's scope challenge):
    /// `Bearer error="insufficient_scope", scope="<needed>", resource_metadata="…"`.
    pub fn insufficient_scope_challenge(&self, needed: &[String]) -> String {
        format!(
            "Bearer {}",
            join(vec![
                "error=\"insufficient_scope\"".to_owned(),
                format!("scope=\"{}\"", quoted(&needed.join(" "))),
                self.metadata_parameter(),
            ])
        )
    }

    /// The token of the request, or the rejection to answer.
    fn token_of<'r>(&self, request: &'r HttpRequestParts) -> Result<&'r str, HttpAuthRejection> {
        let invalid_request = |message: &str| {
            HttpAuthRejection::unauthorized(message)
                .with_challenge(self.invalid_token_challenge("invalid_request", message))
        };
        if request.uri.query().is_some_and(|query| {
            form_urlencoded::parse(query.as_bytes()).any(|(name, _)| name == "access_token")
        }) {
            return Err(invalid_request(
                "a token in the URL is refused; send it as `Authorization: Bearer <token>`",
            ));
        }
        let mut values = request.headers.get_all(header::AUTHORIZATION).iter();
        let value = match (values.next(), values.next()) {
            (None, _) => None,
            (Some(value), None) => Some(value),
            (Some(_), Some(_)) => return Err(invalid_request("send one Authorization header")),
        };
        // `Bearer ` and a little white space, beyond the token.
        if value.is_some_and(|value| value.len() > self.max_token_bytes + 16) {
            let message = format!(
                "the token is longer than the {} bytes this server accepts",
                self.max_token_bytes
            );
            log_refusal(TokenRejectionKind::TooLong);
            return Err(HttpAuthRejection::unauthorized(&message)
                .with_challenge(self.invalid_token_challenge("invalid_token", &message)));
        }
        let token = value
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .filter(|token| !token.is_empty());
        token.ok_or_else(|| {
            HttpAuthRejection::unauthorized(
                "this server needs an OAuth access token as `Authorization: Bearer <token>`",
            )
            .with_challenge(self.missing_token_challenge())
        })
    }
}

fn join(parts: Vec<String>) -> String {
    parts
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `https://host:port/path` as (`https://host:port`, `/path`).
fn split_origin(uri: &str) -> (&str, &str) {
    let start = uri.find("://").map_or(0, |at| at + 3);
    match uri[start..].find('/') {
        Some(slash) => uri.split_at(start + slash),
        None => (uri, ""),
    }
}

fn missing(
    tool_scopes: &HashMap<String, Vec<String>>,
    principal: &AuthenticatedPrincipal,
    tool: &str,
) -> Option<Vec<String>> {
    let needed = tool_scopes.get(tool)?;
    let lacking: Vec<String> = needed
        .iter()
        .filter(|scope| !principal.has_scope(scope))
        .cloned()
        .collect();
    (!lacking.is_empty()).then_some(lacking)
}

/// The resource server's scope requirements in front of the host's
/// policy: invoking a tool without its scopes is denied; discovering it is
/// the host policy's to answer (a step-up needs the tool to stay listed).
struct ScopePolicy {
    tool_scopes: Arc<HashMap<String, Vec<String>>>,
    inner: Arc<dyn AuthorizationPolicy>,
}

impl AuthorizationPolicy for ScopePolicy {
    fn authorize<'a>(
        &'a self,
        request: &'a AuthorizationRequest<'a>,
    ) -> BoxFuture<'a, Result<AuthorizationDecision, PolicyError>> {
        if request.action == AuthorizationAction::Invoke && &*request.resource.kind == "tool" {
            if let Some(tool) = request.resource.target.as_deref() {
                if let Some(lacking) = missing(&self.tool_scopes, request.principal, tool) {
                    let reason = format!("the token lacks the scope {}", lacking.join(" "));
                    return Box::pin(std::future::ready(Ok(AuthorizationDecision::deny(reason))));
                }
            }
        }
        self.inner.authorize(request)
    }
}

fn log_refusal(kind: TokenRejectionKind) {
    tracing::info!(target: LOG_TARGET, reason = kind.as_str(), "refused a bearer token");
}

impl HttpAuthenticator for ProtectedResource {
    fn authenticate(
        &self,
        request: &HttpRequestParts,
    ) -> BoxFuture<'static, Result<AuthContext, HttpAuthRejection>> {
        let Some(audience) = self.resource_uri().map(str::to_owned) else {
            tracing::error!(target: LOG_TARGET, "no resource URI: set ProtectedResource::resource when mounting a router; every request is refused");
            return Box::pin(std::future::ready(Err(HttpAuthRejection::forbidden(
                "the server's resource URI is not configured",
            ))));
        };
        let token = match self.token_of(request) {
            Ok(token) => token.to_owned(),
            Err(rejection) => return Box::pin(std::future::ready(Err(rejection))),
        };
        let this = self.clone();
        Box::pin(async move {
            match this.verifier.verify(&token, &audience).await {
                Ok(verified) => {
                    tracing::debug!(target: LOG_TARGET, issuer = %verified.issuer, subject = %verified.subject, client_id = verified.client_id.as_deref(), "verified a bearer token");
                    let policy: Arc<dyn AuthorizationPolicy> = if this.tool_scopes.is_empty() {
                        Arc::clone(&this.policy)
                    } else {
                        Arc::new(ScopePolicy {
                            tool_scopes: Arc::clone(&this.tool_scopes),
                            inner: Arc::clone(&this.policy),
                        })
                    };
                    Ok(AuthContext::from_shared(
                        Arc::new(verified.into_principal()),
                        policy,
                    ))
                }
                Err(rejection) => {
                    log_refusal(rejection.kind());
                    Err(
                        HttpAuthRejection::unauthorized(rejection.message()).with_challenge(
                            this.invalid_token_challenge("invalid_token", rejection.message()),
                        ),
                    )
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::ApiKeyVerifier;
    use super::*;

    fn resource() -> ProtectedResource {
        ProtectedResource::new(ApiKeyVerifier::new("k3y"))
            .resource("http://127.0.0.1:8808/mcp")
            .unwrap()
            .authorization_server("http://127.0.0.1:9000")
            .scopes_supported(["notes:read", "notes:write"])
    }

    fn parts(uri: &str, headers: &[(&str, &str)]) -> HttpRequestParts {
        let mut request = http::Request::builder().uri(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[tokio::test]
    async fn challenges_name_the_metadata_and_the_scope() {
        let resource = resource();
        let missing = resource
            .authenticate(&parts("/mcp", &[]))
            .await
            .unwrap_err();
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            missing.challenge().unwrap(),
            "Bearer resource_metadata=\"http://127.0.0.1:8808/.well-known/oauth-protected-resource/mcp\", scope=\"notes:read notes:write\""
        );
        let wrong = resource
            .authenticate(&parts("/mcp", &[("authorization", "Bearer nope")]))
            .await
            .unwrap_err();
        assert!(wrong
            .challenge()
            .unwrap()
            .starts_with("Bearer error=\"invalid_token\""));
        let ok = resource
            .authenticate(&parts("/mcp", &[("authorization", "Bearer k3y")]))
            .await
            .unwrap();
        assert_eq!(ok.principal().identity.issuer, "api-key");
    }

    #[tokio::test]
    async fn query_tokens_and_huge_headers_are_refused_before_verification() {
        let resource = resource();
        let query = resource
            .authenticate(&parts(
                "/mcp?access_token=k3y",
                &[("authorization", "Bearer k3y")],
            ))
            .await
            .unwrap_err();
        assert!(query.message().contains("URL"), "{query}");
        let huge = format!("Bearer {}", "a".repeat(DEFAULT_MAX_TOKEN_BYTES + 100));
        let long = resource
            .authenticate(&parts("/mcp", &[("authorization", &huge)]))
            .await
            .unwrap_err();
        assert!(long.message().contains("longer"), "{long}");
        assert!(!long.challenge().unwrap().contains("aaaa"));
    }

    #[test]
    fn the_metadata_document_and_its_routes() {
        let document = resource().metadata().unwrap();
        assert_eq!(document["resource"], "http://127.0.0.1:8808/mcp");
        assert_eq!(
            document["authorization_servers"][0],
            "http://127.0.0.1:9000"
        );
        assert_eq!(document["bearer_methods_supported"][0], "header");
        assert_eq!(document["scopes_supported"][1], "notes:write");
        assert_eq!(split_origin("https://h:1/a/b"), ("https://h:1", "/a/b"));
        assert_eq!(split_origin("https://h"), ("https://h", ""));
    }
}
