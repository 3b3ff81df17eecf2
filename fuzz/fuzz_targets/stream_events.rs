//! A streaming handler emitting an arbitrary sequence of events (decided
//! by the input, panics and pending points included): dispatch must keep
//! the outcome rule — events before the outcome pass through in order, an
//! `error` is terminal, the last `result` wins, no outcome is `NO_RESULT`,
//! a panic is `INTERNAL` — exactly as this model predicts.
#![no_main]

use futures::StreamExt;
use gonk_tools::prelude::*;
use gonk_tools_fuzz::{assert_one_outcome_last, runtime};
use libfuzzer_sys::fuzz_target;

#[derive(Clone, Copy, Debug)]
enum Step {
    Progress(u8),
    Log(u8),
    Data(u8),
    Result(u8),
    Error(u8),
    Yield,
    Panic,
}

fn steps(data: &[u8]) -> Vec<Step> {
    data.chunks(2)
        .map(|pair| {
            let arg = pair.get(1).copied().unwrap_or(0);
            match pair[0] % 7 {
                0 => Step::Progress(arg),
                1 => Step::Log(arg),
                2 => Step::Data(arg),
                3 => Step::Result(arg),
                4 => Step::Error(arg),
                5 => Step::Yield,
                _ => Step::Panic,
            }
        })
        .collect()
}

fn event(step: Step) -> Option<ToolEvent> {
    Some(match step {
        Step::Progress(n) => ToolEvent::progress(f64::from(n % 101), None),
        Step::Log(n) => ToolEvent::log(LogLevel::Info, format!("log {n}")),
        Step::Data(n) => ToolEvent::data(json!(n)),
        Step::Result(n) => ToolEvent::result(json!(n)),
        Step::Error(n) => ToolEvent::error(ToolError::new(
            ErrorCode::custom(format!("E{n}")),
            format!("error {n}"),
        )),
        Step::Yield | Step::Panic => return None,
    })
}

/// What dispatch must stream for `steps`.
fn expected(steps: &[Step]) -> Vec<ToolEvent> {
    let mut out = Vec::new();
    let mut held = None;
    for step in steps {
        match step {
            Step::Progress(_) | Step::Log(_) | Step::Data(_) => out.push(event(*step).unwrap()),
            Step::Result(_) => held = event(*step),
            Step::Error(_) => {
                out.push(event(*step).unwrap());
                return out;
            }
            Step::Yield => {}
            Step::Panic => {
                out.push(ToolEvent::error(ToolError::internal(
                    "Tool fuzz.stream failed unexpectedly (the handler panicked)",
                )));
                return out;
            }
        }
    }
    out.push(held.unwrap_or_else(|| {
        ToolEvent::error(ToolError::new(ErrorCode::NoResult, "Tool produced no result"))
    }));
    out
}

/// The panic a fuzzed handler raises on purpose.
const FUZZED_PANIC: &str = "fuzzed panic";

fuzz_target!(
    init: {
        // libFuzzer's hook aborts on any panic; the handler's own, which
        // dispatch contains, is expected.
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&FUZZED_PANIC) {
                abort(info);
            }
        }));
    },
    |data: &[u8]| {
    let plan = steps(data);
    let script = plan.clone();
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("fuzz.stream")
                .description("Streams the fuzzer's events.")
                .raw_stream_handler(move |_input, _ctx| {
                    let script = script.clone();
                    gonk_tools::stream! {
                        for step in script {
                            match step {
                                Step::Yield => tokio::task::yield_now().await,
                                Step::Panic => std::panic::panic_any(FUZZED_PANIC),
                                step => yield event(step).unwrap(),
                            }
                        }
                    }
                })
                .build(),
        )
        .unwrap();
    let events: Vec<ToolEvent> = runtime().block_on(
        registry
            .invoke("fuzz.stream", json!({}), ToolContext::new())
            .collect(),
    );
    assert_one_outcome_last(&events);
    assert_eq!(events, expected(&plan), "steps {plan:?}");
});
