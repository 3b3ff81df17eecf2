//! `registry.invoke` on arbitrary JSON against a tool with nested,
//! optional and enum fields: no panic, exactly one outcome, a known code,
//! and what passes validation is what the handler saw.
#![no_main]

use futures::StreamExt;
use gonk_tools::prelude::*;
use gonk_tools_fuzz::{assert_one_outcome_last, plan_registry, runtime, KNOWN_CODES};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // Arbitrary bytes as JSON when they parse, else as one JSON string.
    let input: Value = serde_json::from_slice(data)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(data).into_owned()));
    let registry = plan_registry();
    let events: Vec<ToolEvent> = runtime().block_on(
        registry
            .invoke("plan.make", input.clone(), ToolContext::new())
            .collect(),
    );
    assert_one_outcome_last(&events);
    match events.last() {
        Some(ToolEvent::Error { code, message, .. }) => {
            assert!(KNOWN_CODES.contains(&code.as_str()), "unknown code {code}");
            // Never an echo of a huge value: messages stay small.
            assert!(message.len() < 4096, "message of {} bytes", message.len());
        }
        Some(ToolEvent::Result { data, .. }) => {
            assert_eq!(data["title"], input["title"], "the handler saw the input");
        }
        _ => unreachable!("checked above"),
    }
});
