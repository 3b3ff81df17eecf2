//! Sealed `requestState` (MCP `2026-07-28`'s multi-round-trip requests):
//! what a call asked and was answered so far travels with the client,
//! signed (HMAC-SHA-256, rmcp's [`RequestStateCodec`]) with a key ring every
//! server process of a deployment shares, bound to the tool, its input and
//! the caller, expiring, and good for one retry — once across every
//! process that shares its [`SingleUseStore`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The environment variable [`RequestStateKeys::from_env`] reads.
pub const REQUEST_STATE_KEYS_ENV: &str = "GONK_MCP_REQUEST_STATE_KEYS";

/// How long a sealed `requestState` is good for by default: 10 minutes.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(600);

/// The keys that seal and open `requestState`: the current key signs, every
/// key opens, so a deployment rotates by adding the new key first, making
/// it current next, and removing the old one once its states have expired
/// ([`DEFAULT_REQUEST_STATE_TTL`]) — no question in flight is dropped.
///
/// Give every server process of one deployment the same keys, so a retry
/// may land on any of them. Without configured keys a server seals with a
/// random key of its own: retries must come back to the same process.
///
/// ```
/// use gonk_tools::adapters::mcp::RequestStateKeys;
///
/// // "id=key" pairs, current first; keys are base64 of at least 32 bytes.
/// let keys = RequestStateKeys::parse(
///     "2026-12=bmV3LWtleS1uZXcta2V5LW5ldy1rZXktbmV3LWtleS0xMjM0,\
///      2026-11=b2xkLWtleS1vbGQta2V5LW9sZC1rZXktb2xkLWtleS0xMjM0",
/// ).unwrap();
/// assert_eq!(keys.current_id(), "2026-12");
/// assert!(RequestStateKeys::parse("k1=c2hvcnQ=").is_err()); // too short
/// ```
#[derive(Clone)]
pub struct RequestStateKeys {
    current: String,
    keys: Vec<(String, Vec<u8>)>,
}

impl fmt::Debug for RequestStateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("RequestStateKeys")
            .field("current", &self.current)
            .field("ids", &ids)
            .field("keys", &"<redacted>")
            .finish()
    }
}

/// A key ring that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("request state keys: {0} (expected `id=base64key[,id=base64key…]`, the current key first, each key at least 32 bytes)")]
pub struct RequestStateKeysError(String);

impl RequestStateKeys {
    /// A ring of one key, `id` → `key` (at least 32 bytes).
    pub fn new(
        id: impl Into<String>,
        key: impl Into<Vec<u8>>,
    ) -> Result<Self, RequestStateKeysError> {
        let ring = RequestStateKeys {
            current: id.into(),
            keys: Vec::new(),
        };
        let current = ring.current.clone();
        ring.with_previous(current, key)
    }

    /// Adds a key that opens but no longer seals.
    pub fn with_previous(
        mut self,
        id: impl Into<String>,
        key: impl Into<Vec<u8>>,
    ) -> Result<Self, RequestStateKeysError> {
        let (id, key) = (id.into(), key.into());
        if key.len() < RequestStateCodec::MIN_KEY_LENGTH {
            return Err(RequestStateKeysError(format!(
                "key `{id}` has {} bytes",
                key.len()
            )));
        }
        if self.keys.iter().any(|(known, _)| *known == id) {
            return Err(RequestStateKeysError(format!(
                "key id `{id}` appears twice"
            )));
        }
        self.keys.push((id, key));
        self.codec()?;
        Ok(self)
    }

    /// Parses `id=base64key[,id=base64key…]`, the current key first.
    pub fn parse(spec: &str) -> Result<Self, RequestStateKeysError> {
        let mut ring: Option<RequestStateKeys> = None;
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (id, encoded) = pair
                .split_once('=')
                .ok_or_else(|| RequestStateKeysError(format!("`{}` has no `=`", redact(pair))))?;
            let key = decode_key(encoded.trim())
                .ok_or_else(|| RequestStateKeysError(format!("key `{id}` is not base64")))?;
            ring = Some(match ring {
                None => RequestStateKeys::new(id.trim(), key)?,
                Some(ring) => ring.with_previous(id.trim(), key)?,
            });
        }
        ring.ok_or_else(|| RequestStateKeysError("no keys".to_owned()))
    }

    /// The ring in [`REQUEST_STATE_KEYS_ENV`], if set.
    pub fn from_env() -> Result<Option<Self>, RequestStateKeysError> {
        match std::env::var(REQUEST_STATE_KEYS_ENV) {
            Ok(spec) if !spec.trim().is_empty() => Self::parse(&spec).map(Some),
            _ => Ok(None),
        }
    }

    /// A ring of one random key, for a single process.
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        // The OS generator fails only on a broken system; a zero key would
        // still be unguessable to nobody, so refuse to run without one.
        getrandom::fill(&mut key).expect("the operating system's random generator failed");
        RequestStateKeys {
            current: "local".to_owned(),
            keys: vec![("local".to_owned(), key.to_vec())],
        }
    }

    /// The id of the key that seals.
    pub fn current_id(&self) -> &str {
        &self.current
    }

    pub(crate) fn codec(&self) -> Result<RequestStateCodec, RequestStateKeysError> {
        RequestStateCodec::new_with_keyring(
            self.current.clone(),
            self.keys.iter().map(|(id, key)| (id.clone(), key.clone())),
        )
        .map_err(|e| RequestStateKeysError(e.to_string()))
    }
}

fn redact(pair: &str) -> String {
    pair.chars().take(8).collect::<String>() + "…"
}

fn decode_key(encoded: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    STANDARD
        .decode(encoded)
        .or_else(|_| URL_SAFE_NO_PAD.decode(encoded))
        .ok()
}

/// What a sealed state carries between rounds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Record {
    /// Single use: a state is opened once.
    pub(crate) nonce: String,
    /// Answers the body used so far, by question key.
    #[serde(default)]
    pub(crate) answers: Map<String, Value>,
    /// Results of `ctx.once` steps.
    #[serde(default)]
    pub(crate) steps: Map<String, Value>,
    /// The questions this state asks.
    #[serde(default)]
    pub(crate) pending: Vec<String>,
}

/// Why a state was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// It fails the integrity check: altered, signed with a key this server
    /// does not hold, or sealed for another tool, input or caller.
    Tampered,
    /// Past its expiry.
    Expired,
    /// Already used once.
    Replayed,
    /// Whether it was used could not be checked (the shared store is
    /// unreachable): refused, since a replay cannot be ruled out.
    Unchecked,
}

impl Refusal {
    pub(crate) fn message(self) -> &'static str {
        match self {
            Refusal::Tampered => "requestState failed its integrity check: it was altered, or it belongs to another tool, input or caller; call again without it",
            Refusal::Expired => "requestState has expired; call again without it",
            Refusal::Replayed => "requestState was already used; call again without it",
            Refusal::Unchecked => "requestState could not be checked (its single-use store is unreachable); call again without it",
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Refusal::Tampered => "tampered",
            Refusal::Expired => "expired",
            Refusal::Replayed => "replayed",
            Refusal::Unchecked => "unchecked",
        }
    }
}

/// A store that could not say whether a state was used.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SingleUseStoreError(pub String);

/// The future a [`SingleUseStore`] answers with.
pub type ClaimFuture<'a> =
    Pin<Box<dyn Future<Output = Result<bool, SingleUseStoreError>> + Send + 'a>>;

/// Remembers which sealed `requestState`s were used, so each opens once.
///
/// Every server process that may take a retry must share one store (with
/// the key ring, [`RequestStateKeys`]): otherwise a state used on one
/// replica opens again on another. [`InMemorySingleUseStore`] (the
/// default) is one process's; `RedisSingleUseStore` (feature `redis`)
/// is shared. A store that cannot answer refuses the retry (the client
/// calls again from the start): a replay is never let through.
pub trait SingleUseStore: Send + Sync + 'static {
    /// Marks `nonce` used for `ttl` (the state's lifetime): `Ok(true)` the
    /// first time, `Ok(false)` when it was used already.
    fn claim<'a>(&'a self, nonce: &'a str, ttl: Duration) -> ClaimFuture<'a>;
}

/// One process's [`SingleUseStore`]: nonces in memory until they expire.
#[derive(Debug, Default)]
pub struct InMemorySingleUseStore {
    used: Mutex<HashMap<String, Instant>>,
}

impl InMemorySingleUseStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SingleUseStore for InMemorySingleUseStore {
    fn claim<'a>(&'a self, nonce: &'a str, ttl: Duration) -> ClaimFuture<'a> {
        let now = Instant::now();
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.retain(|_, until| *until > now);
        let first = used.insert(nonce.to_owned(), now + ttl).is_none();
        Box::pin(std::future::ready(Ok(first)))
    }
}

/// A [`SingleUseStore`] on Redis, shared by every server process that
/// uses the same Redis and prefix: a nonce is claimed with `SET NX PX`
/// (key `PREFIX:rs:NONCE`, gone when the state would have expired anyway).
/// It connects on the first retry and reconnects by itself; a Redis that
/// does not answer within 500 ms refuses the retry.
#[cfg(feature = "redis")]
pub struct RedisSingleUseStore {
    client: redis::Client,
    connection: tokio::sync::OnceCell<redis::aio::ConnectionManager>,
    prefix: String,
}

#[cfg(feature = "redis")]
impl fmt::Debug for RedisSingleUseStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSingleUseStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "redis")]
impl RedisSingleUseStore {
    /// The most one claim may take, connecting included.
    const TIMEOUT: Duration = Duration::from_millis(500);

    /// A store on the Redis at `url` (`redis://HOST:PORT[/DB]`), its keys
    /// under `prefix`. Only the URL is checked here.
    pub fn new(url: &str, prefix: impl Into<String>) -> Result<Self, redis::RedisError> {
        Ok(RedisSingleUseStore {
            client: redis::Client::open(url)?,
            connection: tokio::sync::OnceCell::new(),
            prefix: prefix.into(),
        })
    }

    async fn claim_in_redis(&self, nonce: &str, ttl: Duration) -> Result<bool, String> {
        let mut connection = self
            .connection
            .get_or_try_init(|| async {
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(Self::TIMEOUT))
                    .set_response_timeout(Some(Self::TIMEOUT))
                    .set_number_of_retries(1);
                redis::aio::ConnectionManager::new_lazy_with_config(self.client.clone(), config)
            })
            .await
            .map_err(|e| e.to_string())?
            .clone();
        let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let mut command = redis::cmd("SET");
        command
            .arg(format!("{}:rs:{nonce}", self.prefix))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(millis);
        let set = command.query_async::<Option<String>>(&mut connection);
        let claimed = tokio::time::timeout(Self::TIMEOUT, set)
            .await
            .map_err(|_| format!("no answer within {:?}", Self::TIMEOUT))?
            .map_err(|e| e.to_string())?;
        Ok(claimed.is_some())
    }
}

#[cfg(feature = "redis")]
impl SingleUseStore for RedisSingleUseStore {
    fn claim<'a>(&'a self, nonce: &'a str, ttl: Duration) -> ClaimFuture<'a> {
        Box::pin(async move {
            self.claim_in_redis(nonce, ttl)
                .await
                .map_err(SingleUseStoreError)
        })
    }
}

/// Seals and opens the records of one server; its [`SingleUseStore`]
/// remembers which states were used.
pub(crate) struct Sealer {
    codec: RequestStateCodec,
    ttl: Duration,
    used: Arc<dyn SingleUseStore>,
}

impl Sealer {
    pub(crate) fn new(
        keys: &RequestStateKeys,
        ttl: Duration,
        used: Option<Arc<dyn SingleUseStore>>,
    ) -> Self {
        Sealer {
            // A ring that built once builds again.
            codec: keys.codec().unwrap_or_else(|_| {
                RequestStateKeys::random()
                    .codec()
                    .expect("a random 32-byte key makes a codec")
            }),
            ttl,
            used: used.unwrap_or_else(|| Arc::new(InMemorySingleUseStore::new())),
        }
    }

    pub(crate) fn seal(&self, record: &Record, binding: &[u8]) -> Option<String> {
        let options = SealOptions::new().associated_data(binding).ttl(self.ttl);
        self.codec.seal_json_with(record, &options).ok()
    }

    pub(crate) async fn open(&self, sealed: &str, binding: &[u8]) -> Result<Record, Refusal> {
        let record: Record =
            self.codec
                .open_json_with(sealed, binding)
                .map_err(|error| match error {
                    RequestStateError::Expired => Refusal::Expired,
                    _ => Refusal::Tampered,
                })?;
        // Claimed only once the seal checks out: forged states cost the
        // store nothing.
        match self.used.claim(&record.nonce, self.ttl).await {
            Ok(true) => Ok(record),
            Ok(false) => Err(Refusal::Replayed),
            Err(error) => {
                tracing::warn!(target: "gonk_tools::mcp", %error, "requestState single-use store failed; the retry is refused");
                Err(Refusal::Unchecked)
            }
        }
    }
}

/// A fresh nonce.
pub(crate) fn nonce() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Unique enough without randomness: the nonce only has to differ.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        bytes.copy_from_slice(&now.as_nanos().to_le_bytes());
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What a state is bound to: the tool, a digest of its input (keys in a
/// canonical order) and the caller.
pub(crate) fn binding(tool: &str, input: &Value, caller: &str) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    canonical(input, &mut hasher);
    hasher.update([0]);
    hasher.update(caller.as_bytes());
    hasher.finalize().to_vec()
}

fn canonical(value: &Value, hasher: &mut Sha256) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            hasher.update(b"{");
            for key in keys {
                hasher.update(serde_json::to_string(key).unwrap_or_default().as_bytes());
                hasher.update(b":");
                canonical(&map[key], hasher);
                hasher.update(b",");
            }
            hasher.update(b"}");
        }
        Value::Array(items) => {
            hasher.update(b"[");
            for item in items {
                canonical(item, hasher);
                hasher.update(b",");
            }
            hasher.update(b"]");
        }
        other => hasher.update(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sealer() -> Sealer {
        Sealer::new(&RequestStateKeys::random(), DEFAULT_REQUEST_STATE_TTL, None)
    }

    fn record() -> Record {
        Record {
            nonce: nonce(),
            ..Record::default()
        }
    }

    #[tokio::test]
    async fn a_state_opens_once_for_its_own_binding() {
        let sealer = sealer();
        let bound = binding("t", &json!({"a": 1, "b": 2}), "anonymous");
        let sealed = sealer.seal(&record(), &bound).unwrap();
        // Key order does not change the binding.
        let same = binding("t", &json!({"b": 2, "a": 1}), "anonymous");
        assert!(sealer.open(&sealed, &same).await.is_ok());
        assert_eq!(
            sealer.open(&sealed, &same).await.unwrap_err(),
            Refusal::Replayed
        );
    }

    #[tokio::test]
    async fn another_tool_input_or_caller_is_refused() {
        let sealer = sealer();
        let sealed = sealer
            .seal(&record(), &binding("t", &json!({"a": 1}), "alice"))
            .unwrap();
        for other in [
            binding("u", &json!({"a": 1}), "alice"),
            binding("t", &json!({"a": 2}), "alice"),
            binding("t", &json!({"a": 1}), "bob"),
        ] {
            assert_eq!(
                sealer.open(&sealed, &other).await.unwrap_err(),
                Refusal::Tampered
            );
        }
        let tampered = format!("{sealed}x");
        let bound = binding("t", &json!({"a": 1}), "alice");
        assert_eq!(
            sealer.open(&tampered, &bound).await.unwrap_err(),
            Refusal::Tampered
        );
    }

    #[tokio::test]
    async fn an_expired_state_is_refused() {
        let sealer = Sealer::new(&RequestStateKeys::random(), Duration::ZERO, None);
        let bound = binding("t", &json!({}), "a");
        let sealed = sealer.seal(&record(), &bound).unwrap();
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(
            sealer.open(&sealed, &bound).await.unwrap_err(),
            Refusal::Expired
        );
    }

    #[tokio::test]
    async fn a_rotated_ring_opens_states_of_the_previous_key() {
        let old = RequestStateKeys::new("old", vec![1u8; 32]).unwrap();
        let rotated = RequestStateKeys::new("new", vec![2u8; 32])
            .unwrap()
            .with_previous("old", vec![1u8; 32])
            .unwrap();
        let bound = binding("t", &json!({}), "a");
        let sealed = Sealer::new(&old, DEFAULT_REQUEST_STATE_TTL, None)
            .seal(&record(), &bound)
            .unwrap();
        assert!(Sealer::new(&rotated, DEFAULT_REQUEST_STATE_TTL, None)
            .open(&sealed, &bound)
            .await
            .is_ok());
        let foreign = RequestStateKeys::new("other", vec![3u8; 32]).unwrap();
        assert_eq!(
            Sealer::new(&foreign, DEFAULT_REQUEST_STATE_TTL, None)
                .open(&sealed, &bound)
                .await
                .unwrap_err(),
            Refusal::Tampered
        );
    }
}
