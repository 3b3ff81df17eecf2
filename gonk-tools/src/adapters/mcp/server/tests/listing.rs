//! What `tools/list` shows: the options' and the write policy's filters,
//! the tools the caller's credentials let it discover, and who may keep
//! the listing.

use rmcp::model::{CacheScope, ListToolsResult};

use super::*;
use crate::definition::Visibility;

fn write_tool(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Writes.")
        .approval(ApprovalTier::Write)
        .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("written") })
        .build()
}

fn listed_always(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Always listed.")
        .approval(ApprovalTier::Read)
        .visibility(Visibility::Always)
        .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("ok") })
        .build()
}

fn names(server: &McpServer) -> Vec<String> {
    let mut names: Vec<String> = server
        .list()
        .into_iter()
        .map(|tool| tool.name.into_owned())
        .collect();
    names.sort();
    names
}

fn catalog() -> ToolRegistry {
    registry_of([
        read_tool("notes.read"),
        listed_always("notes.search"),
        write_tool("notes.create"),
        write_tool("notes.delete"),
        read_tool("secret"),
    ])
}

#[test]
fn write_tools_follow_the_policy_and_its_allow_list() {
    let options = McpServerOptions::new("unit", "1.0.0").allow_write_tools(["notes.create"]);
    let server = server_with(catalog(), options.clone());
    assert_eq!(server.write_policy(), WriteToolPolicy::RequireAllowlist);
    assert_eq!(
        names(&server),
        ["notes.create", "notes.read", "notes.search", "secret"]
    );
    // Withheld is not callable either.
    assert!(server.with_input_schema("notes.delete", |_| ()).is_none());
    assert!(server.with_input_schema("notes.create", |_| ()).is_some());

    // The options' policy wins over the transport's default.
    let options = options.write_policy(WriteToolPolicy::Permissive);
    let server = server_with(catalog(), options);
    assert_eq!(server.write_policy(), WriteToolPolicy::Permissive);
    assert_eq!(names(&server).len(), 5);
}

#[test]
fn the_options_filter_hides_and_only_always_visible_lists_less() {
    let options = McpServerOptions::new("unit", "1.0.0")
        .write_policy(WriteToolPolicy::Permissive)
        .filter(|def| def.name != "secret");
    let server = server_with(catalog(), options.clone());
    assert_eq!(
        names(&server),
        ["notes.create", "notes.delete", "notes.read", "notes.search"]
    );
    assert!(server.with_input_schema("secret", |_| ()).is_none());

    // On-demand tools leave the listing but stay callable by name.
    let server = server_with(catalog(), options.only_always_visible(true));
    assert_eq!(names(&server), ["notes.search"]);
    assert!(server.with_input_schema("notes.read", |_| ()).is_some());
}

async fn list(server: &McpServer, auth: Option<AuthContext>) -> ListToolsResult {
    let mut context = session_request(server, 1);
    if let Some(auth) = auth {
        with_auth(&mut context, auth);
    }
    server.list_tools(None, context).await.unwrap()
}

fn listed(result: &ListToolsResult) -> Vec<&str> {
    let mut names: Vec<&str> = result.tools.iter().map(|tool| tool.name.as_ref()).collect();
    names.sort_unstable();
    names
}

#[tokio::test]
async fn a_listing_filtered_by_credentials_is_private_to_them() {
    let server = server(registry_of([
        read_tool("admin.reset"),
        read_tool("notes.read"),
    ]));

    let anonymous = list(&server, None).await;
    assert_eq!(listed(&anonymous), ["admin.reset", "notes.read"]);
    assert_eq!(anonymous.cache_scope, Some(CacheScope::Public));

    let bob = list(&server, Some(auth_for("bob"))).await;
    assert_eq!(listed(&bob), ["notes.read"]);
    assert_eq!(bob.cache_scope, Some(CacheScope::Private));

    let alice = list(&server, Some(auth_for("alice"))).await;
    assert_eq!(listed(&alice), ["admin.reset", "notes.read"]);
    assert_eq!(alice.cache_scope, Some(CacheScope::Private));
    assert_eq!(server.list_for(&auth_for("bob")).await.len(), 1);
}

#[tokio::test]
async fn the_hosts_base_context_auth_lists_when_http_gives_none() {
    let options = McpServerOptions::new("unit", "1.0.0")
        .base_context(|| ToolContext::new().with_auth(auth_for("bob")));
    let server = server_with(
        registry_of([read_tool("admin.reset"), read_tool("notes.read")]),
        options,
    );
    let from_base = list(&server, None).await;
    assert_eq!(listed(&from_base), ["notes.read"]);
    assert_eq!(from_base.cache_scope, Some(CacheScope::Private));
    // The HTTP caller's auth wins.
    let alice = list(&server, Some(auth_for("alice"))).await;
    assert_eq!(listed(&alice), ["admin.reset", "notes.read"]);
}
