//! [`Instrumented`]: a call's event stream polled inside the call's span,
//! so the handler, its composed calls and its log lines are in it.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tracing::Span;

pin_project_lite::pin_project! {
    /// `inner`, entered into `span` on every poll. The stream is dropped
    /// before the span (field order), so what its drop records — an
    /// aborted call's outcome — lands in the span before it closes.
    pub(crate) struct Instrumented<S> {
        #[pin]
        inner: S,
        span: Span,
    }
}

impl<S> Instrumented<S> {
    pub(crate) fn new(inner: S, span: Span) -> Self {
        Instrumented { inner, span }
    }
}

impl<S: Stream> Stream for Instrumented<S> {
    type Item = S::Item;

    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.project();
        let _entered = this.span.enter();
        this.inner.poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}
