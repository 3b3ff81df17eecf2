//! HTTP pieces the adapter's layers share: a response body that reports
//! how it ended (read to its end, or dropped before — the client went
//! away), and the plain-text and JSON answers the layers give themselves.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::{header, HeaderValue, StatusCode};
use http_body::{Body as _, Frame};

/// How a response body ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyEnd {
    /// It was read to its end.
    Complete,
    /// It was dropped before its end.
    Abandoned,
}

type OnEnd = Box<dyn FnOnce(BodyEnd) + Send + Sync>;

/// A body that calls `on_end` once, when it is read to its end or dropped.
pub(crate) struct EndAware {
    inner: Body,
    on_end: Option<OnEnd>,
}

impl EndAware {
    /// Wraps `inner` as a [`Body`].
    pub(crate) fn wrap(inner: Body, on_end: impl FnOnce(BodyEnd) + Send + Sync + 'static) -> Body {
        Body::new(EndAware {
            inner,
            on_end: Some(Box::new(on_end)),
        })
    }

    fn end(&mut self, how: BodyEnd) {
        if let Some(on_end) = self.on_end.take() {
            on_end(how);
        }
    }
}

impl http_body::Body for EndAware {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let poll = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = poll {
            self.end(BodyEnd::Complete);
        }
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for EndAware {
    fn drop(&mut self) {
        let how = if self.inner.is_end_stream() {
            BodyEnd::Complete
        } else {
            BodyEnd::Abandoned
        };
        self.end(how);
    }
}

fn answer(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A plain-text answer.
pub(crate) fn plain(status: StatusCode, message: &str) -> Response {
    answer(
        status,
        "text/plain; charset=utf-8",
        Body::from(message.to_owned()),
    )
}

/// A JSON answer.
pub(crate) fn json(status: StatusCode, bytes: Vec<u8>) -> Response {
    answer(status, "application/json", Body::from(bytes))
}
