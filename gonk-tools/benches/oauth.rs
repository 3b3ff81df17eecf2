//! The per-request cost of the resource server's token check, side by
//! side in one run: a JWT access token (RS256 and ES256, the issuer's keys
//! already cached, each token checked afresh) through
//! `ProtectedResource`'s authentication hook, the same tokens answered
//! from the verified-token cache (the default: a client repeats its
//! token), against the static API key — as the HTTP guard compares it, and as
//! `ApiKeyVerifier` through the same hook. Each row authenticates one
//! request head: header checks, verification, the principal and its
//! `AuthContext`.
//!
//! The issuer is served by the bench on a loopback port (metadata and
//! JWKS); the first request fetches its keys, every measured one finds
//! them cached. Besides criterion's report, the run prints (and writes to
//! `target/criterion/oauth-ratio.json`) the JWT / API key ratios from
//! interleaved rounds.
//!
//! `cargo bench -p gonk-tools --features oauth,mcp --bench oauth -- --warm-up-time 1 --measurement-time 3`

use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use gonk_tools::adapters::http::oauth::{ApiKeyVerifier, JwtVerifier, ProtectedResource};
use gonk_tools::adapters::http::{HttpAuthenticator, HttpGuard, HttpRequestParts};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

const RESOURCE: &str = "http://127.0.0.1:8808/mcp";
const API_KEY: &str = "bench-api-key-0123456789abcdef";

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/oauth")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct Bench {
    /// The token cache off: every request checks the signature.
    jwt: ProtectedResource,
    /// The default: the token cache on.
    jwt_cached: ProtectedResource,
    key: ProtectedResource,
    guard: HttpGuard,
    rs256: HttpRequestParts,
    es256: HttpRequestParts,
    api_key: HttpRequestParts,
}

fn parts(token: &str) -> HttpRequestParts {
    http::Request::post("/mcp")
        .header("host", "127.0.0.1:8808")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap()
        .into_parts()
        .0
}

/// Serves the issuer's metadata and JWKS; returns the issuer URL.
async fn issuer(keys: serde_json::Value) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || {
                let metadata = metadata.to_string();
                async move { metadata }
            }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || {
                let keys = keys.to_string();
                async move { keys }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    issuer
}

fn setup(rt: &tokio::runtime::Runtime) -> Bench {
    let rsa = EncodingKey::from_rsa_pem(&fixture("rsa-a.pem")).unwrap();
    let ec = EncodingKey::from_ec_pem(&fixture("ec-p256.pem")).unwrap();
    let mut public = Vec::new();
    for (kid, key, alg) in [
        ("rsa-a", &rsa, Algorithm::RS256),
        ("ec-a", &ec, Algorithm::ES256),
    ] {
        let mut jwk = serde_json::to_value(Jwk::from_encoding_key(key, alg).unwrap()).unwrap();
        jwk["kid"] = json!(kid);
        public.push(jwk);
    }
    let issuer = rt.block_on(issuer(json!({ "keys": public })));
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({
        "iss": issuer, "sub": "alice", "aud": RESOURCE, "client_id": "claude-desktop",
        "scope": "notes:read notes:write", "iat": now, "exp": now + 86_400,
    });
    let sign = |kid: &str, key: &EncodingKey, alg: Algorithm| {
        let mut header = Header::new(alg);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, &claims, key).unwrap()
    };
    let jwt = ProtectedResource::new(JwtVerifier::new(&issuer).unwrap().cache_capacity(0))
        .resource(RESOURCE)
        .unwrap();
    let jwt_cached = ProtectedResource::new(JwtVerifier::new(&issuer).unwrap())
        .resource(RESOURCE)
        .unwrap();
    let key = ProtectedResource::new(ApiKeyVerifier::new(API_KEY))
        .resource(RESOURCE)
        .unwrap();
    let bench = Bench {
        jwt,
        jwt_cached,
        key,
        guard: HttpGuard::new().api_key(API_KEY),
        rs256: parts(&sign("rsa-a", &rsa, Algorithm::RS256)),
        es256: parts(&sign("ec-a", &ec, Algorithm::ES256)),
        api_key: parts(API_KEY),
    };
    // Sanity, and the one key fetch: every measured request hits the cache.
    rt.block_on(async {
        for request in [&bench.rs256, &bench.es256] {
            for resource in [&bench.jwt, &bench.jwt_cached] {
                let auth = resource.authenticate(request).await.expect("verifies");
                assert_eq!(auth.principal().identity.subject, "alice");
            }
        }
        bench
            .key
            .authenticate(&bench.api_key)
            .await
            .expect("the key");
    });
    bench
        .guard
        .check(&bench.api_key.uri, &bench.api_key.headers)
        .expect("the key");
    bench
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime")
}

#[derive(Clone, Copy)]
enum Row {
    GuardKey,
    VerifierKey,
    Rs256,
    Es256,
    Rs256Cached,
    Es256Cached,
}

async fn one(bench: &Bench, row: Row) {
    match row {
        Row::GuardKey => {
            let request = &bench.api_key;
            bench.guard.check(&request.uri, &request.headers).unwrap();
        }
        Row::VerifierKey => {
            bench.key.authenticate(&bench.api_key).await.unwrap();
        }
        Row::Rs256 => {
            bench.jwt.authenticate(&bench.rs256).await.unwrap();
        }
        Row::Es256 => {
            bench.jwt.authenticate(&bench.es256).await.unwrap();
        }
        Row::Rs256Cached => {
            bench.jwt_cached.authenticate(&bench.rs256).await.unwrap();
        }
        Row::Es256Cached => {
            bench.jwt_cached.authenticate(&bench.es256).await.unwrap();
        }
    }
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let bench = setup(&rt);
    let mut group = c.benchmark_group("oauth");
    for (name, row) in [
        ("api key (HttpGuard)", Row::GuardKey),
        ("api key (ApiKeyVerifier)", Row::VerifierKey),
        ("jwt RS256, cached key", Row::Rs256),
        ("jwt ES256, cached key", Row::Es256),
        ("jwt RS256, cached token", Row::Rs256Cached),
        ("jwt ES256, cached token", Row::Es256Cached),
    ] {
        group.bench_function(name, |b| b.to_async(&rt).iter(|| one(&bench, row)));
    }
    group.finish();
    ratio(&rt, &bench);
}

/// Interleaved rounds of every row (so load from other processes hits
/// them alike): the median per-request time of each, and the JWT rows
/// against the guard's key check.
fn ratio(rt: &tokio::runtime::Runtime, bench: &Bench) {
    const CALLS: u32 = 200;
    const ROUNDS: usize = 21;
    let rows = [
        Row::GuardKey,
        Row::VerifierKey,
        Row::Rs256,
        Row::Es256,
        Row::Rs256Cached,
        Row::Es256Cached,
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(ROUNDS); rows.len()];
    for _ in 0..ROUNDS {
        for (at, row) in rows.iter().enumerate() {
            let start = Instant::now();
            rt.block_on(async {
                for _ in 0..CALLS {
                    one(bench, *row).await;
                }
            });
            times[at].push(start.elapsed() / CALLS);
        }
    }
    let median = |mut samples: Vec<Duration>| {
        samples.sort();
        samples[samples.len() / 2]
    };
    let [guard, verifier, rs256, es256, rs256_cached, es256_cached]: [Duration; 6] = times
        .into_iter()
        .map(median)
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let per = |d: Duration| d.as_secs_f64() * 1e6;
    let ratio = |d: Duration| d.as_secs_f64() / guard.as_secs_f64();
    println!(
        "oauth: per request, median of {ROUNDS} interleaved rounds: api key (guard) {:.3} µs, api key (verifier) {:.3} µs ({:.1}×), RS256 {:.1} µs ({:.0}×), ES256 {:.1} µs ({:.0}×), RS256 cached token {:.3} µs ({:.1}×), ES256 cached token {:.3} µs ({:.1}×)",
        per(guard),
        per(verifier),
        ratio(verifier),
        per(rs256),
        ratio(rs256),
        per(es256),
        ratio(es256),
        per(rs256_cached),
        ratio(rs256_cached),
        per(es256_cached),
        ratio(es256_cached),
    );
    let report = json!({
        "api_key_guard_us": per(guard),
        "api_key_verifier_us": per(verifier),
        "rs256_us": per(rs256),
        "es256_us": per(es256),
        "rs256_cached_token_us": per(rs256_cached),
        "es256_cached_token_us": per(es256_cached),
        "rs256_cached_token_over_api_key": ratio(rs256_cached),
        "es256_cached_token_over_api_key": ratio(es256_cached),
        "rs256_over_api_key": ratio(rs256),
        "es256_over_api_key": ratio(es256),
        "verifier_over_guard": ratio(verifier),
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join("oauth-ratio.json"), report.to_string());
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
