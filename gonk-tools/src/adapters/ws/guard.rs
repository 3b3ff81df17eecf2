//! The checks an upgrade request passes before a socket opens: the shared
//! [`HttpGuard`] (Host allow-list against DNS rebinding, Origin allow-list
//! against cross-site WebSocket hijacking, API key), with one addition of
//! the WebSocket's own — the key may come as `?access_token=`, because a
//! browser cannot set headers on a WebSocket.

use std::borrow::Cow;

use http::request::Parts;
use http::StatusCode;

use super::rejection::WsRejection;
use crate::adapters::http::{bearer_token, GuardFailure, GuardRejection, HttpGuard};

/// Checks an upgrade request; the rejection is its HTTP answer. A bearer
/// header, when present, wins over the query parameter.
pub(crate) fn check(guard: &HttpGuard, request: &Parts) -> Result<(), WsRejection> {
    guard
        .check_host_and_origin(&request.uri, &request.headers)
        .map_err(rejection)?;
    let token = match bearer_token(&request.headers).map_err(rejection)? {
        Some(token) => Some(Cow::Borrowed(token)),
        None => query_token(&request.uri),
    };
    guard.check_key(token.as_deref()).map_err(rejection)
}

/// The `access_token` query parameter (RFC 6750 §2.3), decoded.
fn query_token(uri: &http::Uri) -> Option<Cow<'_, str>> {
    form_urlencoded::parse(uri.query()?.as_bytes())
        .find(|(name, _)| name == "access_token")
        .map(|(_, token)| token)
}

fn rejection(rejection: GuardRejection) -> WsRejection {
    if rejection.failure() == GuardFailure::MissingKey {
        return WsRejection::unauthorized(
            "send the server's API key as `Authorization: Bearer <key>` or `?access_token=<key>`",
        );
    }
    match rejection.status() {
        StatusCode::UNAUTHORIZED => WsRejection::unauthorized(rejection.message()),
        StatusCode::FORBIDDEN => WsRejection::forbidden(rejection.message()),
        _ => WsRejection::bad_request(rejection.message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Request;

    fn parts(uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut request = Request::builder().uri(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn status(result: Result<(), WsRejection>) -> u16 {
        result.err().map_or(101, |r| r.status().as_u16())
    }

    #[test]
    fn the_key_comes_as_a_bearer_header_or_an_access_token() {
        let guard = HttpGuard::new().api_key("k3y");
        let host = ("host", "127.0.0.1");
        let status_of = |uri: &str, extra: &[(&str, &str)]| {
            let mut headers = vec![host];
            headers.extend_from_slice(extra);
            status(check(&guard, &parts(uri, &headers)))
        };
        assert_eq!(status_of("/ws", &[]), 401);
        assert_eq!(status_of("/ws", &[("authorization", "Bearer nope")]), 401);
        assert_eq!(status_of("/ws", &[("authorization", "bearer k3y")]), 101);
        assert_eq!(status_of("/ws?access_token=k3y", &[]), 101);
        assert_eq!(status_of("/ws?x=1&access_token=k%33y", &[]), 101);
        assert_eq!(status_of("/ws?access_token=k3", &[]), 401);
        assert_eq!(status_of("/ws?access_token=", &[]), 401);
        // The header wins: a wrong header is not rescued by the query.
        assert_eq!(
            status_of("/ws?access_token=k3y", &[("authorization", "Bearer nope")]),
            401
        );
        let missing = check_result(&guard, "/ws", &[host]);
        assert!(missing.message().contains("access_token"), "{missing}");
    }

    fn check_result(guard: &HttpGuard, uri: &str, headers: &[(&str, &str)]) -> WsRejection {
        check(guard, &parts(uri, headers)).unwrap_err()
    }

    #[test]
    fn host_and_origin_rejections_keep_their_status() {
        let guard = HttpGuard::new();
        assert_eq!(
            check_result(&guard, "/ws", &[("host", "evil.example")]).status(),
            403
        );
        assert_eq!(
            check_result(
                &guard,
                "/ws",
                &[("host", "localhost"), ("origin", "https://evil.example")]
            )
            .status(),
            403
        );
        assert_eq!(
            check_result(&guard, "/ws", &[("host", "localhost:99999")]).status(),
            400
        );
        assert_eq!(
            check_result(
                &guard,
                "/ws",
                &[("host", "localhost"), ("host", "evil.example")]
            )
            .status(),
            400
        );
    }
}
