//! What a server says of itself and what each session keeps: the info
//! `initialize` reports, following what the registry offers; a session's
//! own log level and close signal; and resource subscriptions, only to
//! what the caller may read.

use rmcp::model::{
    LoggingLevel, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};

use super::*;
use crate::event::LogLevel;
use crate::jobs::{self, EmbeddedRunner};
use crate::prompt::{PromptDefinition, PromptMessage};
use crate::resource::ResourceDefinition;

fn resource(uri: &str) -> ResourceDefinition {
    ResourceDefinition::builder(uri)
        .name("readme")
        .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("# Notes") })
        .build()
}

/// Whether the server declares the tasks extension.
fn tasks_offered(capabilities: &rmcp::model::ServerCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .is_some_and(|extensions| extensions.contains_key(rmcp::model::TASKS_EXTENSION_ID))
}

#[test]
fn the_info_names_the_server_and_offers_what_the_registry_has() {
    let registry = registry_of([read_tool("notes.read")]);
    let options = McpServerOptions::new("notes", "1.2.0")
        .title("Notes")
        .instructions("Search before you create.");
    let server = server_with(registry.clone(), options);
    let info = server.get_info();
    assert_eq!(info.server_info.name, "notes");
    assert_eq!(info.server_info.version, "1.2.0");
    assert_eq!(info.server_info.title.as_deref(), Some("Notes"));
    assert_eq!(
        info.instructions.as_deref(),
        Some("Search before you create.")
    );
    let capabilities = &info.capabilities;
    assert!(capabilities.tools.is_some());
    assert!(capabilities.logging.is_some());
    assert!(!tasks_offered(capabilities), "no job runner, no tasks");
    assert!(capabilities.resources.is_none());
    assert!(capabilities.prompts.is_none());

    // The info follows the registry: asked again after it changed.
    registry
        .register_resource(resource("notes://readme"))
        .unwrap();
    registry
        .register_prompt(
            PromptDefinition::builder("review")
                .description("Review.")
                .handler(|_: NoInput, _ctx| async {
                    Ok::<_, ToolError>(vec![PromptMessage::user("Review it.")])
                })
                .build(),
        )
        .unwrap();
    jobs::install(&registry, Arc::new(EmbeddedRunner::new())).unwrap();
    let capabilities = server.get_info().capabilities;
    assert!(capabilities.resources.is_some());
    assert!(capabilities.prompts.is_some());
    assert!(tasks_offered(&capabilities));
}

#[tokio::test]
async fn each_session_keeps_its_own_log_level_and_close_signal() {
    let options = McpServerOptions::new("unit", "1.0.0").default_log_level(LogLevel::Warn);
    let first = server_with(registry_of([]), options);
    let second = first.new_session();
    assert!(!first.level.allows(LogLevel::Info));

    let context = session_request(&first, 1);
    first
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug), context)
        .await
        .unwrap();
    assert!(first.level.allows(LogLevel::Debug));
    assert!(
        !second.level.allows(LogLevel::Info),
        "the other session's level"
    );

    first.closed_token().cancel();
    assert!(!second.closed_token().is_cancelled());
    // The running calls are the server's, shared by its sessions.
    assert!(std::ptr::eq(first.inflight(), second.inflight()));
}

/// Over HTTP rmcp drops a session's server when the session ends (DELETE,
/// idle timeout, eviction): the tasks following it (catalog and resource
/// changes) wait on its close signal, which the last clone's drop gives.
#[test]
fn a_session_is_closed_when_its_last_clone_is_dropped() {
    let server = server_with(ToolRegistry::new(), McpServerOptions::new("unit", "1.0.0"));
    let session = server.new_session();
    let closed = session.closed_token().clone();
    let held = session.clone();
    drop(session);
    assert!(!closed.is_cancelled(), "a clone still serves the session");
    drop(held);
    assert!(closed.is_cancelled(), "the session's last clone is gone");
    assert!(
        !server.closed_token().is_cancelled(),
        "the server itself is still open"
    );
}

#[test]
fn a_listener_may_watch_only_resources_the_server_serves() {
    let registry = ToolRegistry::new();
    registry
        .register_resource(resource("notes://readme"))
        .unwrap();
    let server = server(registry);
    let mut requested = SubscriptionFilter::new();
    requested.tools_list_changed = Some(true);
    requested.resource_subscriptions = Some(vec![
        "notes://readme".to_owned(),
        "notes://elsewhere".to_owned(),
    ]);
    let accepted = server.accepted_subscription_filter(&requested).unwrap();
    assert_eq!(accepted.tools_list_changed, Some(true));
    assert_eq!(
        accepted.resource_subscriptions,
        Some(vec!["notes://readme".to_owned()])
    );
}

#[tokio::test]
async fn a_session_subscribes_only_to_what_its_caller_may_read() {
    let registry = ToolRegistry::new();
    registry
        .register_resource(resource("notes://readme"))
        .unwrap();
    let server = server(registry);

    let missing = server
        .subscribe(
            SubscribeRequestParams::new("notes://elsewhere"),
            session_request(&server, 1),
        )
        .await
        .unwrap_err();
    assert_eq!(
        missing.data.as_ref().and_then(|data| data.get("uri")),
        Some(&Value::from("notes://elsewhere")),
        "{missing:?}"
    );
    assert!(!server.subscriptions.contains("notes://elsewhere"));

    server
        .subscribe(
            SubscribeRequestParams::new("notes://readme"),
            session_request(&server, 2),
        )
        .await
        .unwrap();
    assert!(server.subscriptions.contains("notes://readme"));
    server
        .unsubscribe(
            UnsubscribeRequestParams::new("notes://readme"),
            session_request(&server, 3),
        )
        .await
        .unwrap();
    assert!(!server.subscriptions.contains("notes://readme"));
}
