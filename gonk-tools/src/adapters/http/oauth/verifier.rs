//! [`TokenVerifier`]: the seam between a bearer token and who presents it
//! — [`VerifiedToken`] when the token holds, [`TokenRejection`] when it
//! does not.

use std::fmt;
use std::time::SystemTime;

use futures::future::BoxFuture;

use crate::security::{
    ActorKind, AuthMethod, AuthenticatedPrincipal, Delegation, PrincipalIdentity, PrincipalKind,
};

/// What a verified access token says: who issued it, whom it names, the
/// client it was issued to, its scopes and its expiry. Never the token
/// itself: nothing downstream of the verifier can log or forward it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedToken {
    /// The issuer (`iss`), exactly as configured.
    pub issuer: String,
    /// The subject (`sub`): the user, or the machine client itself.
    pub subject: String,
    /// The OAuth client the token was issued to (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// The granted scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// When the token stops being valid (`exp`).
    pub expires_at: Option<SystemTime>,
    /// How it was verified: [`AuthMethod::Oauth`] for access tokens,
    /// [`AuthMethod::ApiKey`] for the static key.
    pub method: AuthMethod,
}

impl VerifiedToken {
    /// A token of `issuer` naming `subject`, verified as an OAuth access
    /// token, with no client, scopes or expiry yet.
    pub fn new(issuer: impl Into<String>, subject: impl Into<String>) -> Self {
        VerifiedToken {
            issuer: issuer.into(),
            subject: subject.into(),
            client_id: None,
            scopes: Vec::new(),
            expires_at: None,
            method: AuthMethod::Oauth,
        }
    }

    /// Sets the client id.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the scopes.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the expiry.
    pub fn with_expires_at(mut self, expires_at: SystemTime) -> Self {
        self.expires_at = Some(expires_at);
        self
    }

    /// Sets how the token was verified.
    pub fn with_method(mut self, method: AuthMethod) -> Self {
        self.method = method;
        self
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|granted| granted == scope)
    }

    /// The principal the token makes: issuer + subject as its identity, its
    /// scopes and expiry; a token issued to a client other than its subject
    /// (a user's token in an MCP host) carries that client as the delegated
    /// actor, so receipts name issuer, subject and client id. A token whose
    /// subject is its own client (client credentials) is a service.
    pub fn into_principal(self) -> AuthenticatedPrincipal {
        let machine = self.client_id.as_deref() == Some(self.subject.as_str());
        let kind = if machine {
            PrincipalKind::Service
        } else {
            PrincipalKind::Human
        };
        let identity = PrincipalIdentity::new(&self.issuer, &self.subject, self.method.clone());
        let mut principal = AuthenticatedPrincipal::new(self.subject.clone(), kind, identity)
            .with_scopes(self.scopes);
        if let Some(expires_at) = self.expires_at {
            principal = principal.with_expires_at(expires_at);
        }
        if let Some(client_id) = self.client_id.filter(|_| !machine) {
            principal = principal.with_delegation(
                Delegation::new(
                    ActorKind::Agent,
                    PrincipalIdentity::new(&self.issuer, &client_id, self.method),
                )
                .with_actor_id(client_id),
            );
        }
        principal
    }
}

/// Why a token was refused. Every kind answers `401` with
/// `error="invalid_token"`; the kind is for logs and tests. The message
/// never quotes the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TokenRejectionKind {
    /// Not a token this verifier can read (not a JWT, bad encoding, a
    /// required claim missing).
    Malformed,
    /// Longer than the resource server accepts.
    TooLong,
    /// An algorithm outside the allow-list (`none` and HMAC never pass).
    AlgorithmNotAllowed,
    /// Signed by no key the issuer publishes (after one refetch).
    UnknownKey,
    /// The signature does not verify.
    BadSignature,
    /// `exp` has passed (beyond the leeway).
    Expired,
    /// `nbf` is still ahead (beyond the leeway).
    NotYetValid,
    /// `iss` is not the configured issuer.
    WrongIssuer,
    /// `aud` does not name this resource server.
    WrongAudience,
    /// The authorization server says the token is not active
    /// (introspection), or the key is wrong.
    Inactive,
    /// The keys or the introspection endpoint could not be reached and
    /// nothing cached can decide: refused, as everything unverified is.
    Unavailable,
}

impl TokenRejectionKind {
    /// A short name (`"expired"`, …) for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenRejectionKind::Malformed => "malformed",
            TokenRejectionKind::TooLong => "too_long",
            TokenRejectionKind::AlgorithmNotAllowed => "algorithm_not_allowed",
            TokenRejectionKind::UnknownKey => "unknown_key",
            TokenRejectionKind::BadSignature => "bad_signature",
            TokenRejectionKind::Expired => "expired",
            TokenRejectionKind::NotYetValid => "not_yet_valid",
            TokenRejectionKind::WrongIssuer => "wrong_issuer",
            TokenRejectionKind::WrongAudience => "wrong_audience",
            TokenRejectionKind::Inactive => "inactive",
            TokenRejectionKind::Unavailable => "unavailable",
        }
    }
}

/// A refused token: the kind and a message for the client (which never
/// quotes the token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRejection {
    kind: TokenRejectionKind,
    message: String,
}

impl TokenRejection {
    /// A rejection of `kind`.
    pub fn new(kind: TokenRejectionKind, message: impl Into<String>) -> Self {
        TokenRejection {
            kind,
            message: message.into(),
        }
    }

    /// Why.
    pub fn kind(&self) -> TokenRejectionKind {
        self.kind
    }

    /// What to tell the client.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for TokenRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.kind.as_str())
    }
}

impl std::error::Error for TokenRejection {}

/// Turns a bearer token into what it verifiably says. Implementations:
/// [`JwtVerifier`](super::JwtVerifier) (signed JWTs against the issuer's
/// published keys), [`IntrospectionVerifier`](super::IntrospectionVerifier)
/// (RFC 7662, for opaque tokens) and [`ApiKeyVerifier`](super::ApiKeyVerifier)
/// (one static key); a host may write its own.
///
/// `audience` is the resource server's canonical URI (RFC 8707): a token
/// issued for another resource must be refused, or a token meant for one
/// server could be replayed at another.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` for `audience`.
    fn verify<'a>(
        &'a self,
        token: &'a str,
        audience: &'a str,
    ) -> BoxFuture<'a, Result<VerifiedToken, TokenRejection>>;
}

impl<V: TokenVerifier + ?Sized> TokenVerifier for std::sync::Arc<V> {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        audience: &'a str,
    ) -> BoxFuture<'a, Result<VerifiedToken, TokenRejection>> {
        (**self).verify(token, audience)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_token_names_its_client_as_the_actor() {
        let principal = VerifiedToken::new("https://idp.example", "alice")
            .with_client_id("claude")
            .with_scopes(["notes:read"])
            .into_principal();
        assert_eq!(principal.identity.subject, "alice");
        assert_eq!(principal.kind, PrincipalKind::Human);
        assert!(principal.has_scope("notes:read"));
        let actor = principal.delegation.expect("the client acts for alice");
        assert_eq!(actor.actor.subject, "claude");
        assert_eq!(actor.actor.issuer, "https://idp.example");
    }

    #[test]
    fn a_machine_token_is_a_service_without_an_actor() {
        let principal = VerifiedToken::new("https://idp.example", "indexer")
            .with_client_id("indexer")
            .into_principal();
        assert_eq!(principal.kind, PrincipalKind::Service);
        assert!(principal.delegation.is_none());
    }
}
