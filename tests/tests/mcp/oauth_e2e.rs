//! The real `notes` server behind a real authorization server:
//! `notes serve --auth-issuer` trusting `oidc-provider` (started on a
//! loopback port: resource indicators, JWT access tokens, dynamic
//! registration, PKCE required). The Python SDK's `OAuthClientProvider`,
//! the TypeScript SDK's auth provider and our `McpClient` each do the whole
//! authorization-code flow with PKCE — the person's login and consent
//! played by a browser that submits the server's forms — then create and
//! search notes. The receipts name the token's subject; no line the server
//! or our client logged holds a token. Step-up: a `notes:read` token
//! calling `notes.create` is refused with `403 insufficient_scope` naming
//! `notes:write` and nothing runs; `McpClient` authorizes again with the
//! wider scope and the call goes through.

use gonk_tools::adapters::mcp::oauth::{CredentialStore, InMemoryCredentialStore, OAuthOptions};
use gonk_tools::adapters::mcp::{McpClient, McpHttpClientOptions};
use gonk_tools::prelude::*;
use gonk_tools_tests::clients::report;
use gonk_tools_tests::log_capture::Capture;
use gonk_tools_tests::mcp_clients::{run_node, run_python};
use gonk_tools_tests::oidc_provider::{OidcLogin, OidcProvider};
use gonk_tools_tests::process::ServerProcess;
use gonk_tools_tests::workspace::notes_serve_command;
use serde_json::Value;

/// `notes serve` on a free port, its tokens from `provider`, writes exposed
/// (the scopes decide who may write).
fn notes_behind(provider: &OidcProvider) -> (tempfile::TempDir, ServerProcess) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let command = notes_serve_command(
        &dir.path().join("notes.db"),
        &["--auth-issuer", &provider.issuer],
    );
    (dir, ServerProcess::start(command))
}

/// The receipts the server wrote (`notes: audit {…}` on stderr).
fn receipts(server: &ServerProcess) -> Vec<Value> {
    server
        .stderr_lines()
        .iter()
        .filter_map(|line| line.split("notes: audit ").nth(1))
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect()
}

/// Asserts that a receipt of an allowed call of `tool` names `subject`
/// (a JSON string anywhere in the receipt: the principal's identity).
fn assert_receipt_names(server: &ServerProcess, tool: &str, subject: &str) {
    let receipts = receipts(server);
    let named = receipts.iter().any(|receipt| {
        receipt.to_string().contains(&format!("\"{tool}\""))
            && receipt.to_string().contains(&format!("\"{subject}\""))
    });
    assert!(
        named,
        "no receipt of {tool} names the subject {subject}: {receipts:#?}"
    );
}

/// Asserts that none of `tokens` appears in any line of `logged`.
fn assert_no_token_in(logged: &[String], tokens: &[String], whose: &str) {
    assert!(!tokens.is_empty(), "no token to look for");
    for token in tokens {
        for line in logged {
            assert!(
                !line.contains(token.as_str()),
                "{whose} logged a token: {line}"
            );
        }
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// What both SDK scripts report, checked the same way.
fn check_sdk_report(report: &Value, provider: &OidcProvider, server: &ServerProcess, title: &str) {
    assert!(
        strings(&report["tools"]).contains(&"notes.create".to_owned()),
        "{report}"
    );
    assert_ne!(report["created"]["isError"], true, "{report}");
    assert_ne!(report["found"]["isError"], true, "{report}");
    assert!(
        report["found"].to_string().contains(title),
        "the search finds the note: {report}"
    );
    // The whole flow ran against the authorization server: registered,
    // authorized with PKCE S256 for this server's resource, a code
    // exchanged.
    assert!(!provider.events_of("register").is_empty());
    let authorizations = provider.events_of("authorize");
    assert!(!authorizations.is_empty());
    for authorization in &authorizations {
        assert_eq!(authorization["code_challenge_method"], "S256");
        assert_eq!(authorization["resource"], json!(server.url));
    }
    assert!(provider
        .events_of("token")
        .iter()
        .any(|token| token["grant_type"] == "authorization_code"));
    assert!(!strings(&report["logins"]).is_empty());
    assert_receipt_names(server, "notes.create", "alice");
    assert_no_token_in(
        &server.stderr_lines(),
        &strings(&report["tokens"]),
        "the server",
    );
}

#[test]
fn the_python_sdk_authorizes_at_oidc_provider_then_creates_and_searches_notes() {
    let provider = OidcProvider::start();
    let (_dir, server) = notes_behind(&provider);
    let title = "Written from Python behind OAuth";
    let report = report(&run_python(
        "python_oauth.py",
        &[&server.url, "alice", title],
    ));
    check_sdk_report(&report, &provider, &server, title);
}

#[test]
fn the_typescript_sdk_authorizes_at_oidc_provider_then_creates_and_searches_notes() {
    let provider = OidcProvider::start();
    let (_dir, server) = notes_behind(&provider);
    let title = "Written from TypeScript behind OAuth";
    let report = report(&run_node("ts_oauth.mjs", &[&server.url, "alice", title]));
    check_sdk_report(&report, &provider, &server, title);
}

async fn call(client: &McpClient, name: &str, input: Value) -> Result<Value, ToolError> {
    collect_tool_outcome(client.invoke(name, input), |_| {})
        .await
        .map(|output| output.data)
}

/// The access and refresh tokens a store holds.
async fn tokens_in(store: &InMemoryCredentialStore) -> Vec<String> {
    let stored = store
        .load()
        .await
        .expect("the store reads")
        .expect("a token was stored");
    let response = serde_json::to_value(stored.token_response).expect("a token response");
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|field| response[field].as_str().map(str::to_owned))
        .collect()
}

// On one thread, so that every task logs to the capturing subscriber.
#[tokio::test]
async fn mcp_client_authorizes_at_oidc_provider_and_steps_up_for_a_write() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(capture.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .finish();
    let _guard = gonk_tools_tests::subscriber::set_scoped_default(subscriber);

    let provider = OidcProvider::start();
    let (_dir, server) = notes_behind(&provider);
    let store = InMemoryCredentialStore::new();
    let login = OidcLogin::new("alice");
    // Asks for reading only: the first write must step up.
    let client = McpClient::builder()
        .oauth(
            OAuthOptions::new()
                .client_name("gonk-tools e2e")
                .scopes(["notes:read"])
                .credential_store(store.clone())
                .redirect(login.clone()),
        )
        .connect_http(&server.url, McpHttpClientOptions::new())
        .await
        .expect("connects after the login");
    assert_eq!(login.logins().len(), 1);
    let first = &provider.events_of("authorize")[0];
    assert_eq!(first["code_challenge_method"], "S256");
    assert_eq!(first["resource"], json!(server.url));
    let first_scope = first["scope"].as_str().unwrap_or_default().to_owned();
    assert!(
        first_scope.contains("notes:read") && !first_scope.contains("notes:write"),
        "{first_scope}"
    );
    let read_only = tokens_in(&store).await;

    // The read-only token is refused for a write, with the scope it needs,
    // before anything runs.
    let refused = raw_create(&server.url, &read_only[0], "never written").await;
    assert_eq!(refused.0, 403, "{refused:?}");
    assert!(
        refused.1.contains("insufficient_scope") && refused.1.contains("notes:write"),
        "WWW-Authenticate: {}",
        refused.1
    );

    // McpClient steps up: a second login with the wider scope, the same
    // call sent again.
    let created = call(
        &client,
        "notes.create",
        json!({"title": "Written by McpClient behind OAuth", "body": "b"}),
    )
    .await
    .expect("the write goes through after the step-up");
    assert!(
        created.to_string().contains("Written by McpClient"),
        "{created}"
    );
    assert_eq!(login.logins().len(), 2, "one step-up");
    let second = &provider.events_of("authorize")[1];
    let second_scope = second["scope"].as_str().unwrap_or_default();
    assert!(
        second_scope.contains("notes:read") && second_scope.contains("notes:write"),
        "{second_scope}"
    );

    let found = call(&client, "notes.search", json!({"query": "McpClient"}))
        .await
        .expect("notes.search");
    assert!(
        found.to_string().contains("Written by McpClient"),
        "{found}"
    );
    let never = call(&client, "notes.search", json!({"query": "never written"}))
        .await
        .expect("notes.search");
    assert_eq!(never["hits"], json!([]), "the refused write ran: {never}");
    assert_eq!(login.logins().len(), 2, "the wider token serves reads too");
    client.close().await.expect("closes");

    assert_receipt_names(&server, "notes.create", "alice");
    let mut tokens = read_only;
    tokens.extend(tokens_in(&store).await);
    assert_no_token_in(&server.stderr_lines(), &tokens, "the server");
    // Whatever the client logged (at every level) holds no token either.
    let logged: Vec<String> = capture.text().lines().map(str::to_owned).collect();
    assert_no_token_in(&logged, &tokens, "McpClient");
}

/// A stateless `tools/call` of `notes.create` sent by hand with `token`:
/// the status and the `WWW-Authenticate` header.
async fn raw_create(url: &str, token: &str, title: &str) -> (u16, String) {
    raw_call_with(url, token, "notes.create", json!({"title": title})).await
}

/// The same for `tool` without arguments.
async fn raw_call(url: &str, token: &str, tool: &str) -> (u16, String) {
    raw_call_with(url, token, tool, json!({})).await
}

async fn raw_call_with(url: &str, token: &str, tool: &str, arguments: Value) -> (u16, String) {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let response = gonk_tools::adapters::http::OutboundHttp::new()
        .client()
        .expect("an HTTP client")
        .post(url)
        .header("Authorization", format!("Bearer {token}"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers");
    let challenge = response
        .headers()
        .get("WWW-Authenticate")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (response.status().as_u16(), challenge)
}

/// Keeps every receipt the registry writes.
#[derive(Clone, Default)]
struct KeptReceipts(std::sync::Arc<std::sync::Mutex<Vec<Value>>>);

impl gonk_tools::security::AuditSink for KeptReceipts {
    fn record(
        &self,
        receipt: gonk_tools::security::AuditReceipt,
    ) -> futures::future::BoxFuture<'_, Result<(), gonk_tools::security::SecurityError>> {
        let kept = serde_json::to_value(&receipt).map_err(gonk_tools::security::SecurityError::new);
        Box::pin(async move {
            self.0.lock().unwrap().push(kept?);
            Ok(())
        })
    }
}

/// The resource-server seam itself (no `notes` binary): `ProtectedResource`
/// with a `JwtVerifier` of oidc-provider in front of a registry in this
/// process; the same flow and step-up as above.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_resource_takes_oidc_provider_tokens_and_mcp_client_steps_up() {
    use gonk_tools::adapters::http::oauth::{JwtVerifier, ProtectedResource};
    use gonk_tools::adapters::http::HttpServerOptions;
    use gonk_tools::adapters::mcp::{serve_http, McpHttpOptions, McpServerOptions};
    use gonk_tools::security::SecurityOptions;

    let provider = OidcProvider::start();
    let receipts = KeptReceipts::default();
    let registry = ToolRegistry::builder()
        .security(SecurityOptions::new().audit_sink(receipts.clone()))
        .build();
    for name in ["docs.read", "docs.write"] {
        registry
            .register(
                ToolDefinition::builder(name)
                    .description("A tool behind a scope.")
                    .approval(ApprovalTier::Read)
                    .handler(move |_: NoInput, _ctx: ToolContext| async move {
                        Ok::<_, ToolError>(format!("{name} ran"))
                    })
                    .build(),
            )
            .unwrap();
    }
    let resource = ProtectedResource::new(JwtVerifier::new(&provider.issuer).unwrap())
        .authorization_server(&provider.issuer)
        .scopes_supported(["notes:read", "notes:write"])
        .require_scopes("docs.read", ["notes:read"])
        .require_scopes("docs.write", ["notes:write"]);
    let options = McpHttpOptions::new(McpServerOptions::new("docs", "1.0.0"))
        .http(HttpServerOptions::new().protected_resource(resource));
    let server = serve_http("127.0.0.1:0".parse().unwrap(), registry, options)
        .await
        .expect("serves");
    let url = server.url();

    let store = InMemoryCredentialStore::new();
    let login = OidcLogin::new("dana");
    let client = McpClient::builder()
        .oauth(
            OAuthOptions::new()
                .client_name("gonk-tools e2e")
                .scopes(["notes:read"])
                .credential_store(store.clone())
                .redirect(login.clone()),
        )
        .connect_http(&url, McpHttpClientOptions::new())
        .await
        .expect("connects after the login");
    assert_eq!(
        call(&client, "docs.read", json!({})).await.unwrap(),
        "docs.read ran"
    );
    assert_eq!(login.logins().len(), 1);
    let read_only = tokens_in(&store).await;
    let refused = raw_call(&url, &read_only[0], "docs.write").await;
    assert_eq!(refused.0, 403, "{refused:?}");
    assert!(
        refused.1.contains("insufficient_scope") && refused.1.contains("notes:write"),
        "{}",
        refused.1
    );
    assert_eq!(
        call(&client, "docs.write", json!({})).await.unwrap(),
        "docs.write ran"
    );
    assert_eq!(login.logins().len(), 2, "one step-up");
    let authorizations = provider.events_of("authorize");
    assert!(authorizations[1]["scope"]
        .as_str()
        .unwrap_or_default()
        .contains("notes:write"));
    for authorization in &authorizations {
        assert_eq!(authorization["resource"], json!(url));
    }
    client.close().await.unwrap();
    let kept = receipts.0.lock().unwrap().clone();
    assert!(
        kept.iter()
            .any(|r| r.to_string().contains("\"docs.write\"") && r.to_string().contains("\"dana\"")),
        "{kept:#?}"
    );
    server.shutdown().await.unwrap();
}
