//! The `Host` header check against DNS rebinding: exactly one `Host`, a
//! well-formed authority with a valid port, a name on the allow-list, and
//! the server's own port. (rmcp checks the name only, takes the first of
//! several `Host` headers and ignores the port.)

use std::net::{IpAddr, SocketAddr};

use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, StatusCode};

use super::body::plain;

/// Loopback names, always allowed.
pub(crate) const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

#[derive(Clone, Debug, PartialEq, Eq)]
struct Allowed {
    host: String,
    /// `None`: the server's port (or any port when it is not known).
    port: Option<u16>,
}

/// Which `Host` headers a server accepts.
#[derive(Clone, Debug)]
pub(crate) struct HostPolicy {
    allowed: Vec<Allowed>,
    /// The port the server listens on, when known (standalone server).
    port: Option<u16>,
    /// A wildcard bind: the machine's own addresses and name are allowed.
    any_local_address: bool,
}

fn normalize(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn parse_entry(entry: &str) -> Option<Allowed> {
    let entry = entry.trim();
    if entry.is_empty() {
        return None;
    }
    match http::uri::Authority::try_from(entry) {
        Ok(authority) if authority.port().is_none() || authority.port_u16().is_some() => {
            Some(Allowed {
                host: normalize(authority.host()),
                port: authority.port_u16(),
            })
        }
        _ => Some(Allowed {
            host: normalize(entry),
            port: None,
        }),
    }
}

/// Whether `ip` is an address of this machine (binding it succeeds only
/// then).
fn is_local_address(ip: IpAddr) -> bool {
    ip.is_loopback() || std::net::UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// This machine's host name, lower-cased (Linux: the kernel's; Windows:
/// `COMPUTERNAME`; elsewhere `HOSTNAME` when the shell exports it).
pub(crate) fn machine_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

/// A `Host` value as (normalized host, port): `None` when it is not an
/// authority without user info, or its port is not a number in 1–65535.
fn parse_host(text: &str) -> Option<(String, Option<u16>)> {
    let authority = http::uri::Authority::try_from(text).ok()?;
    let host = authority.host();
    if host.is_empty() || authority.as_str().contains('@') {
        return None;
    }
    // What follows the host (`[::1]` keeps its brackets in the text).
    let end = authority
        .as_str()
        .rfind(']')
        .map_or(host.len(), |at| at + 1);
    let port = match &authority.as_str()[end..] {
        "" => None,
        rest => {
            let digits = rest.strip_prefix(':')?;
            let port: u16 = digits.parse().ok().filter(|p| *p != 0)?;
            if !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(port)
        }
    };
    Some((normalize(host), port))
}

impl HostPolicy {
    /// The loopback names plus `extra` (`host` or `host:port`).
    pub(crate) fn new<'a>(extra: impl IntoIterator<Item = &'a String>) -> Self {
        HostPolicy {
            allowed: LOOPBACK_HOSTS
                .iter()
                .map(|h| h.to_string())
                .chain(extra.into_iter().cloned())
                .filter_map(|entry| parse_entry(&entry))
                .collect(),
            port: None,
            any_local_address: false,
        }
    }

    /// The server listens on `addr`: ports must match it, and its address
    /// is allowed — for a wildcard bind, every address and the name of the
    /// machine.
    pub(crate) fn bound(mut self, addr: SocketAddr) -> Self {
        self.port = Some(addr.port());
        let ip = addr.ip();
        if ip.is_unspecified() {
            self.any_local_address = true;
            if let Some(name) = machine_name() {
                self.allowed.push(Allowed {
                    host: name,
                    port: None,
                });
            }
        }
        self.allowed.push(Allowed {
            host: normalize(&ip.to_string()),
            port: None,
        });
        self
    }

    fn allows(&self, host: &str, port: Option<u16>) -> bool {
        let name_ok = self.allowed.iter().any(|allowed| {
            allowed.host == host
                && match (allowed.port, port) {
                    (Some(expected), Some(port)) => expected == port,
                    (Some(_), None) => false,
                    (None, Some(port)) => self.port.is_none_or(|own| own == port),
                    (None, None) => true,
                }
        });
        name_ok
            || (self.any_local_address
                && port.is_none_or(|port| Some(port) == self.port)
                && host.parse::<IpAddr>().is_ok_and(is_local_address))
    }

    /// `Ok` for an acceptable request; otherwise its answer: `400` for
    /// several, a missing or a malformed `Host` (bad port included), `403`
    /// for a host or port not allowed.
    #[allow(clippy::result_large_err)]
    pub(crate) fn check(&self, uri: &http::Uri, headers: &HeaderMap) -> Result<(), Response> {
        let mut hosts = headers.get_all(header::HOST).iter();
        let from_uri;
        let value = match hosts.next() {
            Some(value) => value,
            // HTTP/2 carries the host as `:authority`, which a router may
            // not copy into a Host header.
            None => match uri
                .authority()
                .and_then(|a| HeaderValue::from_str(a.as_str()).ok())
            {
                Some(value) => {
                    from_uri = value;
                    &from_uri
                }
                None => {
                    return Err(plain(
                        StatusCode::BAD_REQUEST,
                        "Bad Request: missing Host header",
                    ))
                }
            },
        };
        if hosts.next().is_some() {
            return Err(plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: more than one Host header",
            ));
        }
        let (host, port) =
            value.to_str().ok().and_then(parse_host).ok_or_else(|| {
                plain(StatusCode::BAD_REQUEST, "Bad Request: invalid Host header")
            })?;
        if !self.allows(&host, port) {
            tracing::warn!(target: "gonk_tools::mcp", host = %value.to_str().unwrap_or_default(), "rejected a request with a Host that is not allowed (possible DNS rebinding)");
            return Err(plain(
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed (add the name with --allow-host / \
                 McpHttpOptions::allowed_hosts)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(hosts: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for host in hosts {
            headers.append(header::HOST, HeaderValue::from_str(host).unwrap());
        }
        headers
    }

    fn status(policy: &HostPolicy, hosts: &[&str]) -> u16 {
        match policy.check(&http::Uri::from_static("/mcp"), &headers(hosts)) {
            Ok(()) => 200,
            Err(response) => response.status().as_u16(),
        }
    }

    #[test]
    fn one_well_formed_allowed_host_on_the_servers_port() {
        let policy =
            HostPolicy::new(&["notes.example".to_owned(), "fixed.example:9000".to_owned()])
                .bound("127.0.0.1:8808".parse().unwrap());
        assert_eq!(status(&policy, &["127.0.0.1:8808"]), 200);
        assert_eq!(status(&policy, &["LOCALHOST:8808"]), 200);
        assert_eq!(status(&policy, &["[::1]:8808"]), 200);
        assert_eq!(status(&policy, &["localhost"]), 200);
        assert_eq!(status(&policy, &["notes.example:8808"]), 200);
        assert_eq!(status(&policy, &["fixed.example:9000"]), 200);
        assert_eq!(status(&policy, &["fixed.example:8808"]), 403);
        assert_eq!(status(&policy, &["fixed.example"]), 403);
        assert_eq!(status(&policy, &["localhost:8809"]), 403, "another port");
        assert_eq!(status(&policy, &["evil.example:8808"]), 403);
        assert_eq!(status(&policy, &[]), 400);
        assert_eq!(status(&policy, &["localhost:8808", "localhost:8808"]), 400);
        assert_eq!(
            status(&policy, &["localhost:8808", "evil.example:8808"]),
            400
        );
        assert_eq!(status(&policy, &["localhost:99999"]), 400);
        assert_eq!(status(&policy, &["localhost:0"]), 400);
        assert_eq!(status(&policy, &["localhost:80a"]), 400);
        assert_eq!(status(&policy, &["local host"]), 400);
        assert_eq!(status(&policy, &[":8808"]), 400);
    }

    #[test]
    fn without_a_known_port_any_port_of_an_allowed_name_passes() {
        let policy = HostPolicy::new(&[]);
        assert_eq!(status(&policy, &["localhost:1234"]), 200);
        assert_eq!(status(&policy, &["evil.example:1234"]), 403);
    }

    #[test]
    fn a_wildcard_bind_allows_the_machines_own_addresses_and_name() {
        let policy = HostPolicy::new(&[]).bound("0.0.0.0:8808".parse().unwrap());
        assert_eq!(status(&policy, &["0.0.0.0:8808"]), 200);
        assert_eq!(
            status(&policy, &["127.0.0.2:8808"]),
            200,
            "all of 127/8 is this machine"
        );
        assert_eq!(status(&policy, &["127.0.0.2:8809"]), 403);
        assert_eq!(
            status(&policy, &["192.0.2.1:8808"]),
            403,
            "TEST-NET-1 is not ours"
        );
        if let Some(name) = machine_name() {
            assert_eq!(status(&policy, &[&format!("{name}:8808")]), 200);
        }
        let specific = HostPolicy::new(&[]).bound("192.0.2.7:8808".parse().unwrap());
        assert_eq!(status(&specific, &["192.0.2.7:8808"]), 200);
        assert_eq!(status(&specific, &["127.0.0.2:8808"]), 403);
    }
}
