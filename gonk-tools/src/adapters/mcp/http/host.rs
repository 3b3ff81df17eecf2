//! The shared [`HttpGuard`](crate::adapters::http::HttpGuard) in front of the MCP endpoint — `Host`, `Origin`
//! and the API key, before anything else reads the request — and the
//! endpoint's answers to what the guard or the authentication hook
//! refused. (rmcp's own Host and Origin checks are
//! off: its Host check takes the first of several `Host` headers and
//! ignores the port, and one guard for every HTTP surface keeps MCP and
//! WebSocket on the same rules.)

use axum::response::Response;
use http::{header, HeaderValue, StatusCode};

use super::body::plain;
use crate::adapters::http::{GuardRejection, HttpAuthRejection};

/// The realm of the endpoint's Bearer challenges.
const REALM: &str = "mcp";

/// A rejection as plain text (`Forbidden: …`), with the Bearer challenge
/// on a `401`.
pub(crate) fn answer(rejection: &GuardRejection) -> Response {
    let status = rejection.status();
    let reason = status.canonical_reason().unwrap_or("Error");
    let mut response = plain(status, &format!("{reason}: {}", rejection.message()));
    if let Some(challenge) = rejection
        .www_authenticate(REALM)
        .and_then(|value| HeaderValue::from_str(&value).ok())
    {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// The answer to a request the authentication hook refused: `401` with
/// the same challenge as a wrong API key, or `403`.
pub(crate) fn refused(rejection: &HttpAuthRejection) -> Response {
    let mut response = if rejection.status() == StatusCode::UNAUTHORIZED {
        invalid_token(rejection.message())
    } else {
        plain(
            rejection.status(),
            &format!("Forbidden: {}", rejection.message()),
        )
    };
    // The hook's own challenge (an OAuth resource server's) wins.
    if let Some(challenge) = rejection
        .challenge()
        .and_then(|value| HeaderValue::from_str(value).ok())
    {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// `401` for credentials the authentication hook refused, with the same
/// challenge as a wrong API key.
fn invalid_token(message: &str) -> Response {
    let mut response = plain(
        StatusCode::UNAUTHORIZED,
        &format!("Unauthorized: {message}"),
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mcp\", error=\"invalid_token\""),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::http::HttpGuard;

    fn answer_of(guard: &HttpGuard, pairs: &[(&str, &str)]) -> Response {
        let mut request = http::Request::post("/mcp");
        for (name, value) in pairs {
            request = request.header(*name, *value);
        }
        let request = request.body(()).unwrap();
        answer(&guard.check(request.uri(), request.headers()).unwrap_err())
    }

    #[test]
    fn rejections_are_plain_text_with_a_bearer_challenge_on_401() {
        let guard = HttpGuard::new().api_key("k3y");
        let missing = answer_of(&guard, &[("host", "localhost")]);
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            missing.headers()[header::WWW_AUTHENTICATE],
            "Bearer realm=\"mcp\""
        );
        let wrong = answer_of(
            &guard,
            &[("host", "localhost"), ("authorization", "Bearer no")],
        );
        assert_eq!(
            wrong.headers()[header::WWW_AUTHENTICATE],
            "Bearer realm=\"mcp\", error=\"invalid_token\""
        );
        let foreign = answer_of(&guard, &[("host", "evil.example")]);
        assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
        assert!(!foreign.headers().contains_key(header::WWW_AUTHENTICATE));
        assert_eq!(
            foreign.headers()[header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            refused(&HttpAuthRejection::unauthorized("expired")).headers()
                [header::WWW_AUTHENTICATE],
            wrong.headers()[header::WWW_AUTHENTICATE]
        );
    }
}
