//! Rate limits (`docs/contract.md#rate-limits`): per-principal, per-tool
//! and global budgets counted before a call's input is looked at; a call
//! over budget is `RATE_LIMITED` with a retry-after and its handler never
//! runs. Counted in the process (governor) or shared by several registries
//! on a real Redis, the test binary's own (each test under its own key
//! prefix, removed afterwards), standing in for replicas; and what happens
//! while Redis cannot be reached.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gonk_tools::prelude::*;
use gonk_tools::rate_limit::{
    LocalRateLimiter, RateLimitBackend, RateLimits, RedisRateLimiter, RedisUnavailable,
};
use gonk_tools::security::{
    ApprovalMode, AuthContext, AuthMethod, AuthenticatedPrincipal, PrincipalIdentity,
    PrincipalKind, SecurityOptions,
};
use gonk_tools_tests::security::{alice, TestPolicy};
use serde_json::Value;

/// This binary's Redis (`gonk_tools_tests::services`), started on first use.
fn redis_url() -> String {
    gonk_tools_tests::services::redis().url()
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Echo {
    text: String,
}

/// A registry with `echo` and `other` (each counting its runs in `runs`)
/// and `twice`, which calls `echo` twice, under `limits` (approval not
/// enforced: the calls' principals only matter to the budgets).
fn registry(limits: RateLimits, runs: &Arc<AtomicUsize>) -> ToolRegistry {
    let registry = ToolRegistry::builder()
        .security(SecurityOptions::new().approval_mode(ApprovalMode::Bypass))
        .rate_limits(limits)
        .build();
    for name in ["echo", "other"] {
        let runs = Arc::clone(runs);
        registry
            .register(
                ToolDefinition::builder(name)
                    .description("Echo the text.")
                    .handler(move |input: Echo, _| {
                        runs.fetch_add(1, Ordering::SeqCst);
                        async move { Ok::<_, ToolError>(input.text) }
                    })
                    .build(),
            )
            .unwrap();
    }
    registry
        .register(
            ToolDefinition::builder("twice")
                .description("Echo twice through echo.")
                .handler(|_: NoInput, ctx: ToolContext| async move {
                    for _ in 0..2 {
                        collect_tool_outcome(ctx.invoke("echo", json!({"text": "x"})), |_| {})
                            .await?;
                    }
                    Ok::<_, ToolError>("twice")
                })
                .build(),
        )
        .unwrap();
    registry
}

fn principal(id: &str) -> AuthenticatedPrincipal {
    AuthenticatedPrincipal::new(
        id,
        PrincipalKind::Human,
        PrincipalIdentity::new("https://idp.example", id, AuthMethod::Oauth),
    )
}

fn as_principal(who: &AuthenticatedPrincipal) -> ToolContext {
    ToolContext::new().with_auth(AuthContext::new(who.clone(), TestPolicy::allow_all()))
}

async fn call(
    registry: &ToolRegistry,
    tool: &str,
    input: Value,
    ctx: ToolContext,
) -> Result<Value, ToolError> {
    collect_tool_outcome(registry.invoke(tool, input, ctx), |_| {})
        .await
        .map(|outcome| outcome.data)
}

fn local(rate: &str) -> RateLimits {
    RateLimits::new(Arc::new(LocalRateLimiter::new())).per_principal(rate.parse().unwrap())
}

#[tokio::test]
async fn a_principal_over_its_budget_is_rate_limited_and_others_are_not() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(local("3/1m"), &runs);
    let alice = alice();
    let bob = principal("bob");
    for i in 0..3 {
        let text = format!("call {i}");
        assert_eq!(
            call(
                &registry,
                "echo",
                json!({"text": text}),
                as_principal(&alice)
            )
            .await,
            Ok(json!(text))
        );
    }
    let refused = call(
        &registry,
        "echo",
        json!({"text": "4th"}),
        as_principal(&alice),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code, ErrorCode::RateLimited);
    assert!(
        refused
            .message
            .starts_with("Rate limit reached for user-1: 3 calls per 1m; retry in "),
        "{}",
        refused.message
    );
    let details = refused.details.clone().unwrap();
    assert_eq!(details["budget"], "principal");
    assert_eq!(details["limit"], 3);
    assert_eq!(details["periodMs"], 60_000);
    // One call comes back every 20 s.
    let wait = refused.retry_after().unwrap();
    assert!(
        wait > std::time::Duration::from_secs(15) && wait <= std::time::Duration::from_secs(20),
        "{wait:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3, "a refused call never runs");

    // Any tool: the budget is the principal's.
    let other = call(
        &registry,
        "other",
        json!({"text": "x"}),
        as_principal(&alice),
    )
    .await;
    assert_eq!(other.unwrap_err().code, ErrorCode::RateLimited);
    // Counted before validation: an over-budget caller learns nothing of the input.
    let invalid = call(&registry, "echo", json!({"nope": 1}), as_principal(&alice)).await;
    assert_eq!(invalid.unwrap_err().code, ErrorCode::RateLimited);

    assert_eq!(
        call(
            &registry,
            "echo",
            json!({"text": "bob"}),
            as_principal(&bob)
        )
        .await,
        Ok(json!("bob")),
        "another principal has a budget of its own"
    );
}

#[tokio::test]
async fn unauthenticated_calls_share_the_anonymous_budget_and_composed_calls_are_not_counted() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(local("2/1m"), &runs);
    // One root call that composes two: one count.
    assert_eq!(
        call(&registry, "twice", json!({}), ToolContext::new()).await,
        Ok(json!("twice"))
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert!(
        call(&registry, "echo", json!({"text": "a"}), ToolContext::new())
            .await
            .is_ok()
    );
    let refused = call(&registry, "echo", json!({"text": "b"}), ToolContext::new())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::RateLimited);
    assert!(
        refused.message.contains("for anonymous"),
        "{}",
        refused.message
    );
    // A missing tool is missing, not rate limited.
    let missing = call(&registry, "nope", json!({}), ToolContext::new()).await;
    assert_eq!(missing.unwrap_err().code, ErrorCode::ToolNotFound);
}

#[tokio::test]
async fn a_hidden_tool_reads_as_missing_and_uses_no_budget() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(local("1/1m"), &runs);
    let hide_other = TestPolicy::new(|request| {
        Ok(if request.resource.target.as_deref() == Some("other") {
            gonk_tools::security::AuthorizationDecision::deny("hidden")
        } else {
            gonk_tools::security::AuthorizationDecision::allow()
        })
    });
    let ctx = || ToolContext::new().with_auth(AuthContext::new(alice(), hide_other.clone()));
    for _ in 0..3 {
        let hidden = call(&registry, "other", json!({"text": "x"}), ctx()).await;
        assert_eq!(hidden.unwrap_err().code, ErrorCode::ToolNotFound);
    }
    assert!(call(&registry, "echo", json!({"text": "x"}), ctx())
        .await
        .is_ok());
}

#[tokio::test]
async fn per_tool_and_global_budgets_hold_for_everyone() {
    let runs = Arc::new(AtomicUsize::new(0));
    let limits = RateLimits::new(Arc::new(LocalRateLimiter::new()))
        .per_tool("other", "1/1m".parse().unwrap())
        .global("3/1m".parse().unwrap());
    let registry = registry(limits, &runs);
    let (a, b) = (principal("a"), principal("b"));
    assert!(
        call(&registry, "other", json!({"text": "x"}), as_principal(&a))
            .await
            .is_ok()
    );
    let tool = call(&registry, "other", json!({"text": "x"}), as_principal(&b))
        .await
        .unwrap_err();
    assert_eq!(tool.code, ErrorCode::RateLimited);
    assert_eq!(tool.details.as_ref().unwrap()["budget"], "tool");
    assert_eq!(tool.details.as_ref().unwrap()["tool"], "other");
    assert!(
        tool.message.contains("for tool other: 1 calls per 1m"),
        "{}",
        tool.message
    );
    // Budgets are checked narrowest first: the refused call stopped at its
    // tool's budget and left the global one 2 of 3.
    for who in [&a, &b] {
        assert!(
            call(&registry, "echo", json!({"text": "x"}), as_principal(who))
                .await
                .is_ok()
        );
    }
    let global = call(&registry, "echo", json!({"text": "x"}), as_principal(&b))
        .await
        .unwrap_err();
    assert_eq!(global.details.as_ref().unwrap()["budget"], "global");
    assert!(
        global.message.contains("for this server"),
        "{}",
        global.message
    );
}

/// A key prefix of this test's own on the shared Redis, removed on drop.
struct RedisPrefix(String);

impl RedisPrefix {
    fn new(test: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        RedisPrefix(format!("gonk-tests:{test}:{}:{nanos}", std::process::id()))
    }

    fn keys(&self) -> Vec<String> {
        let client = redis::Client::open(redis_url()).unwrap();
        let mut connection = client.get_connection().unwrap();
        redis::cmd("KEYS")
            .arg(format!("{}:*", self.0))
            .query(&mut connection)
            .unwrap()
    }
}

impl Drop for RedisPrefix {
    fn drop(&mut self) {
        // A failed test (maybe one whose server never started) leaves its
        // keys to the binary's own server, gone when the binary exits.
        if std::thread::panicking() {
            return;
        }
        let keys = self.keys();
        if !keys.is_empty() {
            let client = redis::Client::open(redis_url()).unwrap();
            let mut connection = client.get_connection().unwrap();
            let _: () = redis::cmd("DEL").arg(keys).query(&mut connection).unwrap();
        }
    }
}

fn shared(prefix: &RedisPrefix, rate: &str) -> RateLimits {
    let backend = RedisRateLimiter::new(&redis_url(), prefix.0.clone()).unwrap();
    RateLimits::new(Arc::new(backend)).per_principal(rate.parse().unwrap())
}

#[tokio::test]
async fn two_registries_on_one_redis_enforce_one_budget() {
    let prefix = RedisPrefix::new("one-budget");
    let runs = Arc::new(AtomicUsize::new(0));
    // Two registries with backends of their own: two replicas.
    let replicas = [
        registry(shared(&prefix, "5/1m"), &runs),
        registry(shared(&prefix, "5/1m"), &runs),
    ];
    let alice = alice();
    for i in 0..5 {
        let on = &replicas[i % 2];
        assert!(
            call(on, "echo", json!({"text": "x"}), as_principal(&alice))
                .await
                .is_ok(),
            "call {i} fits in the budget"
        );
    }
    // The 6th is refused whichever replica takes it.
    for on in &replicas {
        let refused = call(on, "echo", json!({"text": "x"}), as_principal(&alice))
            .await
            .unwrap_err();
        assert_eq!(refused.code, ErrorCode::RateLimited, "{refused:?}");
        let wait = refused.retry_after().unwrap();
        assert!(
            wait > std::time::Duration::from_secs(5) && wait <= std::time::Duration::from_secs(12),
            "one call comes back every 12 s: {wait:?}"
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 5);
    // Another principal is unaffected, on either replica.
    let bob = principal("bob");
    for on in &replicas {
        assert!(call(on, "echo", json!({"text": "x"}), as_principal(&bob))
            .await
            .is_ok());
    }
    assert_eq!(
        {
            let mut keys = prefix.keys();
            keys.sort();
            keys
        },
        [
            format!("{}:rl:principal:bob", prefix.0),
            format!("{}:rl:principal:user-1", prefix.0),
        ],
        "one key per budget, under the prefix (and they expire)"
    );
}

#[tokio::test]
async fn a_call_refused_by_one_shared_budget_is_counted_in_none() {
    let prefix = RedisPrefix::new("atomic");
    let runs = Arc::new(AtomicUsize::new(0));
    let backend = Arc::new(RedisRateLimiter::new(&redis_url(), prefix.0.clone()).unwrap());
    let limits = RateLimits::new(backend)
        .per_principal("2/1m".parse().unwrap())
        .per_tool("other", "1/1m".parse().unwrap());
    let registry = registry(limits, &runs);
    let alice = alice();
    assert!(call(
        &registry,
        "other",
        json!({"text": "x"}),
        as_principal(&alice)
    )
    .await
    .is_ok());
    let tool = call(
        &registry,
        "other",
        json!({"text": "x"}),
        as_principal(&alice),
    )
    .await
    .unwrap_err();
    assert_eq!(tool.details.as_ref().unwrap()["budget"], "tool");
    // Not counted in alice's budget: her second call still fits.
    assert!(call(
        &registry,
        "echo",
        json!({"text": "x"}),
        as_principal(&alice)
    )
    .await
    .is_ok());
    let third = call(
        &registry,
        "echo",
        json!({"text": "x"}),
        as_principal(&alice),
    )
    .await
    .unwrap_err();
    assert_eq!(third.details.as_ref().unwrap()["budget"], "principal");
}

/// A Redis URL on which nothing listens.
fn unreachable_redis() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("redis://127.0.0.1:{port}")
}

#[tokio::test]
async fn while_redis_is_unreachable_each_process_counts_on_its_own_by_default() {
    let runs = Arc::new(AtomicUsize::new(0));
    let backend: Arc<dyn RateLimitBackend> =
        Arc::new(RedisRateLimiter::new(&unreachable_redis(), "gonk-tests:down").unwrap());
    let limits = RateLimits::new(backend).per_principal("2/1m".parse().unwrap());
    let registry = registry(limits, &runs);
    let alice = alice();
    for _ in 0..2 {
        assert!(call(
            &registry,
            "echo",
            json!({"text": "x"}),
            as_principal(&alice)
        )
        .await
        .is_ok());
    }
    let refused = call(
        &registry,
        "echo",
        json!({"text": "x"}),
        as_principal(&alice),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code, ErrorCode::RateLimited);
    assert_eq!(refused.details.as_ref().unwrap()["budget"], "principal");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn while_redis_is_unreachable_a_refusing_limiter_fails_closed() {
    let runs = Arc::new(AtomicUsize::new(0));
    let backend = RedisRateLimiter::new(&unreachable_redis(), "gonk-tests:down")
        .unwrap()
        .when_unavailable(RedisUnavailable::Refuse);
    let limits = RateLimits::new(Arc::new(backend)).per_principal("100/1m".parse().unwrap());
    let registry = registry(limits, &runs);
    for _ in 0..2 {
        let refused = call(&registry, "echo", json!({"text": "x"}), ToolContext::new())
            .await
            .unwrap_err();
        assert_eq!(refused.code, ErrorCode::RateLimited);
        assert_eq!(
            refused.message,
            "Rate limit could not be checked (the rate-limit store is unreachable); retry later"
        );
        assert_eq!(refused.details.as_ref().unwrap()["budget"], "unavailable");
        assert_eq!(
            refused.retry_after(),
            Some(std::time::Duration::from_secs(1))
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");
}
