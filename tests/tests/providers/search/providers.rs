//! Anthropic and OpenAI tool lists with `defer_loading`: every tool
//! deferred but the two search meta-tools, which are all a model is sent
//! up front; without the option the lists are unchanged.

use gonk_tools::adapters::providers::{Anthropic, Gemini, OpenAi, Provider, ProviderTools};
use gonk_tools::prelude::*;
use serde_json::Value;

use super::catalog::registry;

const META: [&str; 2] = ["tools_search", "tools_call"];

/// The function name of an entry, wherever the provider keeps it.
fn entry_name(entry: &Value) -> &str {
    entry["name"]
        .as_str()
        .or_else(|| entry["function"]["name"].as_str())
        .expect("a named entry")
}

/// Checks `deferred` against `plain` (the same provider without the
/// option): the same entries plus `defer_loading: true` on all but the
/// meta-tools; and the undeferred part is small.
fn check<P: Provider + Clone>(registry: &ToolRegistry, provider: P) {
    let plain = ProviderTools::new(registry.clone(), provider.clone())
        .tools()
        .unwrap();
    let deferred = ProviderTools::new(registry.clone(), provider)
        .defer_loading(true)
        .tools()
        .unwrap();
    assert_eq!(plain.len(), 1002);
    assert_eq!(deferred.len(), 1002);
    assert!(
        plain.iter().all(|e| e.get("defer_loading").is_none()),
        "unchanged without the option"
    );

    let mut up_front = Vec::new();
    for (plain, deferred) in plain.iter().zip(deferred.iter()) {
        let name = entry_name(deferred);
        let mut without = deferred.clone();
        let mark = without.as_object_mut().unwrap().remove("defer_loading");
        assert_eq!(&without, plain, "{name}: only the mark differs");
        if META.contains(&name) {
            assert_eq!(mark, None, "{name} is never deferred");
            up_front.push(deferred.clone());
        } else {
            assert_eq!(mark, Some(Value::Bool(true)), "{name} is deferred");
        }
    }
    let names: Vec<&str> = up_front.iter().map(entry_name).collect();
    assert_eq!(names, META);
    // What a model loads up front: a few hundred tokens (about 4 bytes a token).
    let bytes = serde_json::to_string(&up_front).unwrap().len();
    assert!(bytes < 2_400, "the undeferred tools take {bytes} bytes");
}

#[test]
fn anthropic_and_openai_lists_defer_every_tool_but_search_and_call() {
    let registry = registry();
    check(&registry, Anthropic);
    check(&registry, OpenAi::chat_completions());
    check(&registry, OpenAi::responses());
}

#[test]
fn gemini_has_no_mark_and_is_unchanged() {
    let registry = registry();
    let plain = ProviderTools::new(registry.clone(), Gemini)
        .tools()
        .unwrap();
    let deferred = ProviderTools::new(registry, Gemini)
        .defer_loading(true)
        .tools()
        .unwrap();
    assert_eq!(plain, deferred);
}

#[tokio::test]
async fn a_model_searches_then_calls_through_the_undeferred_tools() {
    let registry = registry();
    let anthropic = ProviderTools::new(registry, Anthropic).defer_loading(true);
    let search = json!({
        "type": "tool_use", "id": "tu_1", "name": "tools_search",
        "input": {"query": "get tomorrow's rain forecast", "limit": 3},
    });
    let result = anthropic.call(&search, ToolContext::new()).await.unwrap();
    let text = result["content"][0]["text"].as_str().unwrap();
    let found: Value = serde_json::from_str(text).unwrap();
    assert_eq!(found["tools"][0]["name"], "weather.forecast_get");

    let call = json!({
        "type": "tool_use", "id": "tu_2", "name": "tools_call",
        "input": {"name": "weather.forecast_get", "arguments": {"city": "Paris"}},
    });
    let result = anthropic.call(&call, ToolContext::new()).await.unwrap();
    assert_eq!(result.get("is_error"), None, "{result}");
    let ran: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        ran,
        json!({"tool": "weather.forecast_get", "arguments": {"city": "Paris"}})
    );
}
