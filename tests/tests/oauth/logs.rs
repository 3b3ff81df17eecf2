//! No log line holds a token: the resource server logs why it refused a
//! token (and whom it verified) at every level, never the token.

use gonk_tools_tests::log_capture::Capture;
use gonk_tools_tests::mock_issuer::now;
use serde_json::json;

use crate::support::{bearer, raw_call, Protected};

/// Runs [`alone_no_log_line_holds_a_token`] in a process of its own: a
/// capturing subscriber set for one thread hears a callsite only if no
/// other test's thread cached that callsite's interest first (tracing
/// keeps it process-wide), so beside other tests it could hear nothing
/// of the resource server.
#[test]
fn no_log_line_holds_a_token() {
    let run = gonk_tools_tests::process::alone(module_path!(), "alone_no_log_line_holds_a_token")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child test did not run: {stdout}"
    );
}

// On one thread, so that every task logs to the capturing subscriber.
#[tokio::test]
#[ignore = "run alone by no_log_line_holds_a_token"]
async fn alone_no_log_line_holds_a_token() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(capture.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    // Another test's thread may have cached a callsite's interest before
    // this subscriber existed.
    tracing::callsite::rebuild_interest_cache();

    let server = Protected::start().await;
    let good = server.token("notes:read");
    let mut expired = server.issuer.claims(&server.url);
    expired.body["exp"] = json!(now() - 600);
    let expired = server.issuer.sign(&expired);
    let mut unknown = server.issuer.claims(&server.url);
    unknown.kid = "rsa-b".into();
    let unknown = server.issuer.sign(&unknown);
    let tokens = [good.clone(), expired, unknown, "opaque-junk".to_owned()];
    for token in &tokens {
        raw_call(&server.url, &[("authorization", &bearer(token))]).await;
    }
    raw_call(&format!("{}?access_token={good}", server.url), &[]).await;

    let logged = capture.text();
    // The capture heard the resource server: its start-up line, and why
    // it refused each bad token and whom it verified, so the lines that
    // could have held a token were there to check.
    assert!(
        logged.contains("gonk_tools::adapters::http::oauth"),
        "{logged}"
    );
    assert!(logged.contains("refused a bearer token"), "{logged}");
    assert!(logged.contains("verified a bearer token"), "{logged}");
    for token in &tokens {
        assert!(
            !logged.contains(token.as_str()),
            "a token was logged:\n{logged}"
        );
    }
    // Nor any of its three parts (a signature alone is a secret's echo).
    for part in good.split('.') {
        assert!(!logged.contains(part), "part of a token was logged");
    }
}
