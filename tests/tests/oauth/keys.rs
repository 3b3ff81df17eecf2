//! The issuer's keys as the resource server caches them: discovered
//! through the metadata under the issuer's tenant path, fetched once; a
//! token naming an unknown `kid` causes exactly one refetch and is then
//! refused, and more such tokens within the floor cause none; a rotated-in
//! key is found by that refetch; while the JWKS endpoint is down, cached
//! keys keep verifying and unknown ones fail closed.

use serde_json::json;

use crate::support::{bearer, raw_call, Protected};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kid_costs_one_refetch_then_is_refused() {
    let server = Protected::start().await;
    let issuer = &server.issuer;
    let (status, _, body) = raw_call(
        &server.url,
        &[("authorization", &bearer(&server.token("notes:read")))],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(issuer.jwks_fetches(), 1, "fetched on first use");

    // Signed by a key the issuer does not publish.
    let mut claims = issuer.claims(&server.url);
    claims.kid = "rsa-b".into();
    let unknown = issuer.sign(&claims);
    let (status, challenge, _) =
        raw_call(&server.url, &[("authorization", &bearer(&unknown))]).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("invalid_token"), "{challenge}");
    assert_eq!(issuer.jwks_fetches(), 2, "exactly one refetch");

    // A flood of made-up kids within the floor costs the issuer nothing.
    for kid in ["rsa-b", "made-up-1", "made-up-2"] {
        let mut claims = issuer.claims(&server.url);
        claims.kid = kid.into();
        let (status, _, _) = raw_call(
            &server.url,
            &[("authorization", &bearer(&issuer.sign(&claims)))],
        )
        .await;
        assert_eq!(status, 401, "{kid}");
    }
    assert_eq!(issuer.jwks_fetches(), 2, "no refetch within the floor");
    // Cached keys still verify without a fetch.
    let (status, _, _) = raw_call(
        &server.url,
        &[("authorization", &bearer(&server.token("notes:read")))],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(issuer.jwks_fetches(), 2);
    assert_eq!(server.runs(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_in_key_is_found_by_the_refetch() {
    let server = Protected::start().await;
    let issuer = &server.issuer;
    let (status, _, _) = raw_call(
        &server.url,
        &[("authorization", &bearer(&server.token("notes:read")))],
    )
    .await;
    assert_eq!(status, 200);
    issuer.publish(&["rsa-a", "rsa-b", "ec-a"]);
    let mut claims = issuer.claims(&server.url);
    claims.kid = "rsa-b".into();
    claims.body["sub"] = json!("carol");
    let (status, _, body) = raw_call(
        &server.url,
        &[("authorization", &bearer(&issuer.sign(&claims)))],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("carol found"), "{body}");
    assert_eq!(issuer.jwks_fetches(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_the_jwks_is_down_cached_keys_work_and_unknown_ones_fail_closed() {
    let server = Protected::start().await;
    let issuer = &server.issuer;
    let good = bearer(&server.token("notes:read"));
    assert_eq!(
        raw_call(&server.url, &[("authorization", &good)]).await.0,
        200
    );
    issuer.set_jwks_down(true);
    assert_eq!(
        raw_call(&server.url, &[("authorization", &good)]).await.0,
        200
    );
    // ES256 under a cached key: still fine.
    let mut ec = issuer.claims(&server.url);
    ec.kid = "ec-a".into();
    assert_eq!(
        raw_call(
            &server.url,
            &[("authorization", &bearer(&issuer.sign(&ec)))]
        )
        .await
        .0,
        200
    );
    let mut claims = issuer.claims(&server.url);
    claims.kid = "rsa-b".into();
    let (status, challenge, _) = raw_call(
        &server.url,
        &[("authorization", &bearer(&issuer.sign(&claims)))],
    )
    .await;
    assert_eq!(status, 401, "an unknown key fails closed");
    assert!(challenge.contains("invalid_token"));
    assert_eq!(
        issuer.jwks_fetches(),
        2,
        "the one refetch was tried, and failed"
    );
    assert_eq!(server.runs(), 3);
}
