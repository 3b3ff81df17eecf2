//! Hostile tokens, each refused with `401` (`error="invalid_token"` and
//! the metadata URL in the challenge) and nothing run: expired, not yet
//! valid, wrong issuer, wrong audience, `alg: none`, HS256 signed with the
//! issuer's RSA public key, a key the issuer does not publish, an
//! oversized token, a token in the query string; a missing token gets the
//! challenge that starts a client's authorization.

use std::io::{Read, Write};

use gonk_tools_tests::mock_issuer::now;
use serde_json::json;

use crate::support::{bearer, raw_call, Protected};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_hostile_token_is_refused_and_nothing_runs() {
    let server = Protected::start().await;
    let issuer = &server.issuer;
    let good = issuer.claims(&server.url);
    let edit = |key: &str, value: serde_json::Value| {
        let mut claims = good.clone();
        claims.body[key] = value;
        claims
    };
    let mut cases = vec![
        ("expired", issuer.sign(&edit("exp", json!(now() - 600)))),
        (
            "not yet valid",
            issuer.sign(&edit("nbf", json!(now() + 600))),
        ),
        (
            "wrong issuer",
            issuer.sign(&edit("iss", json!("http://127.0.0.1:1/tenants/acme"))),
        ),
        (
            "wrong audience",
            issuer.sign(&edit("aud", json!("http://127.0.0.1:1/mcp"))),
        ),
        ("alg none", issuer.unsigned(&good)),
        (
            "HS256 with the RSA public key",
            issuer.sign_hs256_with_public_key(&good),
        ),
        ("not a JWT", "opaque-garbage".to_owned()),
    ];
    let mut without_exp = good.clone();
    without_exp.body.as_object_mut().unwrap().remove("exp");
    cases.push(("no exp", issuer.sign(&without_exp)));
    // One character in the middle of the signature changed.
    let signed = issuer.sign(&good);
    let at = signed.len() - 20;
    let swapped = if &signed[at..=at] == "A" { "B" } else { "A" };
    let tampered = format!("{}{swapped}{}", &signed[..at], &signed[at + 1..]);
    cases.push(("tampered signature", tampered));

    for (case, token) in &cases {
        let (status, challenge, body) =
            raw_call(&server.url, &[("authorization", &bearer(token))]).await;
        assert_eq!(status, 401, "{case}: {body}");
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\""),
            "{case}: {challenge}"
        );
        assert!(
            challenge.contains("resource_metadata=\""),
            "{case}: {challenge}"
        );
        assert!(
            !challenge.contains(token.as_str()) && !body.contains(token.as_str()),
            "{case}"
        );
    }
    assert_eq!(server.runs(), 0, "no hostile token ran anything");
    assert!(server.invoke_receipts().is_empty());

    // The good token passes on the same server.
    let (status, _, body) = raw_call(
        &server.url,
        &[("authorization", &bearer(&issuer.sign(&good)))],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.runs(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_token_gets_the_challenge_that_starts_authorization() {
    let server = Protected::start().await;
    let (status, challenge, _) = raw_call(&server.url, &[]).await;
    assert_eq!(status, 401);
    let metadata = server
        .url
        .replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata}\", scope=\"notes:read notes:write\"")
    );
    // Another scheme is no bearer token.
    let (status, _, _) = raw_call(&server.url, &[("authorization", "Basic YTpi")]).await;
    assert_eq!(status, 401);
    assert_eq!(server.runs(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_in_the_query_string_is_refused() {
    let server = Protected::start().await;
    let token = server.token("notes:read");
    let in_query = format!("{}?access_token={token}", server.url);
    let (status, challenge, body) = raw_call(&in_query, &[]).await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge.contains("invalid_request"), "{challenge}");
    // Even beside a good header: a token in a URL ends up in logs.
    let (status, _, _) = raw_call(&in_query, &[("authorization", &bearer(&token))]).await;
    assert_eq!(status, 401);
    // The WebSocket upgrade too (a browser's usual way).
    let ws = format!(
        "{}?access_token={token}",
        server
            .url
            .replace("http://", "ws://")
            .replace("/mcp", "/ws")
    );
    let refused = tokio_tungstenite::connect_async(ws.as_str())
        .await
        .expect_err("refused");
    let tokio_tungstenite::tungstenite::Error::Http(response) = refused else {
        panic!("not an HTTP refusal: {refused}");
    };
    assert_eq!(response.status(), 401);
    assert_eq!(server.runs(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_tokens_are_refused_before_they_are_read() {
    let server = Protected::start().await;
    // Past the resource server's limit (16 KiB) but within hyper's
    // header buffer: refused by the length, not parsed or verified.
    let long = format!("{}.{}.{}", "e".repeat(20_000), "e".repeat(20), "e");
    let (status, challenge, body) =
        raw_call(&server.url, &[("authorization", &bearer(&long))]).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("longer than"), "{body}");
    assert!(challenge.contains("invalid_token"), "{challenge}");
    assert_eq!(server.issuer.jwks_fetches(), 0, "no key was fetched for it");

    // A 1 MB header: the HTTP layer refuses it (431) before any of ours
    // runs. Written on a raw socket, so the answer is read whatever the
    // server does with the rest of the request.
    let addr = server.server.local_addr();
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAuthorization: Bearer {}\r\nContent-Length: 2\r\n\r\n{{}}",
            "a".repeat(1024 * 1024)
        );
        // The server may close before it has read everything.
        let _ = stream.write_all(head.as_bytes());
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
    .unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 431") || answer.is_empty(),
        "{answer}"
    );
    assert_eq!(server.runs(), 0);
}
