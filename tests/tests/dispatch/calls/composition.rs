//! Composition: a handler's `ctx.invoke` re-enters dispatch with a longer
//! call stack; cycles are refused with the chain; a child gets the
//! parent's scope, cwd, env, host and notify but not its duplex input; the
//! logger names the tool and its call stack.

use std::sync::{Arc, Mutex};

use gonk_tools::prelude::*;
use gonk_tools::scope::{InMemoryScopeStore, ScopeStore, ScopeTier};

use super::{outcome, Empty};

fn hop(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Calls the next tool, if any.")
        .raw_handler(|input, ctx: ToolContext| async move {
            match input.get("next").and_then(|n| n.as_str()) {
                Some(next) => collect_tool_outcome(ctx.invoke(next, json!({})), |_| {}).await,
                None => Ok(ToolOutput::new(json!(ctx
                    .call_stack()
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()))),
            }
        })
        .build()
}

#[tokio::test]
async fn composition_reenters_dispatch_with_a_longer_call_stack() {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("outer")
                .description("d")
                .handler(|_: Empty, ctx: ToolContext| async move {
                    collect_tool_outcome(ctx.invoke("inner", json!({})), |_| {})
                        .await
                        .map(|o| o.data)
                })
                .build(),
        )
        .unwrap();
    registry.register(hop("inner")).unwrap();
    let out = outcome(&registry, "outer", json!({})).await.unwrap();
    assert_eq!(out.data, json!(["outer", "inner"]));
}

#[tokio::test]
async fn cycles_are_refused_with_the_chain() {
    let registry = ToolRegistry::new();
    let a = ToolDefinition::builder("a")
        .description("d")
        .raw_handler(|_, ctx: ToolContext| async move {
            collect_tool_outcome(ctx.invoke("b", json!({})), |_| {}).await
        })
        .build();
    let b = ToolDefinition::builder("b")
        .description("d")
        .raw_handler(|_, ctx: ToolContext| async move {
            collect_tool_outcome(ctx.invoke("a", json!({})), |_| {}).await
        })
        .build();
    registry.register_all([a, b]).unwrap();
    let err = outcome(&registry, "a", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Cycle);
    assert_eq!(err.message, "Cycle detected: a -> b -> a");

    registry.register(hop("self")).unwrap();
    let err = outcome(&registry, "self", json!({"next": "self"}))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Cycle detected: self -> self");
}

#[tokio::test]
async fn a_child_gets_scope_cwd_env_host_notify_but_not_the_duplex_input() {
    #[derive(Debug, PartialEq)]
    struct Host(&'static str);
    let seen: Arc<Mutex<Option<serde_json::Value>>> = Arc::default();
    let registry = ToolRegistry::new();
    let parent = ToolDefinition::builder("parent")
        .description("d")
        .capabilities(Capabilities {
            duplex: true,
            ..Default::default()
        })
        .raw_handler(|_, ctx: ToolContext| async move {
            assert!(ctx.has_input(), "the root call has its duplex input");
            ctx.scope()
                .unwrap()
                .set(ScopeTier::Session, "who", json!("parent"));
            collect_tool_outcome(ctx.invoke("child", json!({})), |_| {}).await
        })
        .build();
    let child = {
        let seen = seen.clone();
        ToolDefinition::builder("child")
            .description("d")
            .raw_handler(move |_, ctx: ToolContext| {
                let seen = seen.clone();
                async move {
                    ctx.progress(10.0, None);
                    let report = json!({
                        "has_input": ctx.has_input(),
                        "input_taken": ctx.take_input().is_some(),
                        "scope": ctx.scope().and_then(|s| s.get("who")),
                        "cwd": ctx.cwd(),
                        "env": ctx.env().get("GONK_TEST"),
                        "host": ctx.host::<Host>().map(|h| h.0),
                        "stack": ctx.call_stack().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                    });
                    *seen.lock().unwrap() = Some(report.clone());
                    Ok(ToolOutput::new(report))
                }
            })
            .build()
    };
    registry.register_all([parent, child]).unwrap();

    let notified = Arc::new(Mutex::new(Vec::new()));
    let scope: Arc<dyn ScopeStore> = Arc::new(InMemoryScopeStore::new());
    let ctx = ToolContext::new()
        .with_scope(scope.clone())
        .with_cwd("/tmp/gonk")
        .with_env([("GONK_TEST".to_owned(), "yes".to_owned())].into())
        .with_host(Host("the host"))
        .with_input(Box::pin(futures::stream::empty()))
        .with_notify({
            let notified = notified.clone();
            move |event: &ToolEvent| notified.lock().unwrap().push(event.clone())
        });
    let out = collect_tool_outcome(registry.invoke("parent", json!({}), ctx), |_| {})
        .await
        .unwrap();
    assert_eq!(
        out.data,
        json!({
            "has_input": false,
            "input_taken": false,
            "scope": "parent",
            "cwd": "/tmp/gonk",
            "env": "yes",
            "host": "the host",
            "stack": ["parent", "child"],
        })
    );
    assert_eq!(seen.lock().unwrap().as_ref(), Some(&out.data));
    assert_eq!(*notified.lock().unwrap(), [ToolEvent::progress(10.0, None)]);
    assert_eq!(scope.get("who"), Some(json!("parent")));
}

#[tokio::test]
async fn the_logger_names_the_tool_and_its_call_stack() {
    use gonk_tools::context::{LogRecord, LogSink};
    type Line = (String, String, Vec<String>);
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<Line>>>);
    impl LogSink for Capture {
        fn log(&self, record: &LogRecord<'_>) {
            self.0.lock().unwrap().push((
                record.message.to_owned(),
                record.tool.unwrap_or_default().to_owned(),
                record.call_stack.iter().map(|s| s.to_string()).collect(),
            ));
        }
    }
    let registry = ToolRegistry::new();
    registry
        .register_all([
            ToolDefinition::builder("p")
                .description("d")
                .raw_handler(|_, ctx: ToolContext| async move {
                    ctx.log().info("in parent");
                    collect_tool_outcome(ctx.invoke("c", json!({})), |_| {}).await
                })
                .build(),
            ToolDefinition::builder("c")
                .description("d")
                .raw_handler(|_, ctx: ToolContext| async move {
                    ctx.log().warn("in child");
                    Ok(ToolOutput::new(json!(null)))
                })
                .build(),
        ])
        .unwrap();
    let capture = Capture::default();
    let ctx = ToolContext::new().with_logger(capture.clone());
    collect_tool_outcome(registry.invoke("p", json!({}), ctx), |_| {})
        .await
        .unwrap();
    assert_eq!(
        *capture.0.lock().unwrap(),
        [
            ("in parent".to_owned(), "p".to_owned(), vec!["p".to_owned()]),
            (
                "in child".to_owned(),
                "c".to_owned(),
                vec!["p".to_owned(), "c".to_owned()]
            ),
        ]
    );
}
