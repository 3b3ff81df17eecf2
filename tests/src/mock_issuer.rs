//! A mock OAuth issuer for the resource-server tests: on a loopback port,
//! under a tenant path (`http://127.0.0.1:PORT/tenants/acme`), it serves
//! its RFC 8414 metadata, its JWKS (which a test can take down, or rotate)
//! and an RFC 7662 introspection endpoint, and signs JWT access tokens
//! with the keys in `tests/fixtures/oauth/` — RS256 (`kid` `rsa-a`) and
//! ES256 (`kid` `ec-a`), plus an RSA key it does not publish (`rsa-b`).
//! It counts JWKS fetches, so a test can say how many refetches a token
//! caused.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{Form, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

/// The tenant path of the issuer (exercises the RFC 8414 path insertion).
pub const TENANT: &str = "/tenants/acme";

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/oauth")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A signing key of the mock.
struct SigningKey {
    alg: Algorithm,
    key: EncodingKey,
    public: Jwk,
}

fn rsa(name: &str) -> SigningKey {
    let key = EncodingKey::from_rsa_pem(&fixture(name)).expect("an RSA key");
    let public = Jwk::from_encoding_key(&key, Algorithm::RS256).expect("its public half");
    SigningKey {
        alg: Algorithm::RS256,
        key,
        public,
    }
}

fn ec(name: &str) -> SigningKey {
    let key = EncodingKey::from_ec_pem(&fixture(name)).expect("an EC key");
    let public = Jwk::from_encoding_key(&key, Algorithm::ES256).expect("its public half");
    SigningKey {
        alg: Algorithm::ES256,
        key,
        public,
    }
}

struct IssuerState {
    issuer: String,
    keys: HashMap<&'static str, SigningKey>,
    published: Mutex<Vec<&'static str>>,
    jwks_down: AtomicBool,
    jwks_fetches: AtomicU64,
    /// Opaque token → its introspection answer.
    opaque: Mutex<HashMap<String, Value>>,
    introspections: AtomicU64,
}

/// The running mock issuer.
pub struct MockIssuer {
    state: Arc<IssuerState>,
    stop: tokio::sync::oneshot::Sender<()>,
}

/// The claims of a token to sign: defaults are a valid token for the
/// audience, subject `alice`, client `claude-desktop`, scope `notes:read`,
/// one hour left.
#[derive(Clone, Debug)]
pub struct Claims {
    /// The body; edit freely (set `iss`, `aud`, `exp`, `nbf`, …).
    pub body: Value,
    /// The key id in the header (a key the issuer has, or not).
    pub kid: String,
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl MockIssuer {
    /// Starts the issuer on a free loopback port, publishing `rsa-a` and
    /// `ec-a`.
    pub async fn start() -> MockIssuer {
        Self::start_with(None).await
    }

    /// Starts the issuer behind TLS with `ca`'s certificate: its URL (and
    /// every endpoint its metadata names) is `https://127.0.0.1:PORT/…`.
    pub async fn start_tls(ca: &crate::tls::TestCa) -> MockIssuer {
        Self::start_with(Some(ca)).await
    }

    async fn start_with(tls: Option<&crate::tls::TestCa>) -> MockIssuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().unwrap();
        let issuer = match tls {
            None => format!("http://{addr}{TENANT}"),
            Some(ca) => {
                let front = ca.front(addr).await;
                format!("https://{front}{TENANT}")
            }
        };
        let mut keys = HashMap::new();
        keys.insert("rsa-a", rsa("rsa-a.pem"));
        keys.insert("rsa-b", rsa("rsa-b.pem"));
        keys.insert("ec-a", ec("ec-p256.pem"));
        let state = Arc::new(IssuerState {
            issuer,
            keys,
            published: Mutex::new(vec!["rsa-a", "ec-a"]),
            jwks_down: AtomicBool::new(false),
            jwks_fetches: AtomicU64::new(0),
            opaque: Mutex::new(HashMap::new()),
            introspections: AtomicU64::new(0),
        });
        let app = Router::new()
            .route(
                &format!("/.well-known/oauth-authorization-server{TENANT}"),
                get(metadata),
            )
            .route(&format!("{TENANT}/jwks"), get(jwks))
            .route(&format!("{TENANT}/introspect"), post(introspect))
            .with_state(Arc::clone(&state));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        MockIssuer { state, stop }
    }

    /// The issuer URL (with its tenant path).
    pub fn issuer(&self) -> &str {
        &self.state.issuer
    }

    /// The introspection endpoint.
    pub fn introspection_endpoint(&self) -> String {
        format!("{}/introspect", self.state.issuer)
    }

    /// How many times the JWKS was asked for.
    pub fn jwks_fetches(&self) -> u64 {
        self.state.jwks_fetches.load(Ordering::SeqCst)
    }

    /// How many introspection requests came.
    pub fn introspections(&self) -> u64 {
        self.state.introspections.load(Ordering::SeqCst)
    }

    /// Takes the JWKS endpoint down (`503`) or back up.
    pub fn set_jwks_down(&self, down: bool) {
        self.state.jwks_down.store(down, Ordering::SeqCst);
    }

    /// Publishes these keys from now on (a rotation).
    pub fn publish(&self, kids: &[&'static str]) {
        *self.state.published.lock().unwrap() = kids.to_vec();
    }

    /// Valid claims for `audience`.
    pub fn claims(&self, audience: &str) -> Claims {
        Claims {
            body: json!({
                "iss": self.issuer(),
                "sub": "alice",
                "aud": audience,
                "client_id": "claude-desktop",
                "scope": "notes:read",
                "iat": now(),
                "exp": now() + 3600,
            }),
            kid: "rsa-a".to_owned(),
        }
    }

    /// Signs `claims` with the key its `kid` names (an unpublished one
    /// works too: that is the point of `rsa-b`).
    pub fn sign(&self, claims: &Claims) -> String {
        let key = self
            .state
            .keys
            .get(claims.kid.as_str())
            .unwrap_or_else(|| &self.state.keys["rsa-a"]);
        let mut header = Header::new(key.alg);
        header.kid = Some(claims.kid.clone());
        jsonwebtoken::encode(&header, &claims.body, &key.key).expect("signed")
    }

    /// The classic confusion attack: `alg: HS256`, the HMAC secret being
    /// the issuer's RSA public key (as PEM), `kid` of that RSA key.
    pub fn sign_hs256_with_public_key(&self, claims: &Claims) -> String {
        let secret = fixture("rsa-a.pub.pem");
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("rsa-a".to_owned());
        jsonwebtoken::encode(&header, &claims.body, &EncodingKey::from_secret(&secret))
            .expect("signed")
    }

    /// An unsigned token: `alg: none`, an empty signature.
    pub fn unsigned(&self, claims: &Claims) -> String {
        let header = json!({"alg": "none", "typ": "JWT", "kid": "rsa-a"});
        format!(
            "{}.{}.",
            b64(header.to_string().as_bytes()),
            b64(claims.body.to_string().as_bytes())
        )
    }

    /// Registers an opaque token whose introspection answers `answer`.
    pub fn opaque(&self, token: &str, answer: Value) {
        self.state
            .opaque
            .lock()
            .unwrap()
            .insert(token.to_owned(), answer);
    }

    /// Stops the server.
    pub fn shutdown(self) {
        let _ = self.stop.send(());
    }
}

async fn metadata(State(state): State<Arc<IssuerState>>) -> Json<Value> {
    Json(json!({
        "issuer": state.issuer,
        "jwks_uri": format!("{}/jwks", state.issuer),
        "introspection_endpoint": format!("{}/introspect", state.issuer),
        "token_endpoint": format!("{}/token", state.issuer),
        "authorization_endpoint": format!("{}/authorize", state.issuer),
        "response_types_supported": ["code"],
    }))
}

async fn jwks(State(state): State<Arc<IssuerState>>) -> Response {
    state.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    if state.jwks_down.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "down").into_response();
    }
    let published = state.published.lock().unwrap().clone();
    let keys: Vec<Value> = published
        .iter()
        .map(|kid| {
            let key = &state.keys[kid];
            let mut jwk = serde_json::to_value(&key.public).unwrap();
            jwk["kid"] = json!(kid);
            jwk["use"] = json!("sig");
            jwk
        })
        .collect();
    Json(json!({ "keys": keys })).into_response()
}

async fn introspect(
    State(state): State<Arc<IssuerState>>,
    Form(form): Form<HashMap<String, String>>,
) -> Json<Value> {
    state.introspections.fetch_add(1, Ordering::SeqCst);
    let token = form.get("token").cloned().unwrap_or_default();
    let answer = state
        .opaque
        .lock()
        .unwrap()
        .get(&token)
        .cloned()
        .unwrap_or_else(|| json!({"active": false}));
    Json(answer)
}
