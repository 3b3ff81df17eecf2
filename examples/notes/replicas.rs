//! What `notes serve` needs behind a load balancer (`examples/deploy/`):
//!
//! * `--replica NAME` (or `NOTES_REPLICA`): every HTTP response carries
//!   `x-notes-replica: NAME`, so an operator (and the deployment tests) can
//!   tell which replica answered a request;
//! * `NOTES_API_KEYS=NAME=KEY,…`: each bearer key authenticates its own
//!   principal `key:NAME` on `/mcp`, so per-principal rate limits
//!   (`--rate-limit`) count each caller on its own across the replicas.

use std::collections::HashMap;
use std::sync::Arc;

use gonk_tools::adapters::cli::clap::{Arg, ArgMatches};
use gonk_tools::adapters::http::{HttpAuthRejection, HttpAuthenticator, HttpRequestParts};
use gonk_tools::security::{
    AllowAll, AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity, PrincipalKind,
};

/// The response header naming the replica.
pub const HEADER: &str = "x-notes-replica";
/// The environment variable with the principals' API keys.
pub const KEYS_ENV: &str = "NOTES_API_KEYS";

/// `notes serve --replica NAME`.
pub fn replica_arg() -> Arg {
    Arg::new("replica").long("replica").value_name("NAME").help(
        "Name this replica: every HTTP response carries `x-notes-replica: NAME` \
             [env: NOTES_REPLICA]",
    )
}

/// The replica name `--replica` (or `NOTES_REPLICA`) gave, if any.
pub fn replica(matches: &ArgMatches) -> Option<String> {
    matches
        .try_get_one::<String>("replica")
        .ok()
        .flatten()
        .filter(|name| !name.is_empty())
        .cloned()
        .or_else(|| std::env::var("NOTES_REPLICA").ok())
        .filter(|name| !name.is_empty())
}

/// A router map adding `x-notes-replica: NAME` to every response; an error
/// when `name` cannot be a header value.
pub fn header_layer(
    name: &str,
) -> Result<impl Fn(axum::Router) -> axum::Router + Send + Sync + 'static, String> {
    let value = axum::http::HeaderValue::from_str(name).map_err(|_| {
        format!("--replica {name:?}: use visible ASCII (it is sent as the {HEADER} header)")
    })?;
    Ok(move |router: axum::Router| {
        let value = value.clone();
        router.layer(axum::middleware::map_response(
            move |mut response: axum::response::Response| {
                let value = value.clone();
                async move {
                    response.headers_mut().insert(HEADER, value);
                    response
                }
            },
        ))
    })
}

/// The principals of `NOTES_API_KEYS` by key.
#[derive(Debug, Clone)]
pub struct PrincipalKeys(Arc<HashMap<String, String>>);

/// The keys of `NOTES_API_KEYS` (`None` when unset or empty); an error
/// saying the expected shape when it is malformed.
pub fn principal_keys() -> Result<Option<PrincipalKeys>, String> {
    match std::env::var(KEYS_ENV) {
        Ok(text) if !text.trim().is_empty() => parse_keys(&text).map(Some),
        _ => Ok(None),
    }
}

fn parse_keys(text: &str) -> Result<PrincipalKeys, String> {
    let mut keys = HashMap::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, key) = pair
            .split_once('=')
            .filter(|(name, key)| !name.is_empty() && !key.is_empty())
            .ok_or_else(|| {
                format!("{KEYS_ENV}: {pair:?} is not NAME=KEY (write alice=k1,bob=k2)")
            })?;
        if keys.insert(key.to_owned(), name.to_owned()).is_some() {
            return Err(format!("{KEYS_ENV}: two principals share one key"));
        }
    }
    Ok(PrincipalKeys(Arc::new(keys)))
}

impl PrincipalKeys {
    /// The principal `key:NAME` the bearer `key` stands for.
    fn principal(&self, key: &str) -> Option<AuthContext> {
        let name = self.0.get(key)?;
        let principal = AuthenticatedPrincipal::new(
            format!("key:{name}"),
            PrincipalKind::Service,
            PrincipalIdentity::new("notes-api-key", name.clone(), AuthMethod::ApiKey),
        );
        Some(AuthContext::new(principal, AllowAll))
    }

    /// The `/mcp` authentication hook: `Authorization: Bearer KEY` with a
    /// known key, else 401.
    pub fn authenticator(self) -> impl HttpAuthenticator {
        move |request: &HttpRequestParts| {
            let found = request
                .headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer "))
                .and_then(|key| self.principal(key.trim()));
            async move {
                found.ok_or_else(|| {
                    HttpAuthRejection::unauthorized(format!(
                        "send `Authorization: Bearer KEY` with a key of {KEYS_ENV}"
                    ))
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_bad_ones_say_the_shape() {
        let keys = parse_keys("alice=k1, bob=k2").unwrap();
        assert_eq!(keys.0.get("k1").map(String::as_str), Some("alice"));
        assert_eq!(keys.0.get("k2").map(String::as_str), Some("bob"));
        assert!(keys.principal("k3").is_none());
        assert!(parse_keys("alice").unwrap_err().contains("NAME=KEY"));
        assert!(parse_keys("a=k,b=k").unwrap_err().contains("share one key"));
    }
}
