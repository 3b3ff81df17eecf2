//! [`ApiKeyVerifier`]: the static API key as one more [`TokenVerifier`].

use futures::future::BoxFuture;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::verifier::{TokenRejection, TokenRejectionKind, TokenVerifier, VerifiedToken};
use crate::security::AuthMethod;

/// One static key: the token must equal it (compared in constant time, as
/// digests, so neither content nor length leaks). The key makes one
/// principal, `subject` of issuer `"api-key"`, with the scopes given. The
/// audience is not checked: the key names no resource.
#[derive(Clone)]
pub struct ApiKeyVerifier {
    digest: [u8; 32],
    subject: String,
    scopes: Vec<String>,
}

impl std::fmt::Debug for ApiKeyVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyVerifier")
            .field("subject", &self.subject)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ApiKeyVerifier {
    /// A verifier of `key`, whose holder is the principal `"api-key"`.
    pub fn new(key: impl AsRef<str>) -> Self {
        ApiKeyVerifier {
            digest: Sha256::digest(key.as_ref().as_bytes()).into(),
            subject: "api-key".to_owned(),
            scopes: Vec::new(),
        }
    }

    /// The subject of the key's principal.
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = subject.into();
        self
    }

    /// The scopes the key grants.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

impl TokenVerifier for ApiKeyVerifier {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        _audience: &'a str,
    ) -> BoxFuture<'a, Result<VerifiedToken, TokenRejection>> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let result = if bool::from(digest.ct_eq(&self.digest)) {
            Ok(VerifiedToken::new("api-key", &self.subject)
                .with_scopes(self.scopes.iter().cloned())
                .with_method(AuthMethod::ApiKey))
        } else {
            Err(TokenRejection::new(
                TokenRejectionKind::Inactive,
                "the API key is wrong",
            ))
        };
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_the_key_passes() {
        let verifier = ApiKeyVerifier::new("k3y")
            .subject("ops")
            .scopes(["notes:read"]);
        let ok = verifier.verify("k3y", "http://x/mcp").await.unwrap();
        assert_eq!(
            (ok.issuer.as_str(), ok.subject.as_str()),
            ("api-key", "ops")
        );
        assert_eq!(ok.method, AuthMethod::ApiKey);
        for wrong in ["k3", "k3yk3y", "K3Y", ""] {
            assert_eq!(
                verifier.verify(wrong, "").await.unwrap_err().kind(),
                TokenRejectionKind::Inactive
            );
        }
        assert!(!format!("{verifier:?}").contains("k3y"));
    }
}
