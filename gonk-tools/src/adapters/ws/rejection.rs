//! [`WsRejection`]: why an upgrade request gets no socket, as its HTTP
//! answer.

use std::fmt;

use axum::body::Body;
use axum::response::Response;
use http::{header, HeaderValue, StatusCode};

use crate::adapters::http::HttpAuthRejection;

/// The HTTP answer to an upgrade request that may not open a socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WsRejection {
    status: StatusCode,
    message: String,
    challenge: Option<String>,
}

impl WsRejection {
    /// `401 Unauthorized` (with `WWW-Authenticate: Bearer`): credentials
    /// missing, malformed or unknown.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        WsRejection {
            status: StatusCode::UNAUTHORIZED,
            message: message.into(),
            challenge: None,
        }
    }

    /// `403 Forbidden`: the request may not use this endpoint at all (a
    /// foreign Origin, a Host not allowed, valid credentials without
    /// access).
    pub fn forbidden(message: impl Into<String>) -> Self {
        WsRejection {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
            challenge: None,
        }
    }

    /// `400 Bad Request`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        WsRejection {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            challenge: None,
        }
    }

    /// `503 Service Unavailable` (with `Retry-After: 1`): the server is
    /// at its connection limit and every connection that could make room
    /// is busy.
    pub fn busy(message: impl Into<String>) -> Self {
        WsRejection {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.into(),
            challenge: None,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The message sent in the body.
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn into_response(self) -> Response {
        let reason = self.status.canonical_reason().unwrap_or("Error");
        let mut response = Response::new(Body::from(format!("{reason}: {}", self.message)));
        *response.status_mut() = self.status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        let challenge = self
            .challenge
            .as_deref()
            .and_then(|value| HeaderValue::from_str(value).ok());
        if let Some(challenge) = challenge {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, challenge);
        } else if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"ws\""),
            );
        }
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

/// The authentication hook's refusal, as the upgrade's answer.
impl From<HttpAuthRejection> for WsRejection {
    fn from(rejection: HttpAuthRejection) -> Self {
        let mut answer = if rejection.status() == StatusCode::UNAUTHORIZED {
            WsRejection::unauthorized(rejection.message())
        } else {
            WsRejection::forbidden(rejection.message())
        };
        answer.challenge = rejection.challenge().map(str::to_owned);
        answer
    }
}

impl fmt::Display for WsRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for WsRejection {}
