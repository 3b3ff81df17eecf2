//! Opaque tokens through RFC 7662 introspection: an active answer for this
//! resource is the principal; inactive, another audience or an expired
//! answer are refused, and nothing runs.

use gonk_tools::adapters::http::oauth::IntrospectionVerifier;
use gonk_tools_tests::mock_issuer::{now, MockIssuer};
use serde_json::json;

use crate::support::{bearer, raw_call, Protected};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn active_tokens_pass_and_inactive_ones_do_not() {
    let issuer = MockIssuer::start().await;
    let verifier = IntrospectionVerifier::new(issuer.issuer(), issuer.introspection_endpoint())
        .unwrap()
        .client_credentials("notes-server", "s3cret");
    let server = Protected::start_with(issuer, verifier).await;
    let issuer = &server.issuer;
    let answer = |aud: &str, exp: i64| {
        json!({
            "active": true, "iss": issuer.issuer(), "sub": "dave", "aud": aud,
            "client_id": "vscode", "scope": "notes:read", "exp": exp,
        })
    };
    issuer.opaque("opaque-good", answer(&server.url, now() + 600));
    issuer.opaque(
        "opaque-other-aud",
        answer("http://127.0.0.1:1/mcp", now() + 600),
    );
    issuer.opaque("opaque-expired", answer(&server.url, now() - 600));
    issuer.opaque("opaque-inactive", json!({"active": false}));

    let (status, _, body) =
        raw_call(&server.url, &[("authorization", &bearer("opaque-good"))]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("dave found"), "{body}");
    assert_eq!(
        server.invoke_receipts(),
        [(
            issuer.issuer().to_owned(),
            "dave".to_owned(),
            "vscode".to_owned()
        )]
    );
    for refused in [
        "opaque-other-aud",
        "opaque-expired",
        "opaque-inactive",
        "never-issued",
    ] {
        let (status, challenge, _) =
            raw_call(&server.url, &[("authorization", &bearer(refused))]).await;
        assert_eq!(status, 401, "{refused}");
        assert!(
            challenge.contains("invalid_token"),
            "{refused}: {challenge}"
        );
    }
    assert_eq!(server.runs(), 1);
    assert_eq!(issuer.introspections(), 5);
}
