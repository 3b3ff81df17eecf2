//! The checks an upgrade request passes before a socket opens: the Host
//! allow-list (DNS rebinding), the Origin allow-list (cross-site WebSocket
//! hijacking) and the API key.

use http::{header, request::Parts};
use subtle::ConstantTimeEq;

use super::rejection::WsRejection;

const LOOPBACK_HOSTS: [&str; 4] = ["localhost", "127.0.0.1", "[::1]", "::1"];
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// What the guard checks, prepared once per router.
#[derive(Debug)]
pub(crate) struct Guard {
    api_key: Option<String>,
    host_check: bool,
    hosts: Vec<String>,
    origins: Vec<String>,
}

/// `host[:port]` → (host, port), lowercased; IPv6 stays bracketed.
fn split_host(authority: &str) -> (String, Option<&str>) {
    let authority = authority.trim();
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, tail)) => (format!("[{ip}]"), tail.strip_prefix(':')),
            None => (authority.to_owned(), None),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host.to_owned(), Some(port)),
            _ => (authority.to_owned(), None),
        }
    };
    (host.to_ascii_lowercase(), port)
}

/// Whether an `Origin` matches a pattern `scheme://host[:port|:*]`.
fn origin_matches(origin: &str, pattern: &str) -> bool {
    let (Some((o_scheme, o_rest)), Some((p_scheme, p_rest))) =
        (origin.split_once("://"), pattern.split_once("://"))
    else {
        return origin.eq_ignore_ascii_case(pattern);
    };
    if !o_scheme.eq_ignore_ascii_case(p_scheme) {
        return false;
    }
    let (o_host, o_port) = split_host(o_rest);
    let (p_host, p_port) = split_host(p_rest);
    o_host == p_host && (p_port == Some("*") || o_port == p_port)
}

impl Guard {
    pub(crate) fn new(
        api_key: Option<String>,
        host_check: bool,
        allowed_hosts: &[String],
        allowed_origins: &[String],
    ) -> Self {
        Guard {
            api_key,
            host_check,
            hosts: LOOPBACK_HOSTS
                .iter()
                .map(|h| (*h).to_owned())
                .chain(allowed_hosts.iter().map(|h| h.trim().to_ascii_lowercase()))
                .collect(),
            origins: LOOPBACK_ORIGINS
                .iter()
                .map(|o| (*o).to_owned())
                .chain(allowed_origins.iter().map(|o| o.trim().to_owned()))
                .collect(),
        }
    }

    /// Checks an upgrade request; the rejection is its HTTP answer.
    pub(crate) fn check(&self, request: &Parts) -> Result<(), WsRejection> {
        if self.host_check {
            let host = self.check_host(request)?;
            self.check_origin(request, &host)?;
        }
        self.check_key(request)
    }

    /// Returns the (allowed) Host header.
    fn check_host(&self, request: &Parts) -> Result<String, WsRejection> {
        let mut hosts = request.headers.get_all(header::HOST).iter();
        let (Some(value), None) = (hosts.next(), hosts.next()) else {
            return Err(WsRejection::bad_request("send exactly one Host header"));
        };
        let value = value
            .to_str()
            .map_err(|_| WsRejection::bad_request("the Host header is not text"))?;
        let (host, port) = split_host(value);
        if let Some(port) = port {
            if port.parse::<u16>().is_err() {
                return Err(WsRejection::bad_request(format!(
                    "the Host header has an invalid port: {port:?}"
                )));
            }
        }
        let allowed = self.hosts.iter().any(|entry| {
            let (entry_host, entry_port) = split_host(entry);
            entry_host == host && (entry_port.is_none() || entry_port == port)
        });
        if !allowed {
            return Err(WsRejection::forbidden(format!(
                "Host {host} is not allowed; add it to the server's allowed hosts"
            )));
        }
        Ok(value.trim().to_owned())
    }

    fn check_origin(&self, request: &Parts, host: &str) -> Result<(), WsRejection> {
        let mut origins = request.headers.get_all(header::ORIGIN).iter();
        let value = match (origins.next(), origins.next()) {
            // Not a browser page: nothing to hijack.
            (None, _) => return Ok(()),
            (Some(value), None) => value,
            (Some(_), Some(_)) => {
                return Err(WsRejection::bad_request("send at most one Origin header"))
            }
        };
        let origin = value.to_str().unwrap_or("").trim();
        // The page's own origin: it asked for this (allowed) Host.
        let same_origin = ["http", "https"]
            .iter()
            .any(|scheme| origin.eq_ignore_ascii_case(&format!("{scheme}://{host}")));
        if same_origin || self.origins.iter().any(|p| origin_matches(origin, p)) {
            Ok(())
        } else {
            Err(WsRejection::forbidden(format!(
                "Origin {origin:?} is not allowed to open this WebSocket; add it to the server's allowed origins"
            )))
        }
    }

    fn check_key(&self, request: &Parts) -> Result<(), WsRejection> {
        let Some(expected) = &self.api_key else {
            return Ok(());
        };
        let header = request
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim().to_owned());
        let query = || {
            form_urlencoded::parse(request.uri.query()?.as_bytes())
                .find(|(name, _)| name == "access_token")
                .map(|(_, token)| token.into_owned())
        };
        match header.or_else(query) {
            None => Err(WsRejection::unauthorized(
                "send the server's API key as `Authorization: Bearer <key>` or `?access_token=<key>`",
            )),
            Some(token) if bool::from(token.as_bytes().ct_eq(expected.as_bytes())) => Ok(()),
            Some(_) => Err(WsRejection::unauthorized("the API key is wrong")),
        }
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

    fn guard() -> Guard {
        Guard::new(
            Some("k3y".into()),
            true,
            &["notes.internal".into(), "10.0.0.5:8808".into()],
            &[
                "https://app.example.com".into(),
                "http://dev.example:*".into(),
            ],
        )
    }

    fn status(result: Result<(), WsRejection>) -> u16 {
        result.err().map_or(200, |r| r.status().as_u16())
    }

    #[test]
    fn hosts_are_checked_against_the_allow_list() {
        let g = guard();
        let key = ("authorization", "Bearer k3y");
        for ok in [
            "127.0.0.1:8808",
            "localhost",
            "[::1]:1",
            "notes.internal:9",
            "10.0.0.5:8808",
        ] {
            assert_eq!(
                status(g.check(&parts("/ws", &[("host", ok), key]))),
                200,
                "{ok}"
            );
        }
        for bad in ["evil.example:8808", "10.0.0.5:9999", "127.0.0.2"] {
            assert_eq!(
                status(g.check(&parts("/ws", &[("host", bad), key]))),
                403,
                "{bad}"
            );
        }
        assert_eq!(
            status(g.check(&parts("/ws", &[("host", "localhost:99999"), key]))),
            400
        );
        assert_eq!(
            status(g.check(&parts(
                "/ws",
                &[("host", "localhost"), ("host", "evil"), key]
            ))),
            400
        );
        assert_eq!(status(g.check(&parts("/ws", &[key]))), 400);
    }

    #[test]
    fn origins_are_checked_when_present() {
        let g = guard();
        let check = |origin: &str| {
            status(g.check(&parts(
                "/ws",
                &[
                    ("host", "notes.internal:8808"),
                    ("origin", origin),
                    ("authorization", "Bearer k3y"),
                ],
            )))
        };
        for ok in [
            "http://notes.internal:8808",
            "http://localhost:3000",
            "https://app.example.com",
            "http://dev.example:1234",
        ] {
            assert_eq!(check(ok), 200, "{ok}");
        }
        for bad in [
            "https://evil.example",
            "null",
            "https://app.example.com:8443",
            "http://notes.internal:8809",
            "http://localhost.evil.example:3000",
        ] {
            assert_eq!(check(bad), 403, "{bad}");
        }
    }

    #[test]
    fn the_key_comes_as_a_bearer_header_or_an_access_token() {
        let g = guard();
        let host = ("host", "127.0.0.1");
        assert_eq!(status(g.check(&parts("/ws", &[host]))), 401);
        assert_eq!(
            status(g.check(&parts("/ws", &[host, ("authorization", "Bearer nope")]))),
            401
        );
        assert_eq!(
            status(g.check(&parts("/ws", &[host, ("authorization", "bearer k3y")]))),
            200
        );
        assert_eq!(
            status(g.check(&parts("/ws?access_token=k3y", &[host]))),
            200
        );
        assert_eq!(
            status(g.check(&parts("/ws?x=1&access_token=k%33y", &[host]))),
            200
        );
        assert_eq!(status(g.check(&parts("/ws?access_token=k3", &[host]))), 401);
    }

    #[test]
    fn without_host_check_only_the_key_is_checked() {
        let g = Guard::new(None, false, &[], &[]);
        assert_eq!(
            status(g.check(&parts(
                "/ws",
                &[("host", "evil"), ("origin", "https://evil")]
            ))),
            200
        );
    }
}
