//! `McpClient` against an OAuth-protected MCP server (a mock in this
//! process: our MCP endpoint behind a bearer check, its protected resource
//! metadata and a toy authorization server): a machine with client
//! credentials, a person through the authorization-code flow (the consent
//! played by following the redirect), a step-up on `403
//! insufficient_scope` and its limit, refresh of an expiring or rejected
//! token, a file store reused by a later client, a client that may not
//! authorize on its own, no token ever in a log line; and `McpSource`
//! importing the server's tools, its token kept across reconnects.

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::adapters::mcp::oauth::{
    FileCredentialStore, InMemoryCredentialStore, OAuthOptions,
};
use gonk_tools::adapters::mcp::{
    McpClient, McpClientError, McpEndpoint, McpEra, McpHttpClientOptions, McpSource,
};
use gonk_tools::prelude::*;
use gonk_tools_tests::log_capture::Capture;
use gonk_tools_tests::mock_oauth::{FollowRedirect, MockOAuth, MockOptions};
use serde_json::Value;

async fn connect(mock: &MockOAuth, options: OAuthOptions) -> McpClient {
    McpClient::builder()
        .oauth(options)
        .connect_http(&mock.url, McpHttpClientOptions::new())
        .await
        .expect("connects")
}

async fn call(client: &McpClient, name: &str, input: Value) -> Result<Value, ToolError> {
    collect_tool_outcome(client.invoke(name, input), |_| {})
        .await
        .map(|output| output.data)
}

fn person() -> OAuthOptions {
    OAuthOptions::new()
        .client_name("oauth test")
        .redirect(FollowRedirect)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_gets_a_token_with_client_credentials_for_the_published_resource() {
    let mock = MockOAuth::start(MockOptions::default()).await;
    let client = connect(
        &mock,
        OAuthOptions::client_credentials("indexer", "indexer-secret"),
    )
    .await;
    assert_eq!(call(&client, "whoami", json!({})).await.unwrap(), "indexer");
    assert_eq!(
        call(&client, "notes.search", json!({"query": "rust"}))
            .await
            .unwrap(),
        "found: rust"
    );
    let tokens = mock.events_of("token");
    assert_eq!(
        tokens.len(),
        1,
        "one token for the whole connection: {tokens:?}"
    );
    assert_eq!(tokens[0]["grant_type"], "client_credentials");
    // The resource exactly as the protected resource metadata publishes it,
    // and the challenge's scope.
    assert_eq!(tokens[0]["resource"], json!(mock.url));
    assert_eq!(tokens[0]["scope"], "notes:read");
    assert!(mock.events_of("authorize").is_empty(), "no person involved");
    client.close().await.unwrap();
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_machine_credentials_fail_the_connection_saying_why() {
    let mock = MockOAuth::start(MockOptions::default()).await;
    let error = McpClient::builder()
        .oauth(OAuthOptions::client_credentials("indexer", "wrong"))
        .connect_http(&mock.url, McpHttpClientOptions::new())
        .await
        .expect_err("refused");
    let McpClientError::Authorization(message) = &error else {
        panic!("an authorization failure, not {error:?}");
    };
    assert!(message.contains(&mock.url), "{message}");
    assert!(message.contains("invalid_client"), "{message}");
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_authorizes_with_pkce_then_steps_up_for_a_write() {
    let mock = MockOAuth::start(MockOptions::default()).await;
    let client = connect(&mock, person()).await;
    assert_eq!(client.era(), McpEra::Stateless);
    assert_eq!(call(&client, "whoami", json!({})).await.unwrap(), "alice");

    // Registered once, asked for the challenge's scope plus offline_access
    // (the authorization server offers it), with PKCE and the resource.
    assert_eq!(mock.events_of("register").len(), 1);
    let first = &mock.events_of("authorize")[0]["query"];
    assert_eq!(first["scope"], "notes:read offline_access");
    assert_eq!(first["code_challenge_method"], "S256");
    assert_eq!(first["resource"], json!(mock.url));

    // The write needs notes:write: the server answers 403, the client asks
    // for what it had plus what is missing, and the call goes through.
    assert_eq!(
        call(&client, "notes.create", json!({"title": "hello"}))
            .await
            .unwrap(),
        "created: hello"
    );
    let authorizations = mock.events_of("authorize");
    assert_eq!(authorizations.len(), 2, "{authorizations:?}");
    assert_eq!(
        authorizations[1]["query"]["scope"],
        "notes:read offline_access notes:write"
    );
    // The wider token serves the next write at once.
    assert_eq!(
        call(&client, "notes.create", json!({"title": "again"}))
            .await
            .unwrap(),
        "created: again"
    );
    assert_eq!(mock.events_of("authorize").len(), 2);
    client.close().await.unwrap();
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_session_steps_up_on_the_session_too() {
    let mock = MockOAuth::start(MockOptions::default()).await;
    let client = McpClient::builder()
        .era(McpEra::Session)
        .oauth(person())
        .connect_http(&mock.url, McpHttpClientOptions::new())
        .await
        .expect("connects");
    assert_eq!(client.era(), McpEra::Session);
    assert_eq!(
        call(&client, "notes.create", json!({"title": "s"}))
            .await
            .unwrap(),
        "created: s"
    );
    assert_eq!(mock.events_of("authorize").len(), 2);
    client.close().await.unwrap();
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_challenge_scope_the_client_asks_for_what_the_server_supports() {
    let mock = MockOAuth::start(MockOptions {
        challenge_scope: None,
        ..MockOptions::default()
    })
    .await;
    let client = connect(&mock, person()).await;
    assert_eq!(
        mock.events_of("authorize")[0]["query"]["scope"],
        "notes:read notes:write offline_access"
    );
    client.close().await.unwrap();
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_no_step_up_satisfies_gets_a_limited_number_of_them() {
    let mock = MockOAuth::start(MockOptions {
        never_satisfied: true,
        ..MockOptions::default()
    })
    .await;
    let client = connect(&mock, person().max_step_ups(2)).await;
    let error = call(&client, "notes.search", json!({"query": "x"}))
        .await
        .expect_err("the server never accepts");
    assert!(error.message.contains("nsufficient scope"), "{error:?}");
    // The first authorization, then two step-ups; no third.
    assert_eq!(mock.events_of("authorize").len(), 3);
    client.close().await.unwrap();
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiring_token_is_refreshed_and_a_rejected_one_refreshed_then_resent() {
    let mock = MockOAuth::start(MockOptions {
        lifetime: 2,
        ..MockOptions::default()
    })
    .await;
    let client = connect(&mock, person()).await;
    assert_eq!(call(&client, "whoami", json!({})).await.unwrap(), "alice");
    // At its end the token is refreshed before it is sent.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(call(&client, "whoami", json!({})).await.unwrap(), "alice");
    let refreshes = |mock: &MockOAuth| {
        mock.events_of("token")
            .into_iter()
            .filter(|event| event["grant_type"] == "refresh_token")
            .count()
    };
    assert_eq!(refreshes(&mock), 1);
    // The server forgets the token: its 401 is answered by a refresh and
    // the request sent again, without a new authorization.
    mock.revoke_access_tokens();
    assert_eq!(call(&client, "whoami", json!({})).await.unwrap(), "alice");
    assert_eq!(refreshes(&mock), 2);
    assert_eq!(mock.events_of("authorize").len(), 1);
    client.close().await.unwrap();
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_store_serves_the_next_client_and_one_without_it_must_log_in() {
    let mock = MockOAuth::start(MockOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes-token.json");
    let first = connect(
        &mock,
        person().credential_store(FileCredentialStore::new(&path)),
    )
    .await;
    assert_eq!(call(&first, "whoami", json!({})).await.unwrap(), "alice");
    first.close().await.unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // A later client with the same file and no way to ask a person uses the
    // stored token: no new authorization.
    let later = connect(
        &mock,
        OAuthOptions::new().credential_store(FileCredentialStore::new(&path)),
    )
    .await;
    assert_eq!(call(&later, "whoami", json!({})).await.unwrap(), "alice");
    assert_eq!(mock.events_of("authorize").len(), 1);
    later.close().await.unwrap();

    // Without a stored token it cannot connect, and says someone must log in.
    let error = McpClient::builder()
        .oauth(OAuthOptions::new().credential_store(InMemoryCredentialStore::new()))
        .connect_http(&mock.url, McpHttpClientOptions::new())
        .await
        .expect_err("needs a login");
    let McpClientError::AuthorizationRequired(message) = &error else {
        panic!("an authorization-required error, not {error:?}");
    };
    assert!(message.contains("log in"), "{message}");
    mock.shutdown().await;
}

// On one thread, so that every task logs to the capturing subscriber.
#[tokio::test]
async fn concurrent_calls_share_one_authorization_and_no_token_is_logged() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(capture.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .finish();
    let _guard = gonk_tools_tests::subscriber::set_scoped_default(subscriber);

    let mock = MockOAuth::start(MockOptions::default()).await;
    let client = Arc::new(connect(&mock, person()).await);
    mock.revoke_access_tokens();
    let calls = (0..4).map(|n| {
        let client = Arc::clone(&client);
        async move { call(&client, "notes.search", json!({"query": format!("q{n}")})).await }
    });
    for result in futures::future::join_all(calls).await {
        assert!(result.unwrap().as_str().unwrap().starts_with("found: q"));
    }
    let refreshes = mock
        .events_of("token")
        .into_iter()
        .filter(|event| event["grant_type"] == "refresh_token")
        .count();
    assert_eq!(refreshes, 1, "four refused calls, one refresh");

    let logged = capture.text();
    assert!(
        logged.contains("attempting refresh"),
        "the capture hears the client's logs:\n{logged}"
    );
    for token in mock.issued_tokens() {
        assert!(!logged.contains(&token), "a token was logged:\n{logged}");
    }
    Arc::try_unwrap(client).unwrap().close().await.unwrap();
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_imports_a_protected_server_and_keeps_its_token_across_reconnects() {
    let mock = MockOAuth::start(MockOptions::default()).await;
    let registry = ToolRegistry::new();
    let source = McpSource::builder("notes", McpEndpoint::http(&mock.url))
        .oauth(OAuthOptions::client_credentials(
            "indexer",
            "indexer-secret",
        ))
        .connect(&registry)
        .await
        .expect("imports");
    let whoami = || async {
        collect_tool_outcome(
            registry.invoke("notes.whoami", json!({}), ToolContext::new()),
            |_| {},
        )
        .await
        .expect("notes.whoami")
        .data["content"][0]["text"]
            .clone()
    };
    // The remote's text content, as it sent it (JSON).
    assert_eq!(whoami().await, "\"indexer\"");
    source.reconnect().await.expect("reconnects");
    assert_eq!(whoami().await, "\"indexer\"");
    assert_eq!(
        mock.events_of("token").len(),
        1,
        "the reconnect used the token it had"
    );
    source.close().await.unwrap();
    mock.shutdown().await;
}
