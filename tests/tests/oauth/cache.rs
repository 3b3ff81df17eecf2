//! The verified-token cache: a repeated token is answered without a second
//! check; an entry ends at the token's `exp`, and when the key that
//! verified it leaves the issuer's set; the cache holds no more than its
//! bound; a refused token is not kept, and a token verified for one
//! resource is not verified for another by the cache. Introspection keeps
//! an active answer only when told to, for its TTL and never past `exp`.

use std::time::Duration;

use gonk_tools::adapters::http::oauth::{
    IntrospectionVerifier, JwtVerifier, TokenRejectionKind, TokenVerifier,
};
use gonk_tools_tests::mock_issuer::{now, MockIssuer};
use serde_json::json;

const AUDIENCE: &str = "https://notes.example/mcp";

/// Sleeps until the wall clock's second is past `exp`.
async fn until_past(exp: i64) {
    while now() <= exp {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_token_is_answered_from_the_cache() {
    let issuer = MockIssuer::start().await;
    let verifier = JwtVerifier::new(issuer.issuer()).unwrap();
    let token = issuer.sign(&issuer.claims(AUDIENCE));
    let first = verifier.verify(&token, AUDIENCE).await.expect("valid");
    assert_eq!((verifier.cache_hits(), verifier.cached_tokens()), (0, 1));
    let second = verifier
        .verify(&token, AUDIENCE)
        .await
        .expect("still valid");
    assert_eq!(first, second, "the same principal");
    assert_eq!(verifier.cache_hits(), 1);

    // No cache: every call checks.
    let uncached = JwtVerifier::new(issuer.issuer()).unwrap().cache_capacity(0);
    for _ in 0..2 {
        uncached.verify(&token, AUDIENCE).await.expect("valid");
    }
    assert_eq!((uncached.cache_hits(), uncached.cached_tokens()), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_token_expires_at_its_exp() {
    let issuer = MockIssuer::start().await;
    // No leeway: past `exp` a fresh check refuses.
    let verifier = JwtVerifier::new(issuer.issuer())
        .unwrap()
        .leeway(Duration::ZERO);
    let mut claims = issuer.claims(AUDIENCE);
    let exp = now() + 2;
    claims.body["exp"] = json!(exp);
    let token = issuer.sign(&claims);
    verifier.verify(&token, AUDIENCE).await.expect("valid now");
    verifier.verify(&token, AUDIENCE).await.expect("cached");
    assert_eq!(verifier.cache_hits(), 1);

    until_past(exp).await;
    let refused = verifier
        .verify(&token, AUDIENCE)
        .await
        .expect_err("the cache does not outlive exp");
    assert_eq!(refused.kind(), TokenRejectionKind::Expired);
    assert_eq!(verifier.cache_hits(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_holds_no_more_than_its_bound() {
    let issuer = MockIssuer::start().await;
    let verifier = JwtVerifier::new(issuer.issuer()).unwrap().cache_capacity(3);
    for n in 0..20 {
        let mut claims = issuer.claims(AUDIENCE);
        claims.body["sub"] = json!(format!("user-{n}"));
        verifier
            .verify(&issuer.sign(&claims), AUDIENCE)
            .await
            .expect("valid");
        assert!(
            verifier.cached_tokens() <= 3,
            "{}",
            verifier.cached_tokens()
        );
    }
    assert_eq!(verifier.cached_tokens(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_not_cached_and_the_audience_is_part_of_the_key() {
    let issuer = MockIssuer::start().await;
    let verifier = JwtVerifier::new(issuer.issuer()).unwrap();
    let mut claims = issuer.claims(AUDIENCE);
    claims.body["exp"] = json!(now() - 600);
    let expired = issuer.sign(&claims);
    for _ in 0..2 {
        let refused = verifier.verify(&expired, AUDIENCE).await.unwrap_err();
        assert_eq!(refused.kind(), TokenRejectionKind::Expired);
    }
    let elsewhere = issuer.sign(&issuer.claims("https://other.example/mcp"));
    for _ in 0..2 {
        let refused = verifier.verify(&elsewhere, AUDIENCE).await.unwrap_err();
        assert_eq!(refused.kind(), TokenRejectionKind::WrongAudience);
    }
    assert_eq!((verifier.cache_hits(), verifier.cached_tokens()), (0, 0));

    // Verified (and cached) for its own audience, still refused for ours.
    verifier
        .verify(&elsewhere, "https://other.example/mcp")
        .await
        .expect("valid where it was issued for");
    let refused = verifier.verify(&elsewhere, AUDIENCE).await.unwrap_err();
    assert_eq!(refused.kind(), TokenRejectionKind::WrongAudience);
    assert_eq!(verifier.cache_hits(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_token_goes_with_its_key() {
    let issuer = MockIssuer::start().await;
    let verifier = JwtVerifier::new(issuer.issuer())
        .unwrap()
        .refetch_floor(Duration::ZERO);
    let token = issuer.sign(&issuer.claims(AUDIENCE));
    verifier.verify(&token, AUDIENCE).await.expect("valid");
    verifier.verify(&token, AUDIENCE).await.expect("cached");
    assert_eq!(verifier.cache_hits(), 1);

    // A refetch that keeps the key keeps the cached token.
    issuer.publish(&["rsa-a", "rsa-b", "ec-a"]);
    let mut rotated = issuer.claims(AUDIENCE);
    rotated.kid = "rsa-b".into();
    verifier
        .verify(&issuer.sign(&rotated), AUDIENCE)
        .await
        .expect("found by the refetch");
    assert_eq!(issuer.jwks_fetches(), 2);
    verifier.verify(&token, AUDIENCE).await.expect("cached");
    assert_eq!(verifier.cache_hits(), 2);

    // The issuer drops `rsa-a`; the next refetch sees it go, and the
    // token it signed goes with it.
    issuer.publish(&["rsa-b", "ec-a"]);
    let mut unknown = issuer.claims(AUDIENCE);
    unknown.kid = "made-up".into();
    assert!(verifier
        .verify(&issuer.sign(&unknown), AUDIENCE)
        .await
        .is_err());
    assert_eq!(issuer.jwks_fetches(), 3);
    let refused = verifier
        .verify(&token, AUDIENCE)
        .await
        .expect_err("its key is gone");
    assert_eq!(refused.kind(), TokenRejectionKind::UnknownKey);
    assert_eq!(verifier.cache_hits(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_keeps_an_answer_only_when_told_and_never_past_exp() {
    let issuer = MockIssuer::start().await;
    let answer = |exp: i64| {
        json!({
            "active": true, "iss": issuer.issuer(), "sub": "dave", "aud": AUDIENCE,
            "scope": "notes:read", "exp": exp,
        })
    };
    issuer.opaque("opaque-long", answer(now() + 600));
    let exp = now() + 2;
    issuer.opaque("opaque-short", answer(exp));

    let every_time =
        IntrospectionVerifier::new(issuer.issuer(), issuer.introspection_endpoint()).unwrap();
    for _ in 0..2 {
        every_time
            .verify("opaque-long", AUDIENCE)
            .await
            .expect("active");
    }
    assert_eq!(issuer.introspections(), 2, "no cache by default");

    let cached = IntrospectionVerifier::new(issuer.issuer(), issuer.introspection_endpoint())
        .unwrap()
        .cache_ttl(Duration::from_secs(600));
    for _ in 0..3 {
        cached
            .verify("opaque-long", AUDIENCE)
            .await
            .expect("active");
    }
    assert_eq!(issuer.introspections(), 3, "asked once for three calls");
    assert_eq!(cached.cache_hits(), 2);

    cached
        .verify("opaque-short", AUDIENCE)
        .await
        .expect("active");
    cached
        .verify("opaque-short", AUDIENCE)
        .await
        .expect("cached");
    assert_eq!(issuer.introspections(), 4);
    until_past(exp).await;
    // Within the 30 s leeway the server's answer still passes; what
    // matters is that it was asked again.
    cached
        .verify("opaque-short", AUDIENCE)
        .await
        .expect("asked again");
    assert_eq!(issuer.introspections(), 5, "the TTL does not outlive exp");

    // A refused answer is not kept.
    issuer.opaque("opaque-inactive", json!({"active": false}));
    for _ in 0..2 {
        assert!(cached.verify("opaque-inactive", AUDIENCE).await.is_err());
    }
    assert_eq!(issuer.introspections(), 7);
}
