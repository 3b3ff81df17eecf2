//! Protected resource metadata (RFC 9728) at the root well-known path and
//! at its path-suffixed form for `/mcp`, without a token.

use serde_json::Value;

use crate::support::Protected;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_paths_document_the_resource() {
    let server = Protected::start().await;
    let base = server.url.trim_end_matches("/mcp").to_owned();
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let response = gonk_tools::adapters::http::OutboundHttp::new()
            .client()
            .expect("an HTTP client")
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], "application/json");
        let document: Value = response.json().await.unwrap();
        assert_eq!(document["resource"], server.url.as_str(), "{path}");
        assert_eq!(
            document["authorization_servers"],
            serde_json::json!([server.issuer.issuer()])
        );
        assert_eq!(
            document["scopes_supported"],
            serde_json::json!(["notes:read", "notes:write"])
        );
        assert_eq!(
            document["bearer_methods_supported"],
            serde_json::json!(["header"])
        );
    }
}
