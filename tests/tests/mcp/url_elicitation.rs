//! URL-mode elicitation end to end, our server and our client: a tool asks
//! its caller to open a URL (a downstream service's sign-in page) with
//! `InputRequest::elicit_url`, the client's URL hook shows it and says when
//! the human is done, and the tool goes on — in `2026-07-28` (the question
//! in `input_required`, the answer in the retry) and on a 2025 session (an
//! `elicitation/create` request with its `elicitationId`). The answer
//! carries no content. A client that does not declare URL mode is never
//! sent one: the call says the caller cannot be asked.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use gonk_tools::adapters::http::HttpServer;
use gonk_tools::adapters::mcp::{
    serve_http, McpClient, McpClientBuilder, McpEra, McpHttpClientOptions, McpHttpOptions,
    McpServerOptions, UrlElicitationRequest,
};
use gonk_tools::ask::{Elicited, InputRequest};
use gonk_tools::prelude::*;
use serde_json::Value;

const SIGN_IN: &str = "https://calendar.example/authorize?client_id=notes&state=s1";

/// A server whose `calendar.connect` asks the caller to sign in at the
/// calendar, and answers what came of it (with the answer as the client
/// sent it).
async fn server() -> HttpServer {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("calendar.connect")
                .description("Connect the calendar: the human signs in there.")
                .approval(ApprovalTier::Read)
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    let question =
                        InputRequest::elicit_url("Sign in to your calendar to connect it", SIGN_IN);
                    let answer = ctx
                        .ask(vec![("calendar-sign-in".to_owned(), question)])
                        .await?
                        .pop()
                        .unwrap_or_default();
                    Ok::<_, ToolError>(answer)
                })
                .build(),
        )
        .unwrap();
    let options = McpHttpOptions::new(McpServerOptions::new("calendar", "1.0.0"));
    serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), registry, options)
        .await
        .unwrap()
}

/// A client whose URL hook answers `answer` and keeps what it was asked.
fn client(answer: Elicited<()>) -> (McpClientBuilder, Arc<Mutex<Vec<UrlElicitationRequest>>>) {
    let asked: Arc<Mutex<Vec<UrlElicitationRequest>>> = Arc::default();
    let keep = Arc::clone(&asked);
    let builder = McpClient::builder().on_url_elicitation(move |request| {
        keep.lock().unwrap().push(request);
        let answer = answer.clone();
        async move { answer }
    });
    (builder, asked)
}

async fn connect(server: &HttpServer, builder: McpClientBuilder, era: Option<McpEra>) -> McpClient {
    let builder = match era {
        Some(era) => builder.era(era),
        None => builder,
    };
    builder
        .connect_http(&server.url(), McpHttpClientOptions::new())
        .await
        .unwrap()
}

async fn connect_calendar(client: &McpClient) -> Result<Value, ToolError> {
    collect_tool_outcome(client.invoke("calendar.connect", json!({})), |_| {})
        .await
        .map(|output| output.data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_2026_the_tool_goes_on_once_the_human_is_done_at_the_url() {
    let server = server().await;
    let (builder, asked) = client(Elicited::Accepted(()));
    let client = connect(&server, builder, None).await;
    assert_eq!(client.era(), McpEra::Stateless);
    assert_eq!(
        connect_calendar(&client).await.unwrap(),
        json!({"action": "accept"}),
        "the answer says only that the human went ahead"
    );
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].url, SIGN_IN);
    assert_eq!(asked[0].message, "Sign in to your calendar to connect it");
    assert_eq!(
        asked[0].elicitation_id, None,
        "2026-07-28 has no elicitation ids"
    );
    client.close().await.unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_2025_session_the_url_comes_as_a_request_with_its_id() {
    let server = server().await;
    let (builder, asked) = client(Elicited::Accepted(()));
    let client = connect(&server, builder, Some(McpEra::Session)).await;
    assert_eq!(
        connect_calendar(&client).await.unwrap(),
        json!({"action": "accept"})
    );
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].url, SIGN_IN);
    let id = asked[0]
        .elicitation_id
        .clone()
        .expect("the 2025 wire names it");
    assert!(!id.is_empty());
    client.close().await.unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_human_who_declines_is_told_to_the_tool_in_both_eras() {
    let server = server().await;
    for era in [McpEra::Stateless, McpEra::Session] {
        let (builder, _) = client(Elicited::Declined);
        let client = connect(&server, builder, Some(era)).await;
        assert_eq!(
            connect_calendar(&client).await.unwrap(),
            json!({"action": "decline"}),
            "{era:?}"
        );
        client.close().await.unwrap();
    }
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_url_mode_is_never_sent_one() {
    let server = server().await;
    for era in [McpEra::Stateless, McpEra::Session] {
        // Forms only: the client declares `elicitation.form`.
        let forms = Arc::new(Mutex::new(0));
        let counted = Arc::clone(&forms);
        let builder = McpClient::builder().on_elicitation(move |_| {
            *counted.lock().unwrap() += 1;
            async { Elicited::Accepted(json!({})) }
        });
        let client = connect(&server, builder, Some(era)).await;
        let error = connect_calendar(&client).await.unwrap_err();
        assert_eq!(
            error.code,
            ErrorCode::InputUnavailable,
            "{era:?}: {error:?}"
        );
        assert!(
            error.message.contains("URL-mode"),
            "{era:?}: {}",
            error.message
        );
        assert_eq!(*forms.lock().unwrap(), 0, "nothing was asked");
        client.close().await.unwrap();
    }
    server.shutdown().await.unwrap();
}
