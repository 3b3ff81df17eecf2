//! The issuer's signing keys (its JWKS), cached: fetched on first use,
//! refetched once when a token names a key not in the cache (a rotation) —
//! at most once per floor, whatever the traffic —, refreshed when old, and
//! kept as they were while the JWKS endpoint is down.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::issuer;
use super::verifier::{TokenRejection, TokenRejectionKind};

const LOG_TARGET: &str = "gonk_tools::adapters::http::oauth";

/// Between two attempts to fetch keys that were never fetched.
const COLD_RETRY: Duration = Duration::from_secs(1);

/// One published verification key.
pub(crate) struct Key {
    pub(crate) key: DecodingKey,
    /// The key's own `alg`, when it names one: a token must use exactly it.
    algorithm: Option<Algorithm>,
    /// The JWK as published: a refetch that finds it unchanged keeps this
    /// very key, so tokens cached under it stay cached.
    published: String,
}

impl Key {
    fn fits(&self, alg: Algorithm) -> bool {
        self.algorithm.is_none_or(|own| own == alg) && family_fits(&self.key, alg)
    }
}

/// Whether the key's type is the algorithm's (an RSA key never verifies an
/// ECDSA or HMAC signature, whatever the header says).
fn family_fits(key: &DecodingKey, alg: Algorithm) -> bool {
    use jsonwebtoken::AlgorithmFamily as F;
    let family = match alg {
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => F::Rsa,
        Algorithm::ES256 | Algorithm::ES384 => F::Ec,
        Algorithm::EdDSA => F::Ed,
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => return false,
    };
    key.family() == family
}

#[derive(Default)]
struct Cached {
    by_kid: HashMap<String, Arc<Key>>,
    all: Vec<Arc<Key>>,
    fetched_at: Option<Instant>,
    /// The last attempt of any kind.
    attempted_at: Option<Instant>,
    /// The last refetch for a key not in the cache.
    refetched_at: Option<Instant>,
}

/// Where the keys are: given, or named by the issuer's metadata.
enum Source {
    Given(String),
    Discovered(tokio::sync::Mutex<Option<String>>),
}

pub(crate) struct KeyCache {
    issuer: String,
    source: Source,
    client: reqwest::Client,
    cached: RwLock<Cached>,
    /// One fetch at a time: a burst of tokens with a new `kid` makes one.
    fetching: tokio::sync::Mutex<()>,
    pub(crate) floor: Duration,
    pub(crate) max_age: Duration,
    pub(crate) timeout: Duration,
    fetches: AtomicU64,
}

/// Why a refresh was asked.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Why {
    Cold,
    Stale,
    UnknownKey,
}

impl KeyCache {
    pub(crate) fn new(issuer: String, jwks_uri: Option<String>, client: reqwest::Client) -> Self {
        KeyCache {
            issuer,
            source: match jwks_uri {
                Some(uri) => Source::Given(uri),
                None => Source::Discovered(tokio::sync::Mutex::new(None)),
            },
            client,
            cached: RwLock::new(Cached::default()),
            fetching: tokio::sync::Mutex::new(()),
            floor: Duration::from_secs(30),
            max_age: Duration::from_secs(3600),
            timeout: Duration::from_secs(5),
            fetches: AtomicU64::new(0),
        }
    }

    pub(crate) fn set_client(&mut self, client: reqwest::Client) {
        self.client = client;
    }

    /// Takes the keys from `uri` instead of the issuer's metadata.
    pub(crate) fn set_jwks_uri(&mut self, uri: String) {
        self.source = Source::Given(uri);
    }

    /// Whether `key` is still in the set and the set is not older than
    /// `max_age`: a token verified with it may be answered from the token
    /// cache. A key the issuer removed is gone from the set at the refetch
    /// that saw it go (on an unknown `kid`, or at `max_age`), and cached
    /// tokens signed by it go with it.
    pub(crate) fn holds_fresh(&self, key: &Arc<Key>) -> bool {
        let cached = self.read();
        cached
            .fetched_at
            .is_some_and(|at| at.elapsed() < self.max_age)
            && cached.all.iter().any(|held| Arc::ptr_eq(held, key))
    }

    /// How many times the key set was fetched (successfully or not).
    pub(crate) fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Cached> {
        self.cached.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The key that verifies a token signed with `alg` under `kid`.
    pub(crate) async fn key_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Arc<Key>, TokenRejection> {
        let (cold, stale) = {
            let cached = self.read();
            match cached.fetched_at {
                None => (true, false),
                Some(at) => (false, at.elapsed() >= self.max_age),
            }
        };
        if cold {
            self.refresh(Why::Cold).await;
        } else if stale {
            self.refresh(Why::Stale).await;
        }
        if let Some(key) = self.lookup(kid, alg)? {
            return Ok(key);
        }
        if self.read().fetched_at.is_none() {
            return Err(TokenRejection::new(
                TokenRejectionKind::Unavailable,
                "the issuer's signing keys could not be fetched; try again later",
            ));
        }
        self.refresh(Why::UnknownKey).await;
        self.lookup(kid, alg)?.ok_or_else(|| {
            TokenRejection::new(
                TokenRejectionKind::UnknownKey,
                "the token is signed with a key the issuer does not publish",
            )
        })
    }

    fn lookup(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Option<Arc<Key>>, TokenRejection> {
        let cached = self.read();
        let key = match kid {
            Some(kid) => cached.by_kid.get(kid).cloned(),
            None => {
                let mut fitting = cached.all.iter().filter(|key| key.fits(alg));
                match (fitting.next(), fitting.next()) {
                    (Some(one), None) => Some(Arc::clone(one)),
                    (None, _) => None,
                    (Some(_), Some(_)) => {
                        return Err(TokenRejection::new(
                            TokenRejectionKind::UnknownKey,
                            "the token names no key (`kid`) and the issuer publishes several",
                        ))
                    }
                }
            }
        };
        match key {
            Some(key) if !key.fits(alg) => Err(TokenRejection::new(
                TokenRejectionKind::AlgorithmNotAllowed,
                "the token's algorithm is not its key's",
            )),
            other => Ok(other),
        }
    }

    async fn refresh(&self, why: Why) {
        let _one = self.fetching.lock().await;
        {
            // Another request may have fetched while this one waited.
            let cached = self.read();
            let recent =
                |at: Option<Instant>, within: Duration| at.is_some_and(|at| at.elapsed() < within);
            let skip = match why {
                Why::Cold => cached.fetched_at.is_some() || recent(cached.attempted_at, COLD_RETRY),
                Why::Stale => {
                    cached
                        .fetched_at
                        .is_some_and(|at| at.elapsed() < self.max_age)
                        || recent(cached.attempted_at, self.floor)
                }
                Why::UnknownKey => recent(cached.refetched_at, self.floor),
            };
            if skip {
                return;
            }
        }
        let now = Instant::now();
        {
            let mut cached = self.cached.write().unwrap_or_else(|p| p.into_inner());
            cached.attempted_at = Some(now);
            if why == Why::UnknownKey {
                cached.refetched_at = Some(now);
            }
        }
        self.fetches.fetch_add(1, Ordering::Relaxed);
        match self.fetch().await {
            Ok((by_kid, all)) => {
                let mut cached = self.cached.write().unwrap_or_else(|p| p.into_inner());
                cached.by_kid = by_kid;
                cached.all = all;
                cached.fetched_at = Some(now);
            }
            Err(problem) => {
                // The keys fetched before stay: a token they verify still
                // passes; an unknown one is refused.
                tracing::warn!(target: LOG_TARGET, issuer = %self.issuer, %problem, "could not fetch the issuer's signing keys; keeping the last ones");
            }
        }
    }

    async fn jwks_uri(&self) -> Result<String, String> {
        match &self.source {
            Source::Given(uri) => Ok(uri.clone()),
            Source::Discovered(found) => {
                let mut found = found.lock().await;
                if let Some(uri) = found.as_ref() {
                    return Ok(uri.clone());
                }
                let metadata = issuer::discover(&self.client, &self.issuer, self.timeout).await?;
                let uri = metadata
                    .get("jwks_uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("the metadata of {} names no jwks_uri", self.issuer))?;
                let uri = issuer::checked_url(uri).map_err(|error| error.to_string())?;
                *found = Some(uri.clone());
                Ok(uri)
            }
        }
    }

    #[allow(clippy::type_complexity)]
    async fn fetch(&self) -> Result<(HashMap<String, Arc<Key>>, Vec<Arc<Key>>), String> {
        let uri = self.jwks_uri().await?;
        let document = issuer::fetch_json(self.client.get(&uri), &uri, self.timeout).await?;
        let entries = document
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{uri}: not a JWK set (no `keys`)"))?;
        let mut by_kid = HashMap::new();
        let mut all = Vec::new();
        for entry in entries {
            // A key this verifier cannot use (an encryption key, a symmetric
            // key, an unknown type) is skipped, not a reason to drop the set.
            let Some((kid, key)) = usable(entry) else {
                continue;
            };
            let kept = self
                .read()
                .all
                .iter()
                .find(|held| held.published == key.published)
                .cloned();
            let key = kept.unwrap_or_else(|| Arc::new(key));
            if let Some(kid) = kid {
                by_kid.insert(kid, Arc::clone(&key));
            }
            all.push(key);
        }
        Ok((by_kid, all))
    }
}

fn usable(entry: &Value) -> Option<(Option<String>, Key)> {
    let jwk: Jwk = serde_json::from_value(entry.clone()).ok()?;
    if matches!(
        jwk.algorithm,
        jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
    ) {
        return None;
    }
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|usage| *usage != PublicKeyUse::Signature)
    {
        return None;
    }
    let algorithm = match entry.get("alg").and_then(Value::as_str) {
        Some(alg) => Some(Algorithm::from_str(alg).ok()?),
        None => None,
    };
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    let published = entry.to_string();
    Some((
        jwk.common.key_id.clone(),
        Key {
            key,
            algorithm,
            published,
        },
    ))
}
