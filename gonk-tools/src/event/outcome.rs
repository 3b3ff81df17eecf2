//! [`ToolOutput`] (data + display) and [`collect_tool_outcome`], which folds
//! an event stream into one outcome.

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ToolDisplay, ToolEvent};
use crate::error::{ErrorCode, ToolError};

/// A tool's result: its data, and optionally how to show it to a human.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput<T = Value> {
    /// The output data (what machines read; MCP's `structuredContent`).
    pub data: T,
    /// How a human surface should show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<ToolDisplay>,
}

impl<T> ToolOutput<T> {
    /// Data without display.
    pub fn new(data: T) -> Self {
        ToolOutput {
            data,
            display: None,
        }
    }

    /// Adds a display.
    pub fn with_display(mut self, display: impl Into<ToolDisplay>) -> Self {
        self.display = Some(display.into());
        self
    }
}

impl<T> From<T> for ToolOutput<T> {
    fn from(data: T) -> Self {
        ToolOutput::new(data)
    }
}

/// Drains an event stream into its outcome, handing every event to
/// `on_event` on the way.
///
/// A stream from [`ToolRegistry::invoke`](crate::ToolRegistry::invoke)
/// carries exactly one outcome, last (see its outcome rule), and this
/// returns it. For any other stream the same rule decides: an `error` wins
/// over any `result`; otherwise the last `result`; a stream with neither
/// gives `NO_RESULT` ("Tool produced no result").
///
/// The stream is read to its end, or until its
/// [`size_hint`](Stream::size_hint) says no item follows (a call's stream
/// says so once it gave its outcome).
pub async fn collect_tool_outcome<S>(
    events: S,
    mut on_event: impl FnMut(&ToolEvent),
) -> Result<ToolOutput<Value>, ToolError>
where
    S: Stream<Item = ToolEvent>,
{
    let mut events = std::pin::pin!(events);
    let mut result: Option<ToolOutput<Value>> = None;
    let mut error: Option<ToolError> = None;
    // Polled by hand rather than awaited event by event: one suspension
    // point, and each event moved once.
    std::future::poll_fn(|cx| loop {
        let Some(event) = std::task::ready!(events.as_mut().poll_next(cx)) else {
            return std::task::Poll::Ready(());
        };
        on_event(&event);
        match event.into_outcome() {
            Some(Ok(output)) => result = Some(output),
            Some(Err(failure)) => error = Some(failure),
            None => {}
        }
        if events.size_hint().1 == Some(0) {
            return std::task::Poll::Ready(());
        }
    })
    .await;
    if let Some(error) = error {
        return Err(error);
    }
    result.ok_or_else(|| ToolError::new(ErrorCode::NoResult, "Tool produced no result"))
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use futures::Stream;
    use serde_json::json;

    use super::collect_tool_outcome;
    use crate::event::ToolEvent;

    /// One result, then a `size_hint` that says nothing follows; polling
    /// it again panics.
    struct OneThenSaysDone(bool);

    impl Stream for OneThenSaysDone {
        type Item = ToolEvent;

        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<ToolEvent>> {
            assert!(!self.0, "polled after its size_hint said it was done");
            self.0 = true;
            Poll::Ready(Some(ToolEvent::Result {
                data: json!(5),
                display: None,
            }))
        }

        fn size_hint(&self) -> (usize, Option<usize>) {
            if self.0 {
                (0, Some(0))
            } else {
                (1, None)
            }
        }
    }

    #[tokio::test]
    async fn a_stream_that_says_it_is_done_is_not_polled_again() {
        let outcome = collect_tool_outcome(OneThenSaysDone(false), |_| {}).await;
        assert_eq!(outcome.unwrap().data, json!(5));
    }
}
