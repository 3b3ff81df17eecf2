//! Change notifications shared between registries through a bus
//! (`ToolRegistry::share_changes`): in one process with the in-memory bus,
//! across processes' worth of connections with the Redis bus on the
//! test binary's own Redis, and with Redis unreachable (each registry still hears
//! its own changes, nothing blocks, nothing panics).

use std::sync::Arc;
use std::time::Duration;

use gonk_tools::changes::{ChangeBus, InMemoryChangeBus, RedisChangeBus};
use gonk_tools::prelude::*;
use gonk_tools::{ResourceUpdates, ToolRegistry};

fn ping(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Answer pong.")
        .handler(|_: NoInput, _ctx| async { Ok::<_, ToolError>("pong") })
        .build()
}

/// The next update within `bound`, `None` if none comes.
async fn next_within(updates: &mut ResourceUpdates, bound: Duration) -> Option<String> {
    tokio::time::timeout(bound, updates.next())
        .await
        .ok()
        .flatten()
}

#[tokio::test]
async fn a_resource_update_on_one_registry_is_raised_on_the_other_once() {
    let bus: Arc<dyn ChangeBus> = Arc::new(InMemoryChangeBus::new());
    let (a, b) = (ToolRegistry::new(), ToolRegistry::new());
    let _a_shared = a.share_changes(Arc::clone(&bus)).unwrap();
    let _b_shared = b.share_changes(Arc::clone(&bus)).unwrap();
    let (mut on_a, mut on_b) = (a.resource_updates(), b.resource_updates());

    a.notify_resource_updated("notes://1");
    let bound = Duration::from_secs(5);
    assert_eq!(
        next_within(&mut on_b, bound).await.as_deref(),
        Some("notes://1")
    );
    assert_eq!(
        next_within(&mut on_a, bound).await.as_deref(),
        Some("notes://1")
    );
    // A does not hear its own change back from the bus.
    assert_eq!(
        next_within(&mut on_a, Duration::from_millis(200)).await,
        None
    );

    // A notifier (what a change listener holds) publishes too.
    b.resource_notifier().notify("notes://2");
    assert_eq!(
        next_within(&mut on_a, bound).await.as_deref(),
        Some("notes://2")
    );
}

#[tokio::test]
async fn catalog_and_list_changes_cross_and_a_dropped_attachment_stops_both_ways() {
    let bus: Arc<dyn ChangeBus> = Arc::new(InMemoryChangeBus::new());
    let (a, b) = (ToolRegistry::new(), ToolRegistry::new());
    let a_shared = a.share_changes(Arc::clone(&bus)).unwrap();
    let _b_shared = b.share_changes(Arc::clone(&bus)).unwrap();
    let mut b_catalog = b.catalog_changes();
    let before = b.generation();
    a.register(ping("ping")).unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(5), b_catalog.changed())
        .await
        .expect("B hears A's catalog change");
    assert!(seen.unwrap() > before);
    // B's catalog itself is its own: only its watchers were told.
    assert!(b.get("ping").is_none());

    drop(a_shared);
    let mut on_a = a.resource_updates();
    b.notify_resource_updated("notes://3");
    assert_eq!(
        next_within(&mut on_a, Duration::from_millis(300)).await,
        None
    );
    let mut on_b = b.resource_updates();
    a.notify_resource_updated("notes://4");
    assert_eq!(
        next_within(&mut on_b, Duration::from_millis(300)).await,
        None
    );
}

/// A channel prefix of this test's own (pub/sub leaves no keys behind).
fn prefix(test: &str) -> String {
    format!("gonk-tests:bus:{test}:{}", std::process::id())
}

#[tokio::test]
async fn two_registries_on_one_redis_hear_each_other() {
    let prefix = prefix("redis");
    let redis = gonk_tools_tests::services::redis().url();
    let a = ToolRegistry::new();
    let b = ToolRegistry::new();
    let a_bus = RedisChangeBus::new(&redis, &prefix).unwrap();
    assert_eq!(a_bus.channel(), format!("{prefix}:changes"));
    let _a_shared = a.share_changes(Arc::new(a_bus)).unwrap();
    let b_bus = RedisChangeBus::new(&redis, &prefix).unwrap();
    let _b_shared = b.share_changes(Arc::new(b_bus)).unwrap();
    let mut on_b = b.resource_updates();
    // The subscriptions are made in the background: publish until B hears.
    let mut heard = None;
    for _ in 0..50 {
        a.notify_resource_updated("notes://7");
        heard = next_within(&mut on_b, Duration::from_millis(200)).await;
        if heard.is_some() {
            break;
        }
    }
    assert_eq!(heard.as_deref(), Some("notes://7"));
}

#[tokio::test]
async fn with_redis_unreachable_local_changes_still_arrive_and_calls_work() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let registry = ToolRegistry::new();
    registry.register(ping("ping")).unwrap();
    let bus = RedisChangeBus::new(&format!("redis://127.0.0.1:{port}"), "gonk-tests:down").unwrap();
    let _shared = registry.share_changes(Arc::new(bus)).unwrap();
    let mut updates = registry.resource_updates();
    for n in 0..3 {
        registry.notify_resource_updated(format!("notes://{n}"));
        let heard = next_within(&mut updates, Duration::from_secs(5)).await;
        assert_eq!(heard, Some(format!("notes://{n}")));
    }
    let output = collect_tool_outcome(
        registry.invoke("ping", serde_json::json!({}), ToolContext::new()),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(output.data, "pong");
}

#[test]
fn sharing_outside_a_runtime_is_an_error_that_says_what_to_do() {
    let registry = ToolRegistry::new();
    let error = registry
        .share_changes(Arc::new(InMemoryChangeBus::new()))
        .unwrap_err();
    assert!(error.to_string().contains("Tokio runtime"), "{error}");
}
